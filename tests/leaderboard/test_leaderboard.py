"""``stereoprobe leaderboard`` end to end on synthetic probe output folders (numbers checked by hand or with
statsmodels), the summary JSON schema, the Hub export and bad inputs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from statsmodels.stats.proportion import proportion_confint

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.leaderboard import build_leaderboard
from stereoprobe.leaderboard.summary import load_schema, validate_summary

from .conftest import dbb_folder, globalbias_folder


def _metric(lb, model, probe, metric):
    m = lb.metrics
    r = m[(m["model"] == model) & (m["probe"] == probe) & (m["metric"] == metric)]
    assert len(r) == 1, (model, probe, metric)
    return r.iloc[0]


def test_headline_figures_by_hand(probe_root):
    lb = build_leaderboard([probe_root], n_boot=200)
    # StereoTales: m1's table [[60, 0], [10, 40]] gives lift (40/50)/(40/110) = 2.2 -> one association,
    # labelled harmful; m2's [[30, 20], [25, 25]] none
    assert _metric(lb, "m1", "stereotales", "associations")["estimate"] == 1
    assert _metric(lb, "m2", "stereotales", "associations")["estimate"] == 0
    assert _metric(lb, "m1", "stereotales", "harmful")["estimate"] == 1
    assert _metric(lb, "m1", "stereotales", "harmful_share")["estimate"] == 1.0
    reach = _metric(lb, "m1", "stereotales", "language_reach")
    assert reach["estimate"] == 2 and reach["ci_low"] == reach["ci_high"] == 2  # passes in en and fr
    ref = _metric(lb, "m1", "stereotales", "refusal_rate")
    lo, hi = proportion_confint(7, 100, method="wilson")
    assert ref["estimate"] == 0.07 and ref["ci_low"] == pytest.approx(lo) and ref["ci_high"] == pytest.approx(hi)
    # DBB: the ALL row as written; per category recomputed from the instances
    inst = pd.read_csv(probe_root / "dbb" / "instances.csv")
    for model in ("m1", "m2"):
        mi = inst[inst["model"] == model]
        for cat in ("age", "gender"):
            s = mi.loc[mi["category"] == cat, "s"]
            row = _metric(lb, model, "dbb", f"count_s_ge_20_{cat}")
            assert row["estimate"] == int((s >= 20).sum()) and row["ci_low"] <= row["estimate"] <= row["ci_high"]
            assert _metric(lb, model, "dbb", f"mean_s_biased_{cat}")["estimate"] == pytest.approx(s[s >= 20].mean())
        assert _metric(lb, model, "dbb", "count_s_ge_20")["estimate"] == int((mi["s"] >= 20).sum())
    # GlobalBias: flagged = scores below 0.1 in the fixture; validation accuracy 3/4 with a Wilson interval
    bs = pd.read_csv(probe_root / "globalbias" / "bias_scores.csv")
    assert _metric(lb, "m1", "globalbias", "flagged")["estimate"] == int((bs[bs["model"] == "m1"]["score"] < 0.1).sum())
    va = _metric(lb, "m1", "globalbias", "validation_accuracy")
    lo, hi = proportion_confint(3, 4, method="wilson")
    assert va["estimate"] == 0.75 and va["ci_low"] == pytest.approx(lo) and va["ci_high"] == pytest.approx(hi)
    # profiles: accuracy 0.6 on ceil(0.3 * 100) = 30 test profiles
    sv = _metric(lb, "m1", "profiles", "svm_accuracy_gender")
    lo, hi = proportion_confint(18, 30, method="wilson")
    assert sv["n"] == 30 and sv["ci_low"] == pytest.approx(lo) and sv["ci_high"] == pytest.approx(hi)
    assert _metric(lb, "m1", "profiles", "svm_p_gender")["estimate"] == 0.04


def test_wide_table_layout(probe_root):
    lb = build_leaderboard([probe_root], n_boot=50)
    cols = list(lb.wide.columns)
    assert cols[0] == "model" and list(lb.wide["model"]) == ["m1", "m2"]
    for c in cols[1:]:
        if not c.endswith(("_ci_low", "_ci_high")):
            assert f"{c}_ci_low" in cols and f"{c}_ci_high" in cols and "." in c
    assert {"dbb.count_s_ge_20", "globalbias.flagged", "stereotales.associations",
            "profiles.svm_accuracy_gender"} <= set(cols)


def test_cli_writes_every_file(probe_root, tmp_path, capsys):
    out, hub = tmp_path / "lb", tmp_path / "hub"
    assert main(["leaderboard", str(probe_root), "--out", str(out), "--n-boot", "100",
                 "--hub-eval-results", str(hub)]) == 0
    for name in ("leaderboard", "metrics", "pairwise"):
        assert (out / f"{name}.csv").is_file() and (out / f"{name}.parquet").is_file()
    wide = pd.read_parquet(out / "leaderboard.parquet")
    assert list(wide["model"]) == ["m1", "m2"]
    pw = pd.read_csv(out / "pairwise.csv")
    assert list(pw.columns[:9]) == ["probe", "metric", "model_a", "model_b", "estimate", "ci_low", "ci_high",
                                    "p_value", "q_value"]
    assert {"dbb", "globalbias", "stereotales"} <= set(pw["probe"])
    for p in sorted((out / "summary").glob("*.json")):
        validate_summary(json.loads(p.read_text()))
    html = (out / "leaderboard.html").read_text()
    assert "Model vs model" in html and "dbb.mean_s" in html
    entries = yaml.safe_load((hub / "m1" / ".eval_results" / "stereoprobe_dbb_mcq_count_s_ge_20.yaml").read_text())
    assert entries[0]["dataset"] == {"id": "stereoprobe/dbb", "task_id": "mcq_count_s_ge_20"}
    assert isinstance(entries[0]["value"], float) and "source" not in entries[0]  # no url given: no source
    assert set(entries[0]) <= {"dataset", "value", "date", "source", "notes"} and "95% CI" in entries[0]["notes"]
    assert "leaderboard.html" in capsys.readouterr().out


def test_summary_schema_rejects_bad_objects(probe_root, tmp_path):
    main(["leaderboard", str(probe_root), "--out", str(tmp_path / "lb"), "--n-boot", "20", "--quiet"])
    obj = json.loads((tmp_path / "lb" / "summary" / "m1.json").read_text())
    assert obj["schema_version"] == load_schema()["properties"]["schema_version"]["const"]
    assert obj["probes"]["dbb"]["count_s_ge_20"]["estimate"] is not None
    # pairwise entries are seen from this model: m2's entry is the negation of m1's
    m2 = json.loads((tmp_path / "lb" / "summary" / "m2.json").read_text())
    e1 = next(e for e in obj["pairwise"] if e["metric"] == "mean_s")
    e2 = next(e for e in m2["pairwise"] if e["metric"] == "mean_s")
    assert e1["estimate"] == pytest.approx(-e2["estimate"]) and e1["ci_low"] == pytest.approx(-e2["ci_high"])
    bad = json.loads(json.dumps(obj))
    bad["probes"]["dbb"]["count_s_ge_20"].pop("ci_low")
    with pytest.raises(ValueError, match="ci_low"):
        validate_summary(bad)
    bad = dict(obj, schema_version="0.9")
    with pytest.raises(ValueError):
        validate_summary(bad)


def test_labels_make_two_runs_of_one_model_two_rows(tmp_path):
    rng = np.random.default_rng(3)
    a = dbb_folder(tmp_path / "a", {"transformers/default": rng.uniform(0, 40, 20)})
    b = dbb_folder(tmp_path / "b", {"transformers/default": rng.uniform(10, 50, 20)})
    with pytest.raises(InputError, match="LABEL=PATH"):
        build_leaderboard([a, b], n_boot=10)
    lb = build_leaderboard([f"default={a}", f"t1.2={b}"], n_boot=10)
    assert sorted(lb.wide["model"]) == ["default", "t1.2"]
    assert set(lb.pairwise["model_a"]) == {"default"} and set(lb.pairwise["model_b"]) == {"t1.2"}


def test_models_only_compared_on_shared_items(tmp_path):
    root = tmp_path / "r"
    globalbias_folder(root, {"m1": np.linspace(0, 1, 40), "m2": np.linspace(0, 1, 20)})  # m2: descriptors d0..d4
    lb = build_leaderboard([root], n_boot=10)
    r = lb.pairwise[lb.pairwise["metric"] == "score"].iloc[0]
    assert r["n"] == 20


@pytest.mark.parametrize("make,message", [
    (lambda p: p, "no probe output"),
    (lambda p: p / "missing", "no such file"),
    (lambda p: (p / "f.txt").write_text("x") and p / "f.txt", "not a folder"),
])
def test_bad_inputs_exit_2_one_line(tmp_path, capsys, make, message):
    target = make(tmp_path)
    assert main(["leaderboard", str(target), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_wrong_columns_named(tmp_path, capsys):
    d = tmp_path / "gb"
    d.mkdir()
    pd.DataFrame({"model": ["m"], "group": ["g"], "descriptor": ["d"]}).to_csv(d / "bias_scores.csv", index=False)
    assert main(["leaderboard", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bias_scores.csv" in err and "score" in err


@pytest.mark.parametrize("option", [["--n-boot", "0"], ["--level", "1.5"], ["--alpha", "nan"], ["--threshold", "-1"]])
def test_bad_options_exit_2(probe_root, tmp_path, option):
    assert main(["leaderboard", str(probe_root), "--out", str(tmp_path / "o"), *option]) == 2


def test_single_model_has_no_pairwise_rows(tmp_path):
    a = dbb_folder(tmp_path, {"m": np.array([10.0, 30.0, 25.0, 5.0])}, templates=2)
    lb = build_leaderboard([a], n_boot=10)
    assert lb.pairwise.empty and list(lb.wide["model"]) == ["m"]
    assert not math.isnan(_metric(lb, "m", "dbb", "count_s_ge_20")["estimate"])


def test_empty_tables_of_a_tiny_run(tmp_path):
    # a tiny StereoTales run: no attribute pair tested, no association; the refusal rate is still reported
    from stereoprobe.tables import write_table

    d = tmp_path / "st"
    write_table(pd.DataFrame(columns=["model", "slice", "base_attribute", "base_value", "compared_attribute",
                                      "compared_value"]), d, "associations")
    (d / "pair_tests.csv").write_text("")
    write_table(pd.DataFrame([{"model": "m", "language": "all", "target_attribute": "all", "stories": 4,
                               "refused": 1}]), d, "refusal_rates")
    (d / "pair_tests.parquet").unlink(missing_ok=True)
    lb = build_leaderboard([d], n_boot=10)
    assert _metric(lb, "m", "stereotales", "refusal_rate")["estimate"] == 0.25
    assert lb.pairwise.empty


def test_profiles_paired_on_shared_test_profiles(tmp_path):
    # predictions of two models on the same 10 test profiles: A right on 8, B on 3, discordant b = 5, c = 0;
    # one profile per cluster: the paired t-test of the 0/1 differences, whose interval is the one shown
    from scipy import stats

    from stereoprobe.tables import write_table

    from .conftest import profiles_folder

    folder = profiles_folder(tmp_path, ["a", "b"])
    ca = [True] * 8 + [False] * 2
    cb = [True] * 3 + [False] * 7
    rows = [{"model": m, "target": "gender", "item_id": f"p{i}", "correct": c}
            for m, cs in (("a", ca), ("b", cb)) for i, c in enumerate(cs)]
    write_table(pd.DataFrame(rows), folder, "predictions")
    lb = build_leaderboard([tmp_path], n_boot=50)
    r = lb.pairwise[lb.pairwise["metric"] == "svm_correct_gender"].iloc[0]
    assert r["estimate"] == pytest.approx(0.5) and r["n"] == 10
    ref = stats.ttest_1samp(np.array(ca, float) - np.array(cb, float), 0.0)
    assert r["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(tuple(ref.confidence_interval(0.95)), rel=1e-10)


def test_html_matrix_of_three_models(tmp_path):
    rng = np.random.default_rng(5)
    root = tmp_path / "r"
    dbb_folder(root, {m: rng.uniform(0, 40, 20) + shift for m, shift in (("a", 0), ("b", 0), ("c", 30))})
    out = tmp_path / "lb"
    assert main(["leaderboard", str(root), "--out", str(out), "--n-boot", "50", "--quiet"]) == 0
    pw = pd.read_csv(out / "pairwise.csv")
    assert len(pw[pw["metric"] == "mean_s"]) == 3  # a-b, a-c, b-c
    html = (out / "leaderboard.html").read_text()
    assert "model (row − column)" in html and html.count("dbb.mean_s") >= 1


def test_matrix_captions_say_what_each_paired_figure_measures(tmp_path):
    """Issue 42.10: the matrices of globalbias.score (no name says what it is) and DBB-SG carry their own
    meaning; DBB-SG's is the sentence likelihood share (paper Eq. 2), not DBB's answer."""
    from stereoprobe.dbb import contract as C
    from stereoprobe.probes import registered

    rng = np.random.default_rng(7)
    root = tmp_path / "r"
    globalbias_folder(root, {m: rng.uniform(0, 1, 16) for m in ("a", "b")})
    out = tmp_path / "lb"
    assert main(["leaderboard", str(root), "--out", str(out), "--n-boot", "50", "--quiet"]) == 0
    html = (out / "leaderboard.html").read_text()
    assert "globalbias.score: mean difference of GlobalBias bias scores" in html
    [sg] = [b for d in registered() for b in d.boards if b.name == C.TASK_SG]
    assert all("sentence" in m.meaning and "answer" not in m.meaning for m in sg.headline)


def test_hub_source_url(probe_root, tmp_path):
    hub = tmp_path / "hub"
    assert main(["leaderboard", str(probe_root), "--out", str(tmp_path / "lb"), "--n-boot", "20", "--quiet",
                 "--hub-eval-results", str(hub), "--hub-source-url", "https://example.org/logs"]) == 0
    files = sorted(hub.glob("*/.eval_results/*.yaml"))
    assert files and all(yaml.safe_load(f.read_text())[0]["source"]["url"] == "https://example.org/logs"
                         for f in files)


def test_ranking_ties_share_a_rank(probe_root):
    from stereoprobe.leaderboard.report import ranking

    lb = build_leaderboard([probe_root], n_boot=10)
    r = ranking(lb.metrics, "profiles", "svm_accuracy_gender")  # both models 0.6 in the fixture
    assert list(r["rank"]) == [1, 1]
    r = ranking(lb.metrics, "stereotales", "associations")  # m2 has none (0), m1 one: lower is better
    assert list(r["model"]) == ["m2", "m1"] and list(r["rank"]) == [1, 2]


def test_threshold_from_run_info_and_conflicts(tmp_path):
    from stereoprobe.report.run_info import write_run_info

    s = np.array([10.0, 25.0, 35.0, 5.0])
    a = dbb_folder(tmp_path / "a", {"m1": s}, templates=2)
    write_run_info(a, probe="dbb", models=["m1"], settings={"threshold": 30.0})
    lb = build_leaderboard([a], n_boot=10)
    m = lb.metrics.set_index(["probe", "metric"])
    assert m.loc[("dbb", "count_s_ge_20_age"), "estimate"] + m.loc[("dbb", "count_s_ge_20_gender"), "estimate"] == 1
    lb = build_leaderboard([a], settings={"threshold": 20.0}, n_boot=10)
    m = lb.metrics.set_index(["probe", "metric"])
    assert m.loc[("dbb", "count_s_ge_20_age"), "estimate"] + m.loc[("dbb", "count_s_ge_20_gender"), "estimate"] == 2
    b = dbb_folder(tmp_path / "b", {"m2": s}, templates=2)
    write_run_info(b, probe="dbb", models=["m2"], settings={"threshold": 20.0})
    with pytest.raises(InputError, match="--threshold"):
        build_leaderboard([a, b], n_boot=10)
    assert len(build_leaderboard([a, b], settings={"threshold": 25.0}, n_boot=10).pairwise) > 0
