"""Conformance of the DBB builder's roles (``dbb_build_concepts`` on CrowS-Pairs) with upstream
``src/concept_analysis.py``.

Expected side, without the project's code: per CrowS-Pairs pair upstream asks its generator (``ChatGPT``,
temperature 0.2, the script's default) three times, ``filter_questions.txt``, ``analysis_1.txt`` (each followed
by ``\\n\\nSentence 1: <sent_more>\\nSentence 2: <sent_less>``) and ``analysis_2.txt`` (followed by
``\\n\\nContext: <explanation>``), then its grader (``ChatGPT("gpt-4o")``, temperature 0.3) once with the inline
refine prompt (``inline_prompts/concept_analysis_refine_grader.txt`` filled with the explanation and the raw
pair); every call sends the system message "You are a useful assistant." with ``max_tokens=2048, top_p=1,
frequency_penalty=0.6, presence_penalty=0`` (``src/llm_utils.py`` ``ChatGPT.getOutput``, typed here: that
file is not among the reference copies). Prompt files from ``../shared/refdata/Hidden-Bias-Benchmark``.

The instructions themselves are stereoprobe's wording (row D18); everything outside them is compared: the calls'
roles, order, system message and settings, and the data each call carries (upstream's ``Sentence 1/Sentence 2``
block verbatim at the end of the first two calls; the explanation and the pair in the last two).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput

from stereoprobe.tasks.dbb_build import dbb_build_concepts
from tests.conformance._render import assert_allowed, capture_model, refdata_file, render, text_reply
from tests.conformance.test_dbb import ROOT, SYSTEM

pytestmark = pytest.mark.refdata

CHATGPT = {"max_tokens": 2048, "top_p": 1.0, "frequency_penalty": 0.6, "presence_penalty": 0.0}
TEMPERATURE = {"generator": 0.2, "grader": 0.3}
EXPLANATION, PAIR = "EXPLANATION", "doctor;nurse"
N_PAIRS = 6
DEPARTURES = {"D18": "the builder's prompts are stereoprobe's own wording (the same steps, inputs and outputs)"}


def _upstream(refdata: Path, sent_more: str, sent_less: str) -> list[tuple[str, str]]:
    """(role, user text) of upstream's four calls for one pair whose explanation is EXPLANATION, pair PAIR.
    Each text is the instruction (D18) followed by, or filled with, the call's data."""
    def read(rel: str) -> str:
        return refdata_file(refdata, f"{ROOT}/{rel}").read_text(encoding="utf-8")

    pair = f"\n\nSentence 1: {sent_more}\nSentence 2: {sent_less}"
    grader = read("inline_prompts/concept_analysis_refine_grader.txt")
    c1, c2 = PAIR.split(";")
    return [("generator", read("src/prompt_instructions/filter_questions.txt") + pair),
            ("generator", read("src/prompt_instructions/analysis_1.txt") + pair),
            ("generator", read("src/prompt_instructions/analysis_2.txt") + f"\n\nContext: {EXPLANATION}"),
            ("grader", grader.replace("{response1}", EXPLANATION).replace("{concept1};{concept2}", f"{c1};{c2}"))]


def test_concept_roles_requests(refdata: Path) -> None:
    pairs = pd.read_csv(refdata_file(refdata, f"{ROOT}/data/crows_pairs_anonymized.csv"), index_col=0)
    task = dbb_build_concepts(source="crows_pairs", local=str(refdata / ROOT))
    samples = list(task.dataset)[:N_PAIRS]
    calls: dict[str, int] = defaultdict(int)

    def generator_reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        """Upstream's happy path per pair: "False" (keep), the explanation, the raw pair."""
        text = messages[-1].text
        key = next(str(s.input) for s in samples if str(s.input) in text or EXPLANATION in text)
        key = "pair-step" if EXPLANATION in text else key
        calls[key] += 1
        answer = PAIR if key == "pair-step" else ("False" if calls[key] == 1 else EXPLANATION)
        return text_reply(answer)(messages, config)

    received: list = []
    models = {"generator": capture_model("generator", generator_reply, received),
              "grader": capture_model("grader", text_reply(PAIR), received)}
    got = render(task, model=models["generator"], model_roles=models, sample_id=[s.id for s in samples])
    assert len(got) == 4 * N_PAIRS  # filter, explanation, pair, grader per kept pair
    by_sample: dict[str, list] = defaultdict(list)
    for r in got:
        by_sample[str(r.sample_id)].append(r)
    for s in samples:
        reqs = by_sample[str(s.id)]
        row = pairs[pairs["sent_more"] == s.input].iloc[0]
        want = _upstream(refdata, row["sent_more"], row["sent_less"])
        assert [r.role for r in reqs] == [role for role, _ in want]  # the calls in upstream's order
        pair_block = f"\n\nSentence 1: {row['sent_more']}\nSentence 2: {row['sent_less']}"
        data = [[pair_block], [pair_block], [EXPLANATION], [EXPLANATION, PAIR]]  # what each call carries
        for i, (r, (_, upstream_text)) in enumerate(zip(reqs, want)):
            assert r.prefill is None and [m[0] for m in r.messages] == ["system", "user"]
            assert r.messages[0][1] == SYSTEM
            assert r.config == {**CHATGPT, "temperature": TEMPERATURE[r.role]}, (r.role, r.config)
            text = r.messages[1][1]
            assert all(d in upstream_text for d in data[i])  # the data named here is upstream's
            if i < 2:  # upstream appends the pair block to the instruction: the same block ends our request
                assert text.endswith(pair_block), (i, text[-200:])
            assert all(d in text for d in data[i]), (i, text)
            assert text.count(row["sent_more"]) == upstream_text.count(row["sent_more"]), i


def test_departures_name_fidelity_rows() -> None:
    assert_allowed(DEPARTURES)
