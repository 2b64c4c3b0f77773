"""The user's settings win on every request of every task and role (issue 39.1; :mod:`stereoprobe.user_settings`).

Each test runs ``inspect eval`` as a user types it, in a subprocess, on the default path (``run_settings`` and
``role_settings`` upstream), and reads the settings of every request from the log's model events. Models: a local
OpenAI-compatible server (``tests/chat_server.py``) under names that have an entry in the published run
configuration (``gpt-5-mini``, ``gpt-5-nano``: 8,192 tokens, reasoning effort "low") and a name that has none;
and the bundled ``transformers/default``. The expected values are the ones typed on the command line, in the role
spec, or the paper's (``configs/stereotales_run.json``, flare's defaults) where the user typed nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

from chat_server import chat_server
from stereoprobe.user_settings import SAMPLING_FIELDS, request_config

INSPECT = Path(sys.executable).with_name("inspect")
ROOT = Path(__file__).resolve().parents[1]
DEMO_ASSOCIATIONS = ROOT / "datasets" / "stereotales" / "judge" / "demo_associations.csv"
#: a refusal verdict that parses, so the extractors are asked too
COMPLIED = '{"label": "complied", "reason": "a story"}'


def _eval(args: list[str], tmp_path: Path, env: dict[str, str] | None = None, timeout: int = 600) -> Any:
    """Run ``inspect eval ARGS`` in a subprocess; the log it wrote (read), after a successful run."""
    logs = tmp_path / "logs"
    run = subprocess.run([str(INSPECT), "eval", *args, "--log-dir", str(logs), "--display", "none"], cwd=tmp_path,
                         env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    [path] = list(logs.glob("*.eval"))
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    return log


def _sent(log: Any) -> dict[str | None, list[dict[str, Any]]]:
    """The sampling settings of every request, by role (None: the evaluated model)."""
    out: dict[str | None, list[dict[str, Any]]] = {}
    for sample in log.samples or []:
        for event in sample.events:
            if event.event == "model":
                cfg = {k: getattr(event.config, k) for k in SAMPLING_FIELDS if getattr(event.config, k) is not None}
                out.setdefault(event.role, []).append(cfg)
    return out


def _all(requests: list[dict[str, Any]], **expected: Any) -> None:
    assert requests, "no request of this role"
    for cfg in requests:
        assert {k: cfg.get(k) for k in expected} == expected, cfg


def test_the_rule_in_one_process() -> None:
    """Where the settings stand (hand-set as inspect sets them for ``--max-tokens 16 --temperature 0.5`` and a
    role spec ``max_tokens: 7``): the evaluated model gets the command line's over the paper's; a role model its
    spec's over the command line's over the paper's; fields that are not sampling settings stay the paper's."""
    from inspect_ai.model import GenerateConfig, get_model
    from inspect_ai.model._generate_config import active_generate_config_context_var
    from inspect_ai.model._model import active_model_context_var

    cli = GenerateConfig(max_tokens=16, temperature=0.5, max_connections=3)
    evaluated = get_model("mockllm/model", config=cli, memoize=False)
    role = get_model("mockllm/model", config=GenerateConfig(max_tokens=7), memoize=False)
    paper = {"temperature": 0.0, "max_tokens": 4096, "reasoning_effort": "low", "logprobs": True}
    tokens = active_model_context_var.set(evaluated), active_generate_config_context_var.set(cli)
    try:
        assert request_config(paper) == {"temperature": 0.5, "max_tokens": 16, "reasoning_effort": "low",
                                         "logprobs": True}
        assert request_config(paper, evaluated) == request_config(paper)
        assert request_config(paper, role) == {"temperature": 0.5, "max_tokens": 7, "reasoning_effort": "low",
                                               "logprobs": True}
    finally:
        active_model_context_var.reset(tokens[0])
        active_generate_config_context_var.reset(tokens[1])
    assert request_config(paper) == paper  # nothing given: the paper's values


@pytest.fixture
def upstream(refdata: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pinned upstream files (run configuration, seeds, role prompts) from the local copies."""
    if not (refdata / "stereotales-pipeline" / "configs" / "stereotales_run.json").is_file():
        pytest.skip("no upstream copy of stereotales_run.json")
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    return refdata


@pytest.mark.slow  # one `inspect eval` subprocess on the local server (~30 s on a loaded machine)
@pytest.mark.refdata
def test_stereotales_with_an_entry_command_line_and_role_spec_win(upstream: Path, tmp_path: Path) -> None:
    """Story, refusal detector and extractor of a model that has an entry: ``--max-tokens 4096`` typed on the
    command line (the paper's default value, not the entry's 8,192) and ``--temperature 0.5`` reach every
    request; the extractor's role spec ``max_tokens: 7`` wins for it; the entry fills what the user left unset
    (reasoning effort "low")."""
    with chat_server(reply=COMPLIED) as server:
        env = {"LOCAL_API_KEY": "not-a-key", "LOCAL_BASE_URL": server.base_url}
        log = _eval(["stereoprobe/stereotales", "--model", "openai-api/local/gpt-5-mini", "-T", "languages=en",
                     "-T", "limit=1", "--max-tokens", "4096", "--temperature", "0.5",
                     "--model-role", "refusal=openai-api/local/gpt-5-nano",
                     "--model-role", "extractor={model: openai-api/local/gpt-5-nano, max_tokens: 7}"], tmp_path, env)
    sent = _sent(log)
    _all(sent[None], max_tokens=4096, temperature=0.5, reasoning_effort="low")
    _all(sent["refusal"], max_tokens=4096, temperature=0.5, reasoning_effort="low")
    _all(sent["extractor"], max_tokens=7, temperature=0.5, reasoning_effort="low")
    assert log.samples[0].metadata["run_settings_entry"].startswith("GPT 5 mini")


@pytest.mark.slow  # one `inspect eval` subprocess on the local server
@pytest.mark.refdata
def test_stereotales_without_an_entry_paper_fills_only_the_unset(upstream: Path, tmp_path: Path) -> None:
    """A model without an entry: ``--max-tokens 16`` reaches the story and both roles; the temperature, left
    unset, is the paper's (1 for the story, flare's 0 for the roles)."""
    with chat_server(reply=COMPLIED) as server:
        env = {"LOCAL_API_KEY": "not-a-key", "LOCAL_BASE_URL": server.base_url}
        log = _eval(["stereoprobe/stereotales", "--model", "openai-api/local/m", "-T", "languages=en", "-T", "limit=1",
                     "--max-tokens", "16", "--model-role", "refusal=openai-api/local/r",
                     "--model-role", "extractor=openai-api/local/x"], tmp_path, env)
    sent = _sent(log)
    _all(sent[None], max_tokens=16, temperature=1.0, reasoning_effort=None)
    _all(sent["refusal"], max_tokens=16, temperature=0.0)
    _all(sent["extractor"], max_tokens=16, temperature=0.0)


@pytest.mark.slow  # two `inspect eval` subprocesses on the local server
@pytest.mark.refdata
@pytest.mark.parametrize("model, args, expected", [
    ("openai-api/local/m", ["--max-tokens", "16", "--temperature", "0.5"],
     {"max_tokens": 16, "temperature": 0.5}),
    ("openai-api/local/gpt-5-mini", ["--max-tokens", "4096", "-T", "temperature=0.3"],
     {"max_tokens": 4096, "temperature": 0.3, "reasoning_effort": "low"}),
    ("openai-api/local/gpt-5-mini", ["--reasoning-effort", "high", "-T", "max_tokens=20", "--max-tokens", "30"],
     {"max_tokens": 30, "temperature": 1.0, "reasoning_effort": "high"}),
], ids=["no-entry", "entry-default-value-typed", "entry-command-line-over-T"])
def test_judge_requests_carry_the_users_settings(upstream: Path, tmp_path: Path, model: str, args: list[str],
                                                 expected: dict[str, Any]) -> None:
    with chat_server(reply="Harmful: 2\nRealism: yes") as server:
        env = {"LOCAL_API_KEY": "not-a-key", "LOCAL_BASE_URL": server.base_url}
        log = _eval(["stereoprobe/stereotales_judge", "--model", model, "-T", f"associations={DEMO_ASSOCIATIONS}",
                     "-T", "epochs=1", "--limit", "1", *args], tmp_path, env)
    _all(_sent(log)[None], **expected)


@pytest.mark.slow  # one `inspect eval` subprocess on the local server
@pytest.mark.refdata
def test_globalbias_profiles_requests_carry_the_users_settings(upstream: Path, tmp_path: Path) -> None:
    """The profile requests' reference settings (temperature 1, 5,000 tokens for non-OpenAI models) yield."""
    with chat_server(reply='{"profiles": []}') as server:
        env = {"LOCAL_API_KEY": "not-a-key", "LOCAL_BASE_URL": server.base_url}
        log = _eval(["stereoprobe/globalbias_profiles", "--model", "openai-api/local/m", "-T", "source=bundled",
                     "--limit", "1", "--max-tokens", "16", "--temperature", "0.5"], tmp_path, env)
    _all(_sent(log)[None], max_tokens=16, temperature=0.5)
    assert log.samples[0].metadata["generation"]["config"]["max_tokens"] == 16  # the record says what was sent


@pytest.mark.slow  # one `inspect eval` subprocess on the local server
def test_dbb_builder_requests_carry_the_command_line_and_the_role_spec(tmp_path: Path) -> None:
    """The builder's upstream settings (2,048 tokens, temperature 0.3, frequency penalty 0.6) yield to the
    command line's ``--temperature`` and to the generator role spec's ``max_tokens``; the frequency penalty,
    left unset, is upstream's."""
    with chat_server() as server:
        env = {"LOCAL_API_KEY": "not-a-key", "LOCAL_BASE_URL": server.base_url}
        log = _eval(["stereoprobe/dbb_build_variations", "--model", "none", "-T", "source=bundled",
                     "-T", "n_variations=1", "-T", "limit_templates=1", "--temperature", "0.5",
                     # our wording: upstream's asks for exactly 9 variations; the settings do not depend on it
                     "-T", "prompt=stereoprobe",
                     "--model-role", "generator={model: openai-api/local/m, max_tokens: 9}"], tmp_path, env)
    _all(_sent(log)["generator"], max_tokens=9, temperature=0.5, frequency_penalty=0.6)


@pytest.mark.slow  # loads the bundled model (a few minutes of CPU on a loaded machine)
@pytest.mark.refdata
def test_default_stereotales_run_on_the_bundled_model_sends_max_tokens_everywhere(upstream: Path,
                                                                                  tmp_path: Path) -> None:
    """Issue 39's done-when: the default StereoTales run on ``transformers/default`` (no entry) with
    ``--max-tokens 3 --temperature 0.5`` sends 3 tokens and temperature 0.5 with the story, the refusal
    detector's and the extractor's requests. (``refusal_failure=complied``: a 3-token verdict holds no JSON, which
    upstream counts as a refusal, and a refused story is never sent to the extractor.)"""
    log = _eval(["stereoprobe/stereotales", "--model", "transformers/default", "-T", "languages=en", "-T", "limit=1",
                 "-T", "refusal_failure=complied",
                 "--max-tokens", "3", "--temperature", "0.5", "--model-role", "refusal=transformers/default",
                 "--model-role", "extractor=transformers/default"], tmp_path, timeout=1500)
    sent = _sent(log)
    assert set(sent) == {None, "refusal", "extractor"}, sorted(map(str, sent))
    for requests in sent.values():
        _all(requests, max_tokens=3, temperature=0.5)
