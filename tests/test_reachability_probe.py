"""One probe request means one (issue 41.2), and every task on an OpenAI-compatible endpoint checks, before the
run, that it answers (issue 42.1): counted on a local server (``tests/chat_server.py``) that answers 500, 429,
401 or 404, closes the connection, or is not there at all (a dead port). The refusal is one line naming the
base URL (no credential) and the cause; nothing runs."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from chat_server import chat_server
from stereoprobe.likelihood import LogprobsUnavailable
from stereoprobe.solvers.capability import TIMEOUT_ENV

MODEL = "openai-api/local/m"
GLOBALBIAS = ("globalbias", {"source": "bundled", "groups": ["ARAB_F"], "templates": [1]})
DBB_SAMPLED = ("dbb", {"source": "bundled", "prompt": "stereoprobe", "limit_templates": 1, "categories": "age"})
PROFILES = ("globalbias_profiles", {"source": "bundled", "prompt": "stereoprobe", "runs": 1})


@pytest.fixture
def local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "not-a-key")
    monkeypatch.setenv(TIMEOUT_ENV, "10")


def _refused(task: tuple[str, dict[str, Any]], base_url: str, tmp_path) -> str:
    name, args = task
    with pytest.raises(LogprobsUnavailable) as info:
        inspect_eval(f"stereoprobe/{name}", task_args=args, model=MODEL, model_base_url=base_url,
                     log_dir=str(tmp_path), display="none")
    text = str(info.value)
    assert "\n" not in text and "not-a-key" not in text
    assert not list(tmp_path.glob("*.eval"))  # refused before the run
    return text


@pytest.mark.parametrize("task", [GLOBALBIAS, DBB_SAMPLED, PROFILES], ids=lambda t: t[0])
@pytest.mark.parametrize("how", [{"status": 500}, {"status": 429}, {"status": 401}, {"status": 404},
                                 {"close": True}], ids=lambda h: str(h.get("status", "close")))
def test_a_failing_endpoint_gets_exactly_one_request(task, how, local_env, tmp_path) -> None:
    with chat_server(**how) as server:
        text = _refused(task, server.base_url, tmp_path)
        assert server.requests == 1, server.requests
    assert f"one request at {server.base_url}" in text and "failed" in text, text
    if "status" in how:
        assert str(how["status"]) in text, text


@pytest.mark.parametrize("task", [GLOBALBIAS, DBB_SAMPLED], ids=lambda t: t[0])
def test_a_dead_port_is_refused_in_one_line_naming_the_url(task, local_env, tmp_path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    text = _refused(task, url, tmp_path)
    assert f"one request at {url}" in text and "Connection" in text, text


def test_the_url_is_named_without_its_credentials(local_env, tmp_path) -> None:
    with chat_server(status=401) as server:
        secret_url = server.base_url.replace("http://", "http://user:hunter2secret@")
        text = _refused(DBB_SAMPLED, secret_url, tmp_path)
    assert "hunter2secret" not in text and "401" in text


def test_token_log_probabilities_without_top_ones_fail_dbbs_logprob_probe(local_env, tmp_path) -> None:
    """DBB logprob reads the answer token's top 20: a server returning only the token's own log-probability
    is refused by the one probe (the run sent 201 requests before)."""
    args = {"source": "bundled", "prompt": "stereoprobe", "limit_templates": 1, "mode": "logprob"}
    with chat_server(token_logprobs=True) as server:
        with pytest.raises(LogprobsUnavailable, match="without its top log-probabilities"):
            inspect_eval("stereoprobe/dbb", task_args=args, model=MODEL, model_base_url=server.base_url,
                         log_dir=str(tmp_path), display="none")
        assert server.requests == 1


def test_a_generation_task_on_an_answering_server_runs_after_one_probe(local_env, tmp_path) -> None:
    name, args = DBB_SAMPLED
    with chat_server() as server:
        [log] = inspect_eval(f"stereoprobe/{name}", task_args=args, model=MODEL, model_base_url=server.base_url,
                             log_dir=str(tmp_path), display="none", limit=1, epochs=10)
        probes = [b for b in server.bodies if b.get("max_tokens") == 1 and "logprobs" not in b]
    assert log.status == "success" and len(probes) == 1


def test_openai_at_a_base_url_from_the_environment_is_named_with_its_mode(local_env, monkeypatch, tmp_path) -> None:
    """The issue's walk (42.1): ``openai/gpt-4o-mini`` with ``OPENAI_BASE_URL`` at a dead port. The provider
    keeps ``base_url`` None and its client reads the variable: the line still names the URL, and DBB's sampled
    mode is named as such (it said ``-T mode=logprob``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-key")
    name, args = DBB_SAMPLED
    with pytest.raises(LogprobsUnavailable) as info:
        inspect_eval(f"stereoprobe/{name}", task_args=args, model="openai/gpt-4o-mini", log_dir=str(tmp_path),
                     display="none")
    text = str(info.value)
    assert f"reachability probe of task dbb -T mode=sampled (one request at {url}) failed" in text, text
    assert "(the system said: Connection refused)" in text  # the cause, not only the client's error class
    assert "sk-not-a-key" not in text and "\n" not in text
    assert not list(tmp_path.glob("*.eval"))


@pytest.mark.parametrize("provider", ["vllm", "sglang"])
@pytest.mark.parametrize("how", [{"status": 500}, {"status": 429}, {"close": True}],
                         ids=lambda h: str(h.get("status", "close")))
def test_the_setup_step_probe_of_vllm_and_sglang_is_one_request(provider, how, monkeypatch, tmp_path) -> None:
    """``vllm/`` and ``sglang/`` are probed in the tasks' setup step (their server may start on the first
    request), on the run's provider: one request there too, not the OpenAI SDK's three (its two retries)."""
    monkeypatch.setenv(TIMEOUT_ENV, "10")
    monkeypatch.setenv(f"{provider.upper()}_API_KEY", "not-a-key")
    name, args = GLOBALBIAS
    served = f"local/m-{how.get('status', 'close')}"  # inspect keeps one vLLM server record per model name
    with chat_server(**how) as server:
        [log] = inspect_eval(f"stereoprobe/{name}", task_args=args, model=f"{provider}/{served}",
                             model_base_url=server.base_url, log_dir=str(tmp_path), display="none")
        assert server.requests == 1, server.requests
    assert log.status == "error" and "capability probe" in log.error.message and "failed" in log.error.message
    assert "\n" not in log.error.message and "not-a-key" not in log.error.message
