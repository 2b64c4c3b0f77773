"""DBB-SG grouped by template (the default ``unit``): the same numbers as one sample per question, per-text
failures counted, and the post-processing unchanged."""

from __future__ import annotations

import pandas as pd
import pytest
from fake_model import fake_model
from inspect_ai import eval as inspect_eval

from stereoprobe.cli import main
from stereoprobe.tasks.dbb import dbb_sg

SEL = {"source": "bundled", "faithful": False, "prompt": "stereoprobe",
       "scoring": "raw", "categories": "ses,gender", "limit_templates": 2}


def _run(tmp_path, name, **kw):
    [log] = inspect_eval(dbb_sg(**SEL, **kw), model=fake_model(), display="none", log_dir=str(tmp_path / name))
    assert log.status == "success", log.error
    return log


def test_grouped_equals_per_question(tmp_path):
    per_q = _run(tmp_path, "q", unit="question")
    grouped = _run(tmp_path, "t")  # default unit=template
    assert len(per_q.samples) == 24 and len(grouped.samples) == 2
    a_q = {s.id: s.scores["dbb_sg_scorer"].value["a"] for s in per_q.samples}
    a_t = {}
    for s in grouped.samples:
        md = s.scores["dbb_sg_scorer"].metadata
        a_t.update(zip(md["question_ids"], md["a"]))
        assert s.metadata["n_texts"] == sum(2 * len(q["options"]) for q in s.metadata["sg_questions"])
        for q in s.metadata["sg_questions"]:  # per-token NLLs identical to the per-question path
            mine = s.metadata["sg_results"][q["id"]]["nll"]
            ref = next(x for x in per_q.samples if x.id == q["id"]).metadata["sg_nll"]
            assert [x for pair in mine for x in pair] == pytest.approx([x for pair in ref for x in pair], abs=1e-12)
    assert a_t == pytest.approx(a_q, abs=1e-12)
    mq, mt = per_q.results.scores[0].metrics, grouped.results.scores[0].metrics
    for k in ("count_s_ge_20", "n_instances", "n_incomplete_questions"):
        assert mq[k].value == mt[k].value
    out_q, out_t = tmp_path / "oq", tmp_path / "ot"
    assert main(["dbb", str(tmp_path / "q"), "--out", str(out_q), "--n-boot", "50", "-q"]) == 0
    assert main(["dbb", str(tmp_path / "t"), "--out", str(out_t), "--n-boot", "50", "-q"]) == 0
    for name in ("instances", "summary"):
        pd.testing.assert_frame_equal(pd.read_csv(out_q / f"{name}.csv"), pd.read_csv(out_t / f"{name}.csv"),
                                      check_dtype=False)


def test_per_text_failure_counted(tmp_path):
    var = tmp_path / "var.csv"
    # one variation of template sp01 that the fake model cannot score (no prompt log-probabilities)
    var.write_text("template_id,variation,option_a,option_b\nsp01,1,[[X]] NOLOGPROBS smiled.,[[X]] frowned.\n")
    log = _run(tmp_path, "t", variations=str(var))
    m = log.results.scores[0].metrics
    md = next(s for s in log.samples if s.id == "sp01").scores["dbb_sg_scorer"].metadata
    failed = [q for q, e in zip(md["question_ids"], md["errors"]) if e is not None]
    assert len(failed) == 12 and m["n_incomplete_questions"].value == 12  # every sp01 question (ses + gender)
    out = tmp_path / "o"
    assert main(["dbb", str(tmp_path / "t"), "--out", str(out), "--n-boot", "50", "-q"]) == 0
    summ = pd.read_csv(out / "summary.csv").query("category == 'ALL'").iloc[0]
    assert summ["n_incomplete"] == 2 + 4 and summ["n"] == 2 + 4  # sp01 instances left out, sp02 counted


@pytest.mark.slow
def test_grouped_raw_scoring_on_the_default_model(tmp_path):
    """A BPE tokenizer (the bundled default model): the grouped path scores the separator with the option, as
    the per-question path does; per-token NLLs agree within 1e-5 nats (batching noise, measured ~2e-6)."""
    sel = {"source": "bundled", "faithful": False, "prompt": "stereoprobe",
           "categories": "ses", "templates": "sp01", "scoring": "raw"}
    q, t = inspect_eval([dbb_sg(**sel, unit="question"), dbb_sg(**sel)], model="transformers/default",
                        display="none", log_dir=str(tmp_path))
    assert q.status == t.status == "success"
    got = t.samples[0].metadata["sg_results"]
    for s in q.samples:
        assert got[s.id]["error"] is None
        mine = [x for pair in got[s.id]["nll"] for x in pair]
        ref = [x for pair in s.metadata["sg_nll"] for x in pair]
        assert mine == pytest.approx(ref, abs=1e-5)
