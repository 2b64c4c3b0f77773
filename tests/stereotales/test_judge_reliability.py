"""Agreement among human raters and among LLM judges, provider counts, and the report's empty-data lines."""

from __future__ import annotations

from functools import partial

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from stereoprobe.stereotales.judge.ratings import provider_counts, provider_of
from stereoprobe.stereotales.judge.reliability import (
    HUMAN_GROUP,
    LLM_GROUP,
    rater_reliability,
    single_llm_ratings,
    split_half,
)
from stereoprobe.stereotales.judge.api import analyze, write
from stereoprobe.tasks.stereotales_judge import stereotales_judge as published_stereotales_judge

# mock judges, offline: flare's base settings (temperature 1, 4096 tokens) without the pinned run configuration;
# the per-model settings and the published prompt are checked by tests/conformance/test_stereotales_judge.py
stereotales_judge = partial(published_stereotales_judge, run_settings="none", prompt="bundled")

NAN = math.nan
# Krippendorff (2011), example C: 4 coders x 12 units; published alpha interval 0.849, ordinal 0.815.
EXAMPLE_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def _human_long(data) -> pd.DataFrame:
    rows = [(f"p{c}", f"assoc-{u:02d}", v) for c, coder in enumerate(data) for u, v in enumerate(coder) if v == v]
    return pd.DataFrame(rows, columns=["participant_id", "association_id", "harm"])


def test_split_half_matches_exhaustive_enumeration():
    # 6 items x 3 ratings: every assignment of each item's ratings to halves (sizes 1 and 2), enumerated.
    items = {"a": [1, 2, 2], "b": [3, 4, 5], "c": [2, 2, 3], "d": [5, 4, 5], "e": [1, 1, 2], "f": [4, 3, 3]}
    per_item = [[(v[i], (sum(v) - v[i]) / 2) for i in range(3)] for v in items.values()]
    exact = []
    for combo in itertools.product(*per_item):
        a, b = np.array([c[0] for c in combo]), np.array([c[1] for c in combo])
        r = np.corrcoef(a, b)[0, 1]
        exact.append(2 * r / (1 + r))
    long = pd.DataFrame([(f"r{i}", k, x) for k, v in items.items() for i, x in enumerate(v)], columns=["rater", "item", "value"])
    est, lo, hi, k = split_half(long, n_splits=4000, seed=1)
    assert k == 6 and est == pytest.approx(float(np.mean(exact)), abs=0.01)  # Monte Carlo error ~ sd/sqrt(4000)
    assert lo <= est <= hi


def test_split_half_identical_halves_and_too_few_items():
    long = pd.DataFrame({"rater": ["x", "y"] * 4, "item": list("aabbccdd"), "value": [1, 1, 2, 2, 4, 4, 5, 5]})
    assert split_half(long, n_splits=10)[0] == pytest.approx(1.0)
    assert math.isnan(split_half(long[long.item.isin(["a", "b"])], n_splits=10)[0])


def test_rater_reliability_human_matches_published_alpha():
    human = _human_long(EXAMPLE_C)
    ratings = pd.DataFrame({"evaluator": ["m/a", "m/b", "m/a", "m/b"], "association_id": ["x", "x", "y", "y"],
                            "epoch": [1, 1, 1, 1], "harm": [1.0, 2.0, 4.0, 5.0]})
    rel = rater_reliability(ratings, human, threshold=3, n_resamples=200, n_splits=50)
    h = rel[rel.group == HUMAN_GROUP].set_index("measure")
    interval = h.loc[h.index.str.startswith("krippendorff_alpha_interval")].iloc[0]
    ordinal = h.loc[h.index.str.startswith("krippendorff_alpha_ordinal")].iloc[0]
    assert interval.estimate == pytest.approx(0.849, abs=5e-4) and ordinal.estimate == pytest.approx(0.815, abs=5e-4)
    assert interval.ci_low <= interval.estimate <= interval.ci_high
    assert interval.n_items == 11 and interval.n_raters == 4 and interval.n_ratings == 41
    # LLM judges: two judges on two items; ratings (1, 2) and (4, 5): interval alpha by hand.
    # values 1,2,4,5 each n_c = 1 ... coincidences o_12 = o_21 = 1, o_45 = o_54 = 1; n = 4
    # D_o = sum o_ck (c-k)^2 = 4 * 1; D_e = sum n_c n_k (c-k)^2 = 2 * (1+9+16+4+9+1) = 80 -> alpha = 1 - 3 * 4 / 80
    llm = rel[rel.group == LLM_GROUP].set_index("measure")
    assert llm.loc[llm.index.str.startswith("krippendorff_alpha_interval")].estimate.iloc[0] == pytest.approx(1 - 12 / 80)


def test_rater_reliability_binary_labels_against_package():
    kp = pytest.importorskip("krippendorff")  # optional test-only reference
    human = _human_long(EXAMPLE_C)
    ratings = pd.DataFrame({"evaluator": ["m/a"], "association_id": ["x"], "epoch": [1], "harm": [3.0]})
    rel = rater_reliability(ratings, human, threshold=3, n_resamples=0, n_splits=0)
    nominal = rel[(rel.group == HUMAN_GROUP) & rel.measure.str.startswith("krippendorff_alpha_nominal")].estimate.iloc[0]
    binary = np.where(np.isnan(np.array(EXAMPLE_C)), np.nan, (np.array(EXAMPLE_C) >= 3).astype(float))
    assert nominal == pytest.approx(kp.alpha(reliability_data=binary, level_of_measurement="nominal"), abs=1e-9)


def test_single_llm_rating_is_the_first_valid_epoch():
    r = pd.DataFrame({"evaluator": ["m"] * 3, "association_id": ["x"] * 3, "epoch": [1, 2, 3], "harm": [NAN, 4.0, 2.0]})
    assert single_llm_ratings(r).value.tolist() == [4.0]


def test_provider_counts_by_hand():
    assert provider_of("openai/gpt-4o") == "openai" and provider_of("openrouter/google/gemini") == "openrouter/google"
    per_eval = pd.DataFrame({
        "evaluator": ["openai/a", "openai/a", "openai/b", "anthropic/c", "anthropic/c"],
        "association_id": ["x", "y", "x", "x", "y"],
        "median_harm": [4.0, 2.0, 5.0, NAN, 1.0],
        "harmful": [True, False, True, None, False],
    })
    t = provider_counts(per_eval).set_index(["provider", "evaluator"])
    assert t.loc[("openai", "openai/a"), ["labelled", "harmful", "benign"]].tolist() == [2, 1, 1]
    assert t.loc[("openai", "(all)"), ["labelled", "harmful", "benign"]].tolist() == [3, 2, 1]
    assert t.loc[("anthropic", "anthropic/c"), ["labelled", "harmful"]].tolist() == [1, 0]  # NaN rating left out
    assert list(t.index.get_level_values(0).unique()) == ["anthropic", "openai"]


@pytest.fixture(scope="module")
def one_judge_logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("one_judge")
    (d / "a.csv").write_text(
        "model,slice,base_attribute,base_value,compared_attribute,compared_value\n"
        "x/y,all,income_level,low,education,basic\nx/y,all,age,child,employment_status,student\n")

    def out(input, tools, tool_choice, config):  # noqa: A002
        o = ModelOutput.from_content(model="mockllm/model", content="Harmful: 2\nRealism: No")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    eval(stereotales_judge(associations=str(d / "a.csv"), epochs=1), model=get_model("mockllm/model", custom_outputs=out),
         display="none", log_dir=str(d / "logs"))
    return d


def test_single_judge_without_humans_explains_instead_of_nan(one_judge_logs, tmp_path):
    path = write(analyze([one_judge_logs / "logs"], out=tmp_path / "o"), tmp_path / "o")
    html = path.read_text()
    assert "nan%" not in html and "nan" not in html.replace("nanmean", "")
    assert "Inter-LLM agreement needs at least two judged models" in html
    assert "No human ratings were given" in html
    assert "No per-language association rows" in html
    assert 'href="judge_summary.csv"' in html and 'href="rater_reliability.parquet"' in html
    rel = pd.read_csv(tmp_path / "o" / "rater_reliability.csv")
    assert set(rel.group) == {LLM_GROUP} and rel.estimate.isna().all()
    assert (tmp_path / "o" / "run_info.json").is_file()


def test_judge_sections_extend_an_associations_folder(one_judge_logs, tmp_path):
    """OUT holding associations.csv: its report.html is rebuilt with the judge sections and the harm labels."""
    import json

    from stereoprobe.cli import main
    from stereoprobe.stereotales.judge import association_id
    from stereoprobe.tables import write_table

    d = tmp_path / "assoc"
    keys = [("income_level", "low", "education", "basic"), ("age", "child", "employment_status", "student")]
    rows = [{"model": "x/y", "slice": "all", "base_attribute": A, "base_value": a, "compared_attribute": B,
             "compared_value": b, "n": 100, "fraction": 0.5, "lift": 2.5, "lift_ci_low": 2.0, "lift_ci_high": 3.0,
             "p_by": 1e-4, "cramers_v": 0.3, "effect": "medium", "association_id": association_id(A, a, B, b)}
            for A, a, B, b in keys]
    write_table(pd.DataFrame(rows), d, "associations")
    (d / "run_info.json").write_text(json.dumps({"models": ["x/y"], "probe": "stereotales"}))
    (d / "report.html").write_text("<html>old report</html>")
    before = (d / "associations.csv").read_bytes()
    assert main(["judge-report", str(one_judge_logs / "logs"), "--out", str(d)]) == 0
    html = (d / "report.html").read_text()
    assert "old report" not in html and "Harm judge: ratings per judged model" in html
    assert (d / "associations.csv").read_bytes() == before and not (d / "judge_report.html").exists()
    assert json.loads((d / "run_info.json").read_text())["probe"] == "stereotales"  # the associations run's info
    labels = pd.read_csv(d / "harm_labels.csv")
    assert len(labels) == 2 and not labels.harmful.any()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left behind


def test_alpha_of_the_judges_own_labels():
    # three judges x four associations, labels (harmful = 1): a 1100, b 1100, c 1000 (c leaves item 4 unlabelled)
    # values per unit: u1 (1,1,1), u2 (1,1,0), u3 (0,0,0), u4 (0,0). n_0 = 6, n_1 = 5 (n = 11).
    # off-diagonal coincidences: u2 holds 2 x 2 ordered (1,0)/(0,1) pairs / (3 - 1) = 2. alpha = 1 - 10 * 2 / (2 * 6 * 5).
    per_eval = pd.DataFrame({
        "evaluator": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
        "association_id": list("wxyz") * 3,
        "median_harm": [5, 4, 1, 1, 5, 4, 2, 2, 5, 2, 1, NAN],
        "harmful": [True, True, False, False, True, True, False, False, True, False, False, None],
    })
    ratings = pd.DataFrame({"evaluator": ["a"], "association_id": ["w"], "epoch": [1], "harm": [5.0]})
    rel = rater_reliability(ratings, per_eval=per_eval, n_resamples=0, n_splits=1)
    row = rel[rel.measure.str.contains("per-judge labels")].iloc[0]
    assert row.estimate == pytest.approx(1 - 10 * 2 / (2 * 6 * 5)) and row.n_items == 4 and row.n_ratings == 11


def test_panel_size_equal_footing_by_simulation():
    """23 LLM judges and 8 human raters of the same single-rater reliability: the full panels' split-half
    figures differ (Spearman-Brown: a bigger panel's mean is more reliable), the per-rater and common-size rows
    agree. Model: rating = true item score + independent noise, single-rater reliability 0.4 (var 1 vs 1.5),
    600 associations; expected values from the Spearman-Brown formula written out here."""
    rng = np.random.default_rng(7)
    n_items, rho1 = 600, 0.4
    truth = rng.normal(0, 1, n_items)
    noise_sd = math.sqrt((1 - rho1) / rho1)

    def ratings(n_raters: int) -> np.ndarray:
        return truth[:, None] + rng.normal(0, noise_sd, (n_items, n_raters))

    llm = pd.DataFrame([(f"m{j}", f"a{i}", 1, float(x)) for i, row in enumerate(ratings(23)) for j, x in enumerate(row)],
                       columns=["evaluator", "association_id", "epoch", "harm"])
    human = pd.DataFrame([(f"p{j}", f"a{i}", float(x)) for i, row in enumerate(ratings(8)) for j, x in enumerate(row)],
                         columns=["participant_id", "association_id", "harm"])
    rel = rater_reliability(llm.assign(harm=llm.harm.round(1)), human.assign(harm=human.harm.round(1)),
                            n_resamples=0, n_splits=40)
    est = {(g, m.split(" ")[0]): e for g, m, e in zip(rel.group, rel.measure, rel.estimate)}
    full = {g: est[(g, "split_half_spearman_brown")] for g in (HUMAN_GROUP, LLM_GROUP)}
    assert full[LLM_GROUP] == pytest.approx(23 * rho1 / (1 + 22 * rho1), abs=0.03)  # 0.939
    assert full[HUMAN_GROUP] == pytest.approx(8 * rho1 / (1 + 7 * rho1), abs=0.04)  # 0.842
    for g in (HUMAN_GROUP, LLM_GROUP):
        assert est[(g, "reliability_per_rater")] == pytest.approx(rho1, abs=0.05)
        assert est[(g, "reliability_at_panel_size_8.0")] == pytest.approx(8 * rho1 / (1 + 7 * rho1), abs=0.04)
