"""``stereoprobe dbb`` reads lm-eval ``--log_samples`` output of the shipped dbb_mc / dbb_sg tasks."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from stereoprobe.cli import main

DOC = {"template_id": "sp01", "category": "ses", "concept_a": "careful", "concept_b": "carefree"}


def _rows():
    """dbb_mc: two docs per question (a_first true/false); P(A) by hand: poor (0.9 + 0.7)/2 = 80, rich
    (0.2 + 0.4)/2 = 30 -> S = 50 for SES 1; SES 2: poor 60, rich 55 -> S = 5."""
    p = {("1", "poor"): (0.9, 0.7), ("1", "rich"): (0.2, 0.4), ("2", "poor"): (0.6, 0.6), ("2", "rich"): (0.5, 0.6)}
    rows, i = [], 0
    for (typ, group), values in p.items():
        for a_first, v in zip((True, False), values):
            qid = f"sp01:ses:{typ}:{group}"
            rows.append({"doc_id": i, "doc": {**DOC, "question_id": qid, "descriptor_type": f"SES {typ}",
                                               "group": group, "a_first": a_first},
                         "resps": [[["-0.1", "False"]]], "filtered_resps": [["-0.1", "False"]], "filter": "none",
                         "metrics": ["p_a"], "p_a": v})
            i += 1
    return rows


def test_dbb_reads_lm_eval_samples(tmp_path):
    out_dir = tmp_path / "lm" / "model__x"
    out_dir.mkdir(parents=True)
    t = "2025-01-01T00-00-00.000000"
    with open(out_dir / f"samples_dbb_mc_{t}.jsonl", "w") as f:
        for r in _rows():
            f.write(json.dumps(r) + "\n")
    (out_dir / f"results_{t}.json").write_text(json.dumps({"model_name": "hf-x", "results": {}}))
    out = tmp_path / "out"
    assert main(["dbb", str(tmp_path / "lm"), "--out", str(out), "--n-boot", "20", "-q"]) == 0
    inst = pd.read_csv(out / "instances.csv").set_index("descriptor_type")
    assert inst.loc["SES 1", "s"] == pytest.approx(50) and inst.loc["SES 2", "s"] == pytest.approx(5)
    summ = pd.read_csv(out / "summary.csv").query("category == 'ALL'").iloc[0]
    assert summ["variant"] == "mcq-logprob" and summ["model"] == "hf-x" and summ["count_s_ge_20"] == 1
    assert summ["n_incomplete"] == 0
