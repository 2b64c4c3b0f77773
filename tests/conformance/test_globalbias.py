"""Conformance of ``globalbias``' default requests with the sentences upstream builds.

Expected side, from upstream's files in ``../shared/refdata/GlobalBias`` only (never the project's code): the
names of ``data/3_name_groups.csv`` in file order (the repeated "Wafa" of ARAB F kept), the descriptors of
``data/full_descriptors.csv`` and the three templates of upstream ``code/0_build_globalbias.py``
(``create_template``: template t takes the descriptor's ``partial_t``; read here with a regular expression from
``$STEREOPROBE_UPSTREAM_DIR/GlobalBias/code/0_build_globalbias.py``, the test skips without it), every sentence
scored once as raw text (lmppl ``LM.get_perplexity`` in
``code/5_perplexity_script.py``: no chat turn, no system message, no generated answer).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, Logprob, Logprobs, ModelOutput, ModelUsage

from stereoprobe.tasks.globalbias import globalbias
from tests.conformance._render import assert_allowed, refdata_file, render

pytestmark = pytest.mark.refdata

#: upstream's template builder (create_template), pinned at commit 29df633
TEMPLATE_SCRIPT = "GlobalBias/code/0_build_globalbias.py"
GROUPS = ["ARAB", "THAI"]  # ARAB F holds upstream's repeated name
#: a HolisticBias descriptor, the Ghavami & Peplau nonce descriptor without its article, the last row
DESCRIPTORS = ("a stutterer", "caterpillar", None)
#: scoring a given text through prompt log-probabilities: one token generated and discarded, greedy
SCORING = {"max_tokens": 1, "prompt_logprobs": 1, "temperature": 0.0}
# G20: the run's one capability probe asks both kinds of log-probabilities at once (shared by dbb + dbb_sg)
PROBE = {**SCORING, "logprobs": True, "top_logprobs": 20}
DEPARTURES = {
    "G3": "sentences batched per name group x template in one sample (one request per sentence here)",
    "G20": "one probe request before the first sentence, so a model without prompt log-probabilities stops "
           "before any paid call",
}


def _reply(messages, config) -> ModelOutput:  # type: ignore[no-untyped-def]
    """Prompt log-probabilities for every word after the first."""
    words = messages[-1].text.split()[1:]
    plp = Logprobs(content=[Logprob(token=w, logprob=-1.0) for w in words])
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content="", source="generate"),
                                  stop_reason="max_tokens", prompt_logprobs=plp)
    return ModelOutput(model="capture", choices=[choice],
                       usage=ModelUsage(input_tokens=len(words), output_tokens=1, total_tokens=len(words) + 1))


def _upstream_templates(path: Path) -> dict[int, tuple[str, str]]:
    """(template literal, descriptor column) per template number, read from the script's text."""
    text = path.read_text(encoding="utf-8").split("def create_input")[0]
    branches = re.findall(r"template_number == (\d+):\s+template = \"([^\"]*)\"\s+return template\.format\("
                          r"name=row\['firstname'\], descriptor=row\['(partial_\d)'\]\)", text)
    return {int(t): (literal, column) for t, literal, column in branches}


def test_default_requests_are_upstream_sentences(refdata: Path) -> None:
    templates = _upstream_templates(refdata_file(refdata, TEMPLATE_SCRIPT))
    assert sorted(templates) == [1, 2, 3]
    names = pd.read_csv(refdata_file(refdata, "GlobalBias/data/3_name_groups.csv"), on_bad_lines="warn")
    names = names[names["Ethnicity"].isin(GROUPS)]
    desc = pd.read_csv(refdata_file(refdata, "GlobalBias/data/full_descriptors.csv"), on_bad_lines="warn")
    rows = [int(desc.index[desc["descriptor"] == d][0]) if d else len(desc) - 1 for d in DESCRIPTORS]
    expected = Counter()
    group_of: dict[str, set[str]] = {}
    for t, (template, column) in templates.items():
        for _, n in names.iterrows():
            for r in rows:
                text = template.format(name=n["firstname"], descriptor=desc.loc[r, column])
                expected[text] += 1
                group_of.setdefault(f"{n['Ethnicity']}_{n['Gender']}:t{t}", set()).add(text)
    assert sum(expected.values()) == 2 * 2 * 10 * len(rows) * 3  # 2 ethnicities x 2 genders x 10 names

    got = render(globalbias(source=str(refdata / "GlobalBias"), groups=GROUPS, descriptors=rows), reply=_reply)
    sentences = [r for r in got if r.messages[-1][1] in expected]
    probes = [r for r in got if r.messages[-1][1] not in expected]
    assert len(probes) == 1 and probes[0].config == PROBE  # G20: the one capability probe of the run
    assert Counter(r.messages[-1][1] for r in sentences) == expected
    for r in got:
        assert [role for role, _ in r.messages] == ["user"] and r.prefill is None
    assert all(r.config == SCORING for r in sentences)
    for r in sentences:  # each sample holds one group's sentences of one template (G3)
        assert r.messages[-1][1] in group_of[str(r.sample_id)], (r.sample_id, r.messages)


def test_own_wording_sends_other_sentences(refdata: Path) -> None:
    """-T template_wording=stereoprobe: the project's own sentences, none of upstream's."""
    templates = _upstream_templates(refdata_file(refdata, TEMPLATE_SCRIPT))
    desc = pd.read_csv(refdata_file(refdata, "GlobalBias/data/full_descriptors.csv"), on_bad_lines="warn")
    names = pd.read_csv(refdata_file(refdata, "GlobalBias/data/3_name_groups.csv"), on_bad_lines="warn")
    upstream = {tmpl.format(name=n, descriptor=desc.loc[0, col]) for tmpl, col in templates.values()
                for n in names["firstname"][names["Ethnicity"] == "THAI"]}
    got = render(globalbias(source=str(refdata / "GlobalBias"), groups=["THAI"], descriptors=[0],
                            template_wording="stereoprobe"), reply=_reply)
    texts = {r.messages[-1][1] for r in got}
    assert len(texts) >= 3 * 20 and not texts & upstream


def test_departures_name_fidelity_rows() -> None:
    assert_allowed(DEPARTURES)
