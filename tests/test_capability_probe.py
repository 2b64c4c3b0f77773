"""A failed capability check costs at most one request per model and run (issue 34.1, 35.1), on every likelihood
route, counted on a local OpenAI-compatible server (``tests/chat_server.py``) that returns no log-probabilities:

- built by ``inspect eval`` (the model active): the probe is sent when the task is built, and the refusal is a
  ``PrerequisiteError`` raised out of ``eval()`` (one line on the command line) before anything runs;
- built from Python and run after (no model while building): the tasks' setup step probes once, every sample
  waits for that verdict, and the run stops before any sample's own request;
- a known chat provider is refused by its name, with no request and before any upstream download;
- an endpoint that accepts and never answers is refused after the probe's timeout, not held for minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from chat_server import chat_server
from stereoprobe.likelihood import LogprobsUnavailable
from stereoprobe.solvers.capability import PROBE_TEXT, TIMEOUT_ENV

MODEL = "openai-api/local/m"
SMALL = {"source": "bundled", "prompt": "stereoprobe", "limit_templates": 2}
#: every likelihood route: (task, its -T values) for each mode and unit
ROUTES = [
    ("globalbias", {"source": "bundled", "groups": ["ARAB"], "unit": "group"}),
    ("globalbias", {"source": "bundled", "groups": ["ARAB"], "unit": "sentence"}),
    ("dbb", {**SMALL, "mode": "logprob", "unit": "template"}),
    ("dbb", {**SMALL, "mode": "logprob", "unit": "question"}),
    ("dbb_sg", {**SMALL, "unit": "template"}),
    ("dbb_sg", {**SMALL, "unit": "question"}),
]
IDS = [f"{t}-{a.get('mode', 'prompt')}-{a['unit']}" for t, a in ROUTES]


@pytest.fixture
def local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "not-a-key")
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)


def _task(name: str, args: dict[str, Any]) -> Any:
    from stereoprobe.tasks.dbb import dbb, dbb_sg
    from stereoprobe.tasks.globalbias import globalbias

    return {"globalbias": globalbias, "dbb": dbb, "dbb_sg": dbb_sg}[name](**args)


def _probes(bodies: list[dict[str, Any]]) -> int:
    return sum(1 for b in bodies if PROBE_TEXT in str(b.get("messages", b.get("prompt"))))


@pytest.mark.parametrize("task, args", ROUTES, ids=IDS)
def test_built_by_inspect_eval_one_request_then_refused(task, args, local_env, tmp_path):
    """The task built with its model active: one probe request, then a refusal out of eval() (one line)."""
    with chat_server() as server:
        with pytest.raises(LogprobsUnavailable, match=r"returns no (prompt|token) log-probabilities") as refused:
            inspect_eval(f"stereoprobe/{task}", task_args=args, model=MODEL, model_base_url=server.base_url,
                         log_dir=str(tmp_path), display="none")
        assert server.requests == 1 and _probes(server.bodies) == 1
    assert "\n" not in str(refused.value) and "one request" in str(refused.value)
    assert not list(tmp_path.glob("*.eval"))  # refused before the run: no log


@pytest.mark.parametrize("task, args", ROUTES, ids=IDS)
def test_built_from_python_one_request_then_refused(task, args, local_env, tmp_path):
    """A task built without a model (Python): the setup step's one probe, shared by every sample, stops the run
    before any sample's own request (DBB's logprob mode sent 13 to 349 before)."""
    with chat_server() as server:
        [log] = inspect_eval(_task(task, args), model=MODEL, model_base_url=server.base_url, log_dir=str(tmp_path),
                             display="none", max_connections=8)
        assert server.requests == 1 and _probes(server.bodies) == 1
    assert log.status == "error" and "log-probabilities" in log.error.message


def test_dbb_and_dbb_sg_in_one_eval_share_one_probe(local_env, tmp_path):
    """Two likelihood tasks of one model in one eval: one probe answers both (it asks both kinds at once)."""
    with chat_server() as server:
        with pytest.raises(LogprobsUnavailable):
            inspect_eval(["stereoprobe/dbb", "stereoprobe/dbb_sg"], task_args={**SMALL, "mode": "logprob"},
                         model=MODEL, model_base_url=server.base_url, log_dir=str(tmp_path), display="none")
        assert server.requests == 1
        body = server.bodies[0]
    assert body.get("logprobs") is True and body.get("top_logprobs") == 20 and body.get("prompt_logprobs") == 1


def test_known_chat_provider_refused_by_name_before_any_download(monkeypatch, tmp_path):
    """openai/ on GlobalBias (default source: upstream data, absent offline): the provider's refusal, not the
    download's, and no request reaches the endpoint."""
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(tmp_path / "no-upstream-here"))
    with chat_server() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        for task, args in [("globalbias", {}), ("dbb_sg", {}), ("globalbias", {"source": "bundled"})]:
            with pytest.raises(LogprobsUnavailable, match=r"^openai/gpt-4o returns no prompt log-probabilities"):
                inspect_eval(f"stereoprobe/{task}", task_args=args, model="openai/gpt-4o", log_dir=str(tmp_path),
                             display="none", limit=1)
        assert server.requests == 0


def test_an_endpoint_that_never_answers_is_refused_after_the_timeout(local_env, monkeypatch, tmp_path):
    """The probe's timeout ($STEREOPROBE_PROBE_TIMEOUT, here 2 s) bounds the wait, with no retry; the bound
    asserted is generous (a loaded machine), far below inspect's own minutes of retries."""
    monkeypatch.setenv(TIMEOUT_ENV, "2")
    with chat_server(hang=True) as server:
        start = time.monotonic()
        with pytest.raises(LogprobsUnavailable, match=r"probe .* failed: no answer within 2 s"):
            inspect_eval("stereoprobe/globalbias", task_args={"source": "bundled"}, model=MODEL,
                         model_base_url=server.base_url, log_dir=str(tmp_path), display="none")
        assert time.monotonic() - start < 120
        assert server.requests == 1


def test_a_bad_timeout_setting_is_refused(local_env, monkeypatch, tmp_path):
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with chat_server() as server:
        with pytest.raises(LogprobsUnavailable, match=rf"{TIMEOUT_ENV} must be a positive number"):
            inspect_eval("stereoprobe/globalbias", task_args={"source": "bundled"}, model=MODEL,
                         model_base_url=server.base_url, log_dir=str(tmp_path), display="none")
        assert server.requests == 0


@pytest.mark.slow  # one `inspect eval` subprocess (~20 s on a loaded machine)
def test_command_line_prints_one_line_after_one_request(tmp_path):
    """``inspect eval stereoprobe/dbb stereoprobe/dbb_sg -T mode=logprob`` on the server: exit 1, one line on
    stderr naming the route, no traceback, one request."""
    inspect = Path(sys.executable).with_name("inspect")
    with chat_server() as server:
        env = {**os.environ, "LOCAL_API_KEY": "not-a-key", "LOCAL_BASE_URL": server.base_url}
        run = subprocess.run([str(inspect), "eval", "stereoprobe/dbb", "stereoprobe/dbb_sg", "-T", "mode=logprob",
                              "-T", "source=bundled", "-T", "prompt=stereoprobe", "--model", MODEL, "--log-dir",
                              str(tmp_path), "--display", "none"], env=env, capture_output=True, text=True,
                             timeout=600)
        assert server.requests == 1
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if "log-probabilities" in line]
    assert len(lines) == 1 and "task dbb -T mode=logprob" in lines[0], run.stderr[-2000:]
    assert "Traceback" not in run.stderr + run.stdout
