"""Conformance of ``stereotales_judge``' default requests with upstream's files and ``evaluate.py``'s rules.

Expected side, from the pinned upstream copies only (``../shared/refdata/``), never with the project's code:
the associations of the human study (``stereotales-human-study/data/questions.json``, 1,580, in file order),
three repetitions each (the published setting), one user message per repetition, the question order of
upstream's rule (``sha256("{model}\\n{A}\\n{a}\\n{B}\\n{b}\\n{repetition}")``, first byte even: realism first;
repetitions 0, 1, 2), and the settings ``evaluate.py`` sends: the model's entry of
``stereotales-pipeline/configs/stereotales_run.json`` with temperature 1 and 4,096 tokens where the entry has
none. The prompt's wording is stereoprobe's (row J1): upstream keeps its template in code, not in a file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage

from tests.conformance._render import assert_allowed, capture_model, refdata_file, render

pytestmark = pytest.mark.refdata

QUESTIONS = "stereotales-human-study/data/questions.json"
RUN = "stereotales-pipeline/configs/stereotales_run.json"
JUDGE_BASE = {"temperature": 1, "max_tokens": 4096}  # evaluate.py: "temperature or 1", MAX_TOKENS = 4096
REPETITIONS = 3
#: departures of the default requests, each allowed by its docs/fidelity.md row
DEPARTURES = {
    "J1": "the prompt's wording is stereoprobe's (same structure, answer lines and option spellings)",
    "J2": "the order rule hashes the inspect model name (equal to the LiteLLM id for the models checked here)",
}


def _questions(refdata: Path) -> list[tuple[str, str, str, str]]:
    raw = json.loads(refdata_file(refdata, QUESTIONS).read_text(encoding="utf-8"))
    return [(q["base_attribute"]["name"], q["base_attribute"]["value"], q["compared_attribute"]["name"],
             q["compared_attribute"]["value"]) for q in raw]


def _expected_settings(refdata: Path, litellm_model: str) -> dict[str, Any]:
    run = json.loads(refdata_file(refdata, RUN).read_text(encoding="utf-8"))
    [entry] = [e for e in run["models"] if e["litellm_model"] == litellm_model]
    out = {"temperature": entry.get("temperature") or 1, "max_tokens": entry.get("max_tokens") or 4096}
    if "budget_tokens" in (entry.get("thinking") or {}):
        out["reasoning_tokens"] = entry["thinking"]["budget_tokens"]
    if "reasoning_effort" in (entry.get("extra_body") or {}):
        out["reasoning_effort"] = entry["extra_body"]["reasoning_effort"]
    return out


def _realism_first(model: str, assoc: tuple[str, str, str, str], repetition: int) -> bool:
    raw = "\n".join([model, *assoc, str(repetition)])
    return hashlib.sha256(raw.encode()).digest()[0] % 2 == 0


def _reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
    out = ModelOutput.from_content("capture", "Harmful: 3\nYes,")  # realism read by upstream's fallback line
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


@pytest.fixture
def upstream_env(refdata: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    return refdata


def test_default_dataset_is_the_human_studys_associations(upstream_env: Path) -> None:
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    task = stereotales_judge()
    expected = _questions(upstream_env)
    assert len(expected) == 1_580
    got = [(s.metadata["base_attribute"], s.metadata["base_value"], s.metadata["compared_attribute"],
            s.metadata["compared_value"]) for s in task.dataset]
    assert got == expected
    assert task.epochs == REPETITIONS


@pytest.mark.parametrize("provider, name, litellm", [
    ("anthropic", "claude-haiku-4-5", "anthropic/claude-haiku-4-5"),  # 1,024-token thinking budget, temperature 1
    ("azure_ai", "gpt-5-mini", "azure_ai/gpt-5-mini"),  # 8,192 tokens, reasoning effort low
])
def test_default_requests(upstream_env: Path, provider: str, name: str, litellm: str) -> None:
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    questions = _questions(upstream_env)
    n = 4
    model = capture_model(name, reply=_reply, received=[], provider=provider)
    requests = render(stereotales_judge(), model=model, limit=n)
    assert len(requests) == n * REPETITIONS
    want = _expected_settings(upstream_env, litellm)
    by_sample: dict[Any, list] = {}
    for r in requests:
        by_sample.setdefault(r.sample_id, []).append(r)
    # sample id: "assoc-" + the first 16 hex digits of sha256 of the four fields joined by newlines
    ids = {"assoc-" + hashlib.sha256("\n".join(a).encode()).hexdigest()[:16]: a for a in questions[:n]}
    assert set(by_sample) == set(ids)
    for sid, reqs in by_sample.items():
        assoc = ids[sid]
        assert sorted(r.epoch for r in reqs) == [1, 2, 3]
        for r in reqs:
            [(role, text)] = r.messages
            assert role == "user" and r.prefill is None
            assert r.config == want
            assert all(v in text for v in (assoc[1], assoc[3]))
            harm_line, realism_line = text.rfind("Harmful:"), text.rfind("Realism:")
            assert (realism_line < harm_line) == _realism_first(litellm, assoc, r.epoch - 1), (assoc, r.epoch)
    assert_allowed(DEPARTURES)


def test_realism_fallback_reaches_the_score(upstream_env: Path, tmp_path: Path) -> None:
    """"Yes," parses with upstream's fallback line: the score has realism yes and no parse failure."""
    from inspect_ai import eval as inspect_eval

    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    model = capture_model("claude-haiku-4-5", reply=_reply, received=[], provider="anthropic")
    [log] = inspect_eval(stereotales_judge(epochs=1), model=model, limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    for sample in log.samples or []:
        value = next(iter(sample.scores.values())).value
        assert value["realism_yes"] == 1.0 and value["parse_failure"] == 0.0 and value["harm"] == 3.0
