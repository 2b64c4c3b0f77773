"""Incomplete units are never scored from a part: interrupted runs, their eval-retry, eval-set folders,
live metrics, and validated task parameters."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from fake_model import FakeModel
from inspect_ai import eval as inspect_eval
from inspect_ai import eval_retry, eval_set
from inspect_ai.model import get_model, modelapi

from stereoprobe.cli import main
from stereoprobe.dbb import data as D
from stereoprobe.dbb.results import compute_tables, read_responses
from stereoprobe.tasks.dbb import dbb

BUNDLED = {"source": "bundled", "faithful": False, "prompt": "stereoprobe"}
SEL = {**BUNDLED, "categories": "ses", "limit_templates": 3, "mode": "logprob", "unit": "question"}
P = {"poor": 0.9, "rich": 0.2}
_QS = D.expand(D.bundled_templates(), categories=["ses"])
_CTX_P = {q.context: P[q.group] for q in _QS}
_A_TEXTS = {q.option_a for q in _QS}
FAIL: set[str] = set()  # contexts whose "option B shown first" request fails (one option order lost)
NO_LOGPROBS: set[str] = set()  # contexts answered without token log-probabilities


class InterruptedModel(FakeModel):
    """The fake model with a fixed answer distribution (poor 0.9, rich 0.2) that fails, while ``FAIL`` holds
    a question's context, on the order that shows option B first: an interrupted logprob run."""

    def __init__(self, model_name: str = "interrupted", **kwargs) -> None:
        super().__init__(model_name, p_a=lambda c: _CTX_P[c], is_a=lambda o: o in _A_TEXTS, **kwargs)

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[override]  # noqa: A002
        text = input[-1].text
        if "Context: " not in text:  # the run's capability probe
            return await super().generate(input, tools, tool_choice, config)
        ctx = text.split("Context: ", 1)[1].split("\n", 1)[0]
        first = text.split("\na) ", 1)[1].split("\n", 1)[0]
        if ctx in FAIL and first not in _A_TEXTS:
            raise RuntimeError("simulated interruption")
        out = await super().generate(input, tools, tool_choice, config)
        if ctx in NO_LOGPROBS:  # a provider hiccup: no logprobs -> the whole grouped sample fails
            out.choices[0].logprobs = None
        return out


@modelapi(name="dbb-interrupted")
def _interrupted() -> type[InterruptedModel]:
    return InterruptedModel


def _tables(folder: Path, out: Path) -> dict[str, pd.DataFrame]:
    assert main(["dbb", str(folder), "--out", str(out), "--n-boot", "100", "--quiet"]) == 0
    return {n: pd.read_csv(out / f"{n}.csv") for n in ("summary", "instances", "questions", "runs")}


def _same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    for name in ("summary", "instances", "questions"):
        pd.testing.assert_frame_equal(a[name].reset_index(drop=True), b[name].reset_index(drop=True),
                                      check_dtype=False, obj=name)


def test_interrupted_run_and_eval_retry(tmp_path):
    model = lambda: get_model("dbb-interrupted/model", memoize=False)  # noqa: E731
    FAIL.clear()
    [full] = inspect_eval(dbb(**SEL), model=model(), display="none", log_dir=str(tmp_path / "full"))
    assert full.status == "success"
    ref = _tables(tmp_path / "full", tmp_path / "out_full")
    s_ref = ref["summary"].query("category == 'ALL'").iloc[0]
    assert s_ref["count_s_ge_20"] == 6 and s_ref["mean_s_biased"] == pytest.approx(70) and s_ref["n_incomplete"] == 0

    # interrupted: for 4 of the 12 questions one option order failed -> those questions are incomplete
    FAIL.update(q.context for q in _QS if q.template_id in ("sp01", "sp02") and q.type == 1)
    [part] = inspect_eval(dbb(**SEL), model=model(), display="none", log_dir=str(tmp_path / "run"),
                          fail_on_error=False)
    assert part.status == "success" and sum(s.error is not None for s in part.samples) == 4
    # live metrics count complete units only: 6 instances, 2 of them incomplete -> 4 counted, S = 70 each
    m = part.results.scores[0].metrics
    assert m["count_s_ge_20"].value == 4 and m["n_incomplete_questions"].value == 4
    got = _tables(tmp_path / "run", tmp_path / "out_part")
    s = got["summary"].query("category == 'ALL'").iloc[0]
    assert s["count_s_ge_20"] == 4 and s["n_incomplete"] == 2 and s["mean_s_biased"] == pytest.approx(70)
    assert got["runs"].iloc[0]["questions_incomplete"] == 4
    inc = pd.read_csv(tmp_path / "out_part" / "incomplete.csv")
    assert len(inc) == 4 and set(inc["n_epochs"]) == {1} and set(inc["expected_epochs"]) == {2}

    # eval-retry completes them: the folder (original + retry) gives the tables of the uninterrupted run
    FAIL.clear()
    [retry] = eval_retry(part, log_dir=str(tmp_path / "run"), display="none")
    assert retry.status == "success"
    _same(_tables(tmp_path / "run", tmp_path / "out_retry"), ref)


def test_cut_log_without_header_counts_never_run_questions(tmp_path):
    FAIL.clear()
    [log] = inspect_eval(dbb(**SEL), model=get_model("dbb-interrupted/model", memoize=False), display="none",
                         log_dir=str(tmp_path / "full"))
    src = Path(log.location)
    cut = tmp_path / "cut" / src.name
    cut.parent.mkdir()
    # an interrupted .eval: the journal and the first samples only (no header.json, no summaries)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(cut, "w") as zout:
        keep = [n for n in zin.namelist() if n == "_journal/start.json"
                or (n.startswith("samples/sp01:") or n.startswith("samples/sp02:ses:1"))]
        for n in keep:
            zout.writestr(n, zin.read(n))
    resp, runs = read_responses([cut.parent])
    t = compute_tables(resp, n_boot=50, runs=runs)
    s = t["summary"].query("category == 'ALL'").iloc[0]
    # sp01 (2 instances) complete; sp02:ses:1 complete, sp02:ses:2 and sp03 never ran -> 3 incomplete
    assert s["n"] == 3 and s["n_incomplete"] == 3 and s["count_s_ge_20"] == 3
    assert set(t["incomplete"]["n_epochs"]) == {0}
    assert len(t["incomplete"]) == 6


def test_eval_set_folder(tmp_path):
    FAIL.clear()
    ok, logs = eval_set([dbb(**SEL)], log_dir=str(tmp_path / "set"), model=get_model("dbb-interrupted/model"),
                        display="none")
    assert ok
    assert any(p.name in ("eval-set.json", "logs.json") for p in (tmp_path / "set").iterdir())
    got = _tables(tmp_path / "set", tmp_path / "out")
    assert got["summary"].query("category == 'ALL'").iloc[0]["count_s_ge_20"] == 6


@pytest.mark.parametrize("kw, field", [
    ({"mode": "bogus"}, "mode"),
    ({"limit_templates": -1}, "limit_templates"),
    ({"limit_templates": 0}, "limit_templates"),
    ({"temperature": float("nan")}, "temperature"),
    ({"temperature": -0.1}, "temperature"),
    ({"categories": "bogus"}, "categories"),
    ({"epochs": 0}, "epochs"),
    ({"option_order": "sideways"}, "option_order"),
    ({"threshold": 120}, "threshold"),
    ({"top_p": 0}, "top_p"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"templates": "nope"}, "templates"),
    ({"seed": -3}, "seed"),
    ({"faithful": "maybe"}, "faithful"),
])
def test_task_parameters_validated(kw, field):
    from stereoprobe.errors import InputError

    with pytest.raises(InputError, match=field):
        dbb(**{**BUNDLED, **kw})


def test_sg_parameters_validated():
    from stereoprobe.errors import InputError
    from stereoprobe.tasks.dbb import dbb_sg

    for kw, field in [({"normalisation": "x"}, "normalisation"), ({"scoring": "x"}, "scoring"),
                      ({"limit_templates": -1}, "limit_templates")]:
        with pytest.raises(InputError, match=field):
            dbb_sg(**{**BUNDLED, **kw})


def test_bad_cli_inputs_one_line(tmp_path, capsys):
    (tmp_path / "notalog.eval").write_bytes(b"garbage")
    cases = [[str(tmp_path / "missing")], [str(tmp_path / "notalog.eval")],
             [str(tmp_path), "--threshold", "nan"], [str(tmp_path), "--threshold", "101"],
             [str(tmp_path), "--n-boot", "0"], [str(tmp_path), "--top", "-1"]]
    for args in cases:
        code = main(["dbb", *args[:1], "--out", str(tmp_path / "o"), *args[1:]])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, (args, err)
        assert not (tmp_path / "o").exists()
    shutil.rmtree(tmp_path)


def test_grouped_logprob_equals_per_question_and_counts_failed_requests(tmp_path):
    """unit=template (the logprob default): the same P(A), S and tables as one sample per question; a request
    that fails marks its question failed, counted like an interrupted question."""
    FAIL.clear()
    model = lambda: get_model("dbb-interrupted/model", memoize=False)  # noqa: E731
    inspect_eval(dbb(**SEL), model=model(), display="none", log_dir=str(tmp_path / "q"))
    [g] = inspect_eval(dbb(**{**SEL, "unit": "template"}), model=model(), display="none", log_dir=str(tmp_path / "t"))
    assert g.status == "success" and len(g.samples) == 3
    assert g.results.scores[0].metrics["count_s_ge_20"].value == 6
    _same(_tables(tmp_path / "q", tmp_path / "oq"), _tables(tmp_path / "t", tmp_path / "ot"))
    FAIL.update(q.context for q in _QS if q.template_id in ("sp01", "sp02") and q.type == 1)
    [g] = inspect_eval(dbb(**{**SEL, "unit": "template"}), model=model(), display="none", log_dir=str(tmp_path / "f"))
    m = g.results.scores[0].metrics
    assert m["count_s_ge_20"].value == 4 and m["n_incomplete_questions"].value == 4
    s = _tables(tmp_path / "f", tmp_path / "of")["summary"].query("category == 'ALL'").iloc[0]
    assert s["count_s_ge_20"] == 4 and s["n_incomplete"] == 2


def test_grouped_sample_error_and_eval_retry(tmp_path):
    """unit=template: a template whose sample fails is retried by eval-retry, the finished templates are
    reused, and the folder gives the uninterrupted tables."""
    FAIL.clear()
    NO_LOGPROBS.clear()
    model = lambda: get_model("dbb-interrupted/model", memoize=False)  # noqa: E731
    grouped = {**SEL, "unit": "template"}
    inspect_eval(dbb(**grouped), model=model(), display="none", log_dir=str(tmp_path / "full"))
    ref = _tables(tmp_path / "full", tmp_path / "of")
    NO_LOGPROBS.update(q.context for q in _QS if q.template_id == "sp02")
    [part] = inspect_eval(dbb(**grouped), model=model(), display="none", log_dir=str(tmp_path / "run"),
                          fail_on_error=False)
    assert [s.id for s in part.samples if s.error is not None] == ["sp02"]
    got = _tables(tmp_path / "run", tmp_path / "op")
    assert got["runs"].iloc[0]["templates_not_scored"] == 1
    assert got["summary"].query("category == 'ALL'").iloc[0]["count_s_ge_20"] == 4
    NO_LOGPROBS.clear()
    [retry] = eval_retry(part, log_dir=str(tmp_path / "run"), display="none")
    assert retry.status == "success"
    _same(_tables(tmp_path / "run", tmp_path / "or"), ref)


def test_threshold_task_parameter_reaches_the_live_metrics(tmp_path):
    """-T threshold is used by the live metrics (S = |90 - 20| = 70 for every instance)."""
    FAIL.clear()
    NO_LOGPROBS.clear()
    counts = {}
    for th in (70, 80):
        [log] = inspect_eval(dbb(**SEL, threshold=th), model=get_model("dbb-interrupted/model", memoize=False),
                             display="none", log_dir=str(tmp_path / str(th)))
        counts[th] = log.results.scores[0].metrics["count_s_ge_20"].value
    assert counts == {70: 6, 80: 0}
