"""Conformance of ``dbb_baselines``' default requests (CrowS-Pairs) with the paper's protocol and upstream's file.

Expected side, without the project's code: every pair of ``data/crows_pairs_anonymized.csv`` (DBB's copy of
nyu-mll/crows-pairs, in ``../shared/refdata/Hidden-Bias-Benchmark``; paper §4.1.1: 1,508 questions) asked once
(§4.1.1: one reply per question) with upstream's system message and the Table 11 instruction (the bytes of
``src/prompt_instructions/evaluate_probs.txt``; Appendix D.1), its two sentences as the choices, at the
Appendix A settings. BBQ and StereoSet files are not among the reference copies.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.tasks.dbb_baselines import dbb_baselines
from tests.conformance._render import assert_allowed, refdata_file, render, text_reply
from tests.conformance.test_dbb import ROOT, SAMPLED, SYSTEM

pytestmark = pytest.mark.refdata

DEPARTURES = {"D19": "the item's layout after the instruction and the seeded order of each pair's sentences are ours "
                     "(the paper states neither; the file lists the more stereotypical sentence first)"}


def test_crows_pairs_default_requests(refdata: Path) -> None:
    pairs = pd.read_csv(refdata_file(refdata, f"{ROOT}/data/crows_pairs_anonymized.csv"), index_col=0)
    instruction = refdata_file(refdata, f"{ROOT}/src/prompt_instructions/evaluate_probs.txt").read_text(
        encoding="utf-8")
    task = dbb_baselines(benchmark="crows_pairs", source=str(refdata / ROOT))
    assert len(task.dataset) == len(pairs) == 1508 and task.epochs == 1  # one request per pair
    ids = [s.id for s in task.dataset][::8]  # every 8th pair (all 1,508 take minutes through inspect)
    got = render(task, reply=text_reply("a)"), sample_id=ids)
    assert sorted(str(r.sample_id) for r in got) == sorted(map(str, ids))
    more_first = 0
    for r in got:
        row = pairs.loc[int(str(r.sample_id).rsplit(":", 1)[1])]
        assert r.epoch == 1 and r.prefill is None and r.config == SAMPLED
        assert r.messages[0] == ("system", SYSTEM) and len(r.messages) == 2 and r.messages[1][0] == "user"
        first, second = (row["sent_more"], row["sent_less"])
        if r.messages[1][1] != f"{instruction}\n\nChoices:\na) {first}\nb) {second}":
            first, second = second, first
        else:
            more_first += 1
        assert r.messages[1][1] == f"{instruction}\n\nChoices:\na) {first}\nb) {second}", r.sample_id
    assert 0 < more_first < len(got)  # D19: the order is seeded per pair, not the file's


def test_departures_name_fidelity_rows() -> None:
    assert_allowed(DEPARTURES)
