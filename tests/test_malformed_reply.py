"""A malformed reply after a passing capability probe stops the run with one line naming the task, the sample
and the field (issue 41.2): a model that answers the probe with every log-probability and then replies without
them (``tests/fake_model.py``, ``broken_after=1``; ``tests/chat_server.py``, ``after_probe=...``), on every
likelihood route and on DBB's sampled (generation) route. Before, the run recorded one error per text and
finished, or failed its sample with inspect's traceback and exit code 0 (DBB logprob: 201 requests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

from chat_server import chat_server
from fake_model import fake_model
from stereoprobe.solvers.capability import TIMEOUT_ENV

SMALL = {"source": "bundled", "prompt": "stereoprobe", "limit_templates": 1, "categories": "age"}
#: every likelihood route (task, -T values, the field its replies must carry)
ROUTES = [
    ("globalbias", {"source": "bundled", "groups": ["ARAB"], "templates": [1], "unit": "group"}, "prompt_logprobs"),
    ("globalbias", {"source": "bundled", "groups": ["ARAB"], "templates": [1], "unit": "sentence"},
     "prompt_logprobs"),
    ("dbb", {**SMALL, "mode": "logprob", "unit": "template"}, "logprobs"),
    ("dbb", {**SMALL, "mode": "logprob", "unit": "question"}, "logprobs"),
    ("dbb_sg", {**SMALL, "scoring": "raw", "unit": "template"}, "prompt_logprobs"),
    ("dbb_sg", {**SMALL, "scoring": "raw", "unit": "question"}, "prompt_logprobs"),
]
IDS = [f"{t}-{a.get('mode', 'prompt')}-{a['unit']}" for t, a, _ in ROUTES]


def _task(name: str, args: dict[str, Any]) -> Any:
    from stereoprobe.tasks.dbb import dbb, dbb_sg
    from stereoprobe.tasks.globalbias import globalbias

    return {"globalbias": globalbias, "dbb": dbb, "dbb_sg": dbb_sg}[name](**args)


def _dbb_model(**kwargs: Any) -> Any:
    return fake_model(p_a=lambda ctx: 0.7, is_a=lambda text: True, **kwargs)


@pytest.mark.parametrize("task, args, field", ROUTES, ids=IDS)
def test_a_reply_without_log_probabilities_after_the_probe_stops_the_run(task, args, field, tmp_path):
    whole = _dbb_model()  # the same run on a model that never breaks: what the run would have sent
    [ok] = inspect_eval(_task(task, args), model=whole, log_dir=str(tmp_path / "whole"), display="none")
    assert ok.status == "success"
    broken = _dbb_model(broken_after=1)  # passes the probe (call 1), then replies without any
    [log] = inspect_eval(_task(task, args), model=broken, log_dir=str(tmp_path / "broken"), display="none")
    assert log.status == "error"
    line = log.error.message
    assert "\n" not in line and line.startswith(f"task {task}, sample ") and f"has no {field}" in line, line
    assert any(f", sample {s.id}{end}" in line for s in log.samples for end in ":,"), line  # a sample of the run
    # (the count of requests is asserted on a server, below: this in-process model answers every request of
    # the concurrent samples before the first reply is read)


@pytest.fixture
def local_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "not-a-key")
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)


@pytest.mark.parametrize("malformed, field", [("no_logprobs", "has no logprobs"), ("no_top", "has no top_logprobs"),
                                              ("null", "has no readable choices")])
def test_an_openai_compatible_server_that_breaks_after_the_probe(malformed, field, local_env, tmp_path):
    """DBB logprob on a server: the probe gets every log-probability, the questions' replies lack them."""
    with chat_server(after_probe=malformed) as server:
        [log] = inspect_eval("stereoprobe/dbb", task_args={**SMALL, "mode": "logprob"}, model="openai-api/local/m",
                             model_base_url=server.base_url, log_dir=str(tmp_path), display="none",
                             max_connections=1)
        sent = server.requests
    assert log.status == "error" and field in log.error.message, log.error.message
    assert log.error.message.startswith("task dbb, sample sp01, question sp01:age:")
    assert sent < 1 + 12  # the probe and the 6 questions x 2 orders of the whole run


@pytest.mark.parametrize("unit", ["group", "sentence"])
def test_globalbias_on_a_server_that_breaks_after_the_probe(unit, local_env, tmp_path):
    """GlobalBias: the first group whose every text comes back without prompt log-probabilities stops the run
    (one text is a per-text error, tests/test_likelihood_capability.py); one sample at a time, so the count is
    the probe and the first group (48 texts) at most, of the run's 97 (two groups) or 97 samples."""
    args = {"source": "bundled", "groups": ["ARAB"], "templates": [1], "unit": unit}
    with chat_server(after_probe="no_logprobs") as server:
        [log] = inspect_eval("stereoprobe/globalbias", task_args=args, model="openai-api/local/m",
                             model_base_url=server.base_url, log_dir=str(tmp_path), display="none",
                             max_connections=1, max_samples=1)
        sent = server.requests
    assert log.status == "error" and "has no prompt_logprobs" in log.error.message, log.error.message
    assert log.error.message.startswith("task globalbias, sample ARAB_")
    assert sent <= 1 + 48 + 1 < 97  # (one request of the next sample may be under way when the first stops)


def test_a_generation_task_stops_at_a_reply_it_cannot_read(local_env, tmp_path):
    """DBB sampled: after the reachability probe, ``choices: null`` (the provider cannot read it)."""
    with chat_server(after_probe="null") as server:
        [log] = inspect_eval("stereoprobe/dbb", task_args=SMALL, model="openai-api/local/m",
                             model_base_url=server.base_url, log_dir=str(tmp_path), display="none",
                             max_connections=1)
        sent = server.requests
    assert log.status == "error" and "has no readable choices (reading it raised TypeError)" in log.error.message
    assert log.error.message.startswith("task dbb, sample sp01:age:")
    assert sent < 1 + 6  # the probe and the 6 questions of the whole run


@pytest.mark.slow  # one `inspect eval` subprocess per case (~20 s each on a loaded machine)
@pytest.mark.parametrize("display", ["none", "full"])
def test_command_line_one_line_exit_1_no_traceback(display, tmp_path):
    inspect = Path(sys.executable).with_name("inspect")
    with chat_server(after_probe="no_logprobs") as server:
        env = {**os.environ, "LOCAL_API_KEY": "not-a-key", "LOCAL_BASE_URL": server.base_url}
        run = subprocess.run([str(inspect), "eval", "stereoprobe/dbb", "-T", "mode=logprob", "-T", "source=bundled",
                              "-T", "prompt=stereoprobe", "-T", "limit_templates=1", "-T", "categories=age",
                              "--model", "openai-api/local/m", "--log-dir", str(tmp_path), "--display", display,
                              "--max-connections", "1"], env=env, capture_output=True, text=True, timeout=600)
        sent = server.requests
    assert run.returncode == 1, (run.returncode, run.stderr[-2000:])
    lines = [line for line in run.stderr.splitlines() if "MalformedReply" in line]
    assert len(lines) == 1 and lines[0].startswith("MalformedReply: task dbb, sample sp01, question sp01:age:")
    assert "has no logprobs" in lines[0]
    assert "Traceback" not in run.stderr + run.stdout and "solvers/dbb.py" not in run.stdout
    assert sent < 1 + 12
