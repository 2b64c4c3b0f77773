"""What ``stereoprobe dbb`` reads from its logs: values outside their domain are one line naming the file, the
sample and the field; two configurations of one model (another seed) are never pooled; a sampled run with
fewer epochs than the protocol's 10 (paper §5) is flagged in the runs table, the console and run_info."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from eval_edit import edit_eval, set_path
from fake_model import fake_model
from inspect_ai import eval as inspect_eval

from stereoprobe.cli import main
from stereoprobe.dbb import data as D
from stereoprobe.tasks.dbb import dbb

SEL = {"source": "bundled", "faithful": False, "prompt": "stereoprobe",
       "categories": "ses", "limit_templates": 2, "unit": "question"}
_QS = D.expand(D.bundled_templates(), categories=["ses"])
_A_TEXTS = {q.option_a for q in _QS}


def _model():
    """The fake model answering option A with probability 0.7 (sampled answers with a fixed seed)."""
    return fake_model(p_a=lambda context: 0.7, is_a=lambda option: option in _A_TEXTS, seed=1)


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("dbb")
    [lp] = inspect_eval(dbb(**SEL, mode="logprob"), model=_model(), log_dir=str(d / "logprob"), display="none")
    sampled = dbb(**SEL, mode="sampled")
    sampled._epochs_bounds = (1, None, "")  # a log as older versions let --epochs 2 write (now refused at run time)
    [sm] = inspect_eval(sampled, model=_model(), log_dir=str(d / "sampled"), display="none",
                        epochs=2)  # inspect's --epochs overrides the task's 10
    assert lp.status == sm.status == "success"
    return {"logprob": Path(lp.location), "sampled": Path(sm.location)}


def _first_sample(field: str, value):
    done: list[str] = []

    def edit(name, s):
        if not done:
            done.append(name)
            set_path(s, field, value)
        return s

    return edit


# (case, dotted field of the first sample, value, fragment of the one error line)
BAD_VALUES = [
    ("p_a-above-1", "scores.dbb_mcq_scorer.value.a", 1.7, "score field 'a' is 1.7, expected a number in [0, 1]"),
    ("p_a-negative", "scores.dbb_mcq_scorer.value.a", -0.2, "score field 'a' is -0.2"),
    ("p_a-as-text", "scores.dbb_mcq_scorer.value.a", "0.5", "score field 'a' is '0.5'"),
    ("valid-above-1", "scores.dbb_mcq_scorer.value.valid", 2, "score field 'valid' is 2"),
    ("score-value-null", "scores.dbb_mcq_scorer.value", None, "has no value"),
    ("score-value-a-number", "scores.dbb_mcq_scorer.value", 0.5, "unexpected score value 0.5"),
    ("integer-sample-id", "id", 7, "sample id 7 is a int, expected text"),
    ("metadata-null", "metadata", None, "field 'metadata' is null"),
]


@pytest.mark.parametrize("case,field,value,fragment", BAD_VALUES, ids=[c[0] for c in BAD_VALUES])
def test_values_outside_their_domain_are_one_line(logs, tmp_path, capsys, case, field, value, fragment) -> None:
    bad = edit_eval(logs["logprob"], tmp_path / "logs" / f"{case}.eval", sample=_first_sample(field, value))
    rc = main(["dbb", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--n-boot", "10"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, lines
    assert str(bad) in lines[0] and fragment in lines[0], lines[0]
    assert not (tmp_path / "out").exists()


def test_two_seeds_of_one_model_are_refused(logs, tmp_path, capsys) -> None:
    a = edit_eval(logs["logprob"], tmp_path / "logs" / "seed0.eval")
    b = edit_eval(logs["logprob"], tmp_path / "logs" / "seed1.eval",
                  header=lambda h: set_path(h, "eval.task_args.seed", 1))
    assert main(["dbb", str(tmp_path / "logs"), "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert str(a) in line and str(b) in line and "task_args.seed (0 vs 1)" in line.replace("(1 vs 0)", "(0 vs 1)")
    assert not (tmp_path / "out").exists()


def test_modes_of_one_model_stay_two_variants(logs, tmp_path) -> None:
    out = tmp_path / "out"
    assert main(["dbb", str(logs["logprob"]), str(logs["sampled"]), "--out", str(out), "--n-boot", "10",
                 "--quiet"]) == 0
    runs = pd.read_csv(out / "runs.csv")
    assert sorted(runs["variant"]) == ["mcq-logprob", "mcq-sampled"]


def test_a_sampled_run_below_the_protocol_epochs_is_flagged(logs, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["dbb", str(logs["sampled"]), "--out", str(out), "--n-boot", "10"]) == 0
    stdout = capsys.readouterr().out
    runs = pd.read_csv(out / "runs.csv", keep_default_na=False)
    [note] = runs["protocol"]
    assert note == "WARNING: 2 epochs per question; the sampled protocol needs 10"
    assert note in stdout
    info = json.loads((out / "run_info.json").read_text())
    assert any(note in w for w in info["settings"]["warnings"])
    assert main(["dbb", str(logs["logprob"]), "--out", str(tmp_path / "o2"), "--n-boot", "10", "--quiet"]) == 0
    assert pd.read_csv(tmp_path / "o2" / "runs.csv", keep_default_na=False)["protocol"].tolist() == [""]


def test_a_nan_share_is_unscored_not_zero(logs, tmp_path, capsys) -> None:
    """Issue 34.3: a NaN ``a`` in one epoch was summed as 0 (a question's P(A) 49.3 became 0.0). It is left out
    as unscored: its question is incomplete (P(A) empty, listed in incomplete.csv), counted in runs.csv, on the
    console and in the report; every other question keeps its P(A)."""
    clean = tmp_path / "clean"
    assert main(["dbb", str(logs["logprob"]), "--out", str(clean), "--n-boot", "10", "--quiet"]) == 0
    edited: list[str] = []

    def nan_first(name, s):
        if not edited:
            edited.append(str(s["id"]))
            s["scores"]["dbb_mcq_scorer"]["value"]["a"] = float("nan")
        return s

    bad = edit_eval(logs["logprob"], tmp_path / "logs" / "nan.eval", sample=nan_first)
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["dbb", str(bad), "--out", str(out), "--n-boot", "10"]) == 0
    stdout = capsys.readouterr().out
    [qid] = edited
    before = pd.read_csv(clean / "questions.csv").set_index("question_id")
    after = pd.read_csv(out / "questions.csv").set_index("question_id")
    assert before.loc[qid, "p_a"] > 0 and pd.isna(after.loc[qid, "p_a"])  # not 0.0
    others = before.index.drop(qid)
    assert (after.loc[others, "p_a"] == before.loc[others, "p_a"]).all()
    assert qid in set(pd.read_csv(out / "incomplete.csv")["question_id"].astype(str))
    assert pd.read_csv(out / "runs.csv")["unscored"].tolist() == [1]
    assert "1 response(s) without a number (NaN share or validity) left out as unscored" in stdout
    assert "1 response(s) had no number" in (out / "report.html").read_text(encoding="utf-8")
