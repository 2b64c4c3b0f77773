"""What DBB's logprob mode needs, as the code asks it, is what every document says (issue 35.11): the first
answer token's top log-probabilities (``logprobs``), not prompt log-probabilities (which DBB-SG needs)."""

from __future__ import annotations

import re
from pathlib import Path

from stereoprobe.likelihood import logprob_requirement

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_tasks_ask_for_answer_token_and_prompt_logprobs() -> None:
    from tasks.dbb import dbb, dbb_sg

    common = {"source": "bundled", "prompt": "stereoprobe", "limit_templates": 1, "categories": "age"}
    assert logprob_requirement(dbb(mode="logprob", **common).config) == "token"
    assert logprob_requirement(dbb_sg(**common).config) == "prompt"


def test_no_document_says_logprob_mode_needs_prompt_logprobs() -> None:
    wrong = []
    for doc in DOCUMENTS:
        text = re.sub(r"\s+", " ", doc.read_text(encoding="utf-8"))
        for sentence in re.split(r"(?<=[.:;])\s+(?=[A-Z`(])", text):
            if "mode=logprob" in sentence and re.search(r"needs? prompt log-?prob", sentence):
                wrong.append(f"{doc.name}: {sentence[:160]}")
    assert not wrong, wrong
