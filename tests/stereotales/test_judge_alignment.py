"""Alignment statistics against independent computations (scipy, hand-worked tables, simulation)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from stereoprobe.stereotales.judge import alignment as al
from stereoprobe.stereotales.judge import languages as lg
from stereoprobe.stereotales.judge import association_id

# A small hand-made table: mean LLM and mean human ratings of six associations.
LLM = [1.0, 2.0, 2.5, 4.0, 3.0, 5.0]
HUMAN = [1.5, 2.0, 3.0, 3.5, 4.0, 4.5]


def test_pearson_matches_scipy():
    res = al.pearson_ci(LLM, HUMAN)
    ref = stats.pearsonr(LLM, HUMAN)
    ci = ref.confidence_interval(0.95)  # scipy: Fisher z transform
    assert res.estimate == pytest.approx(ref.statistic, abs=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (res.ci_low, res.ci_high) == (pytest.approx(ci.low, abs=1e-9), pytest.approx(ci.high, abs=1e-9))
    assert res.n == 6
    ci90 = stats.pearsonr(LLM, HUMAN).confidence_interval(0.9)
    r90 = al.pearson_ci(LLM, HUMAN, confidence=0.9)
    assert (r90.ci_low, r90.ci_high) == (pytest.approx(ci90.low), pytest.approx(ci90.high))


def test_pearson_drops_nan_pairs():
    res = al.pearson_ci(LLM + [np.nan, 3.0], HUMAN + [2.0, np.nan])
    assert res.n == 6 and res.estimate == pytest.approx(stats.pearsonr(LLM, HUMAN).statistic)


def test_spearman_hand_worked_bonett_wright():
    # ranks LLM: 1 2 3 5 4 6; ranks human: 1 2 3 4 5 6; sum d^2 = 2 -> rho = 1 - 6*2/(6*35)
    rho = 1 - 12 / 210
    res = al.spearman_ci(LLM, HUMAN)
    assert res.estimate == pytest.approx(rho, abs=1e-12)
    assert res.estimate == pytest.approx(stats.spearmanr(LLM, HUMAN).statistic)
    assert res.p_value == pytest.approx(stats.spearmanr(LLM, HUMAN).pvalue, rel=1e-9)
    # Bonett & Wright (2000): se(z) = sqrt((1 + rho^2/2) / (n - 3)); worked by hand: z = 0.5 ln(34) = 1.76318,
    # se = 0.69390, 1.95996 * se = 1.36002 -> tanh(0.40316) = 0.38264, tanh(3.12320) = 0.99614
    assert res.ci_low == pytest.approx(0.38264, abs=2e-5)
    assert res.ci_high == pytest.approx(0.99614, abs=2e-5)


def test_spearman_ties_match_scipy():
    x = [1, 2, 2, 3, 4, 4, 4, 5, 1, 3]
    y = [2, 1, 3, 3, 5, 4, 4, 5, 2, 2]
    assert al.spearman_ci(x, y).estimate == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_spearman_bootstrap_close_to_scipy_bootstrap():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.6 * x + rng.normal(size=40)
    ours = al.spearman_ci(x, y, method="bootstrap", n_resamples=4000, seed=1)
    ref = stats.bootstrap(
        (x, y), lambda a, b: stats.spearmanr(a, b).statistic, paired=True, vectorized=False,
        n_resamples=4000, method="percentile", rng=np.random.default_rng(2),
    ).confidence_interval
    assert ours.ci_low == pytest.approx(ref.low, abs=0.04)
    assert ours.ci_high == pytest.approx(ref.high, abs=0.04)
    assert ours.ci_method == "bootstrap"


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_interval_coverage_by_simulation(method):
    """95% intervals cover the population value in ~95% of samples (bivariate normal, rho = 0.5, n = 40)."""
    rng = np.random.default_rng(11)
    rho, n, reps = 0.5, 40, 400
    target = rho if method == "pearson" else 6 / math.pi * math.asin(rho / 2)
    cov = [[1, rho], [rho, 1]]
    hits = 0
    for _ in range(reps):
        x, y = rng.multivariate_normal([0, 0], cov, size=n).T
        res = al.pearson_ci(x, y) if method == "pearson" else al.spearman_ci(x, y)
        hits += res.ci_low <= target <= res.ci_high
    # binomial 99.9% acceptance band around 0.95 for 400 trials
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.95) / reps
    assert lo <= hits / reps <= hi


def test_evaluator_ratings_and_panel():
    r = pd.DataFrame(
        {"evaluator": ["a"] * 6 + ["b"] * 3, "association_id": ["x", "x", "x", "y", "y", "y", "x", "x", "x"],
         "harm": [4, 5, 3, 3, 5, np.nan, 1, 2, np.nan]}
    )
    e = al.evaluator_ratings(r).set_index(["evaluator", "association_id"])
    assert e.loc[("a", "x"), "median_harm"] == 4 and bool(e.loc[("a", "x"), "harmful"]) is True
    assert e.loc[("a", "y"), "median_harm"] == 4 and e.loc[("a", "y"), "n_valid"] == 2  # (3 + 5) / 2
    assert e.loc[("b", "x"), "mean_harm"] == 1.5 and bool(e.loc[("b", "x"), "harmful"]) is False
    p = al.panel_labels(r).set_index("association_id")
    assert p.loc["x", "median_harm"] == 3 and not p.loc["x", "harmful"]  # median of 4 5 3 1 2
    assert p.loc["y", "n_ratings"] == 2


def test_pairwise_agreement_hand_worked():
    labels = pd.DataFrame(
        {"a": [True, True, False, False, None], "b": [True, False, False, False, True], "human": [True, True, True, None, True]},
        index=list("vwxyz"),
    )
    rate, count = al.pairwise_agreement(labels)
    assert rate.loc["a", "b"] == pytest.approx(3 / 4) and count.loc["a", "b"] == 4
    assert rate.loc["a", "human"] == pytest.approx(2 / 3) and count.loc["a", "human"] == 3
    assert rate.loc["b", "human"] == pytest.approx(2 / 4)
    assert rate.loc["a", "a"] == 1.0
    s = al.agreement_summary(rate)
    assert s["inter_llm"] == pytest.approx(0.75)
    assert s["human_vs_llm"] == pytest.approx((2 / 3 + 0.5) / 2)


def test_delta_by_dimension_matches_ttest():
    pa = pd.DataFrame(
        {
            "base_attribute": ["age", "age", "gender", "age", "income_level"],
            "base_value": ["child", "senior", "woman", "adult", "low"],
            "compared_attribute": ["employment_status", "gender", "age", "income_level", "education"],
            "compared_value": ["student", "woman", "senior", "high", "basic"],
            "llm_mean": [2.0, 3.0, 4.5, 1.0, 2.5],
            "human_mean": [3.0, 3.5, 4.0, 2.0, 3.5],
        }
    )
    d = al.delta_by_dimension(pa).set_index("dimension")
    age = np.array([2.0 - 3.0, 3.0 - 3.5, 1.0 - 2.0, 4.5 - 4.0])  # base age (3) + compared age (1)
    tt = stats.ttest_1samp(age, 0.0)
    ci = tt.confidence_interval(0.95)
    assert d.loc["age", "n"] == 4 and d.loc["age", "mean_delta"] == pytest.approx(age.mean())
    assert (d.loc["age", "ci_low"], d.loc["age", "ci_high"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert d.loc["age", "p_value"] == pytest.approx(tt.pvalue)
    assert d.loc["all", "n"] == 5 and d.loc["all", "mean_delta"] == pytest.approx(-0.6)
    assert d.loc["education", "n"] == 1 and math.isnan(d.loc["education", "ci_low"])
    base_only = al.delta_by_dimension(pa, dimension="base").set_index("dimension")
    assert base_only.loc["age", "n"] == 3 and "employment_status" not in base_only.index


def test_top_score_use():
    r = pd.DataFrame({"evaluator": ["human"] * 4 + ["m"] * 5, "association_id": list("abcdabcde"),
                      "harm": [5, 5, 3, 1, 5, 4, 4, 2, np.nan]})
    t = al.top_score_use(r).set_index("evaluator")
    assert t.loc["human", "share_top"] == 0.5 and t.loc["m", "share_top"] == 0.25
    assert t.loc["m", "human_to_evaluator_ratio"] == 2.0 and t.loc["m", "n_ratings"] == 4
    assert al.POOLED_LLMS not in t.index  # a single LLM: nothing to pool
    r2 = pd.concat([r, pd.DataFrame({"evaluator": "k", "association_id": list("ab"), "harm": [5, 5]})])
    t2 = al.top_score_use(r2).set_index("evaluator")
    assert t2.loc[al.POOLED_LLMS, "share_top"] == pytest.approx(3 / 6)  # m: 1 of 4, k: 2 of 2
    assert t2.loc[al.POOLED_LLMS, "human_to_evaluator_ratio"] == pytest.approx(1.0)


def _rows(spec):
    return pd.DataFrame(spec, columns=["model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value"])


def test_language_reach_and_summary():
    rows = _rows([
        ("m", "en", "a", "1", "b", "1"), ("m", "fr", "a", "1", "b", "1"), ("n", "fr", "a", "1", "b", "1"),
        ("m", "en", "a", "2", "b", "2"),
        ("m", "en", "c", "1", "d", "1"), ("m", "fr", "c", "1", "d", "1"), ("m", "hi", "c", "1", "d", "1"),
        ("m", "all", "e", "1", "f", "1"),
    ])
    labels = {association_id("a", "1", "b", "1"): True, association_id("a", "2", "b", "2"): True,
              association_id("c", "1", "d", "1"): False}
    reach = lg.language_reach(rows, labels).set_index("association_id")
    assert reach.loc[association_id("a", "1", "b", "1"), "reach"] == 2
    assert reach.loc[association_id("c", "1", "d", "1"), "languages"] == "en fr hi"
    assert len(reach) == 3  # the global slice is ignored
    s = lg.reach_summary(reach.reset_index(), n_languages=3).set_index("label")
    assert s.loc["harmful", "mean_reach"] == 1.5 and s.loc["benign", "share_all"] == 1.0
    assert s.loc["harmful", "share_specific"] == 1.0
    ref = stats.mannwhitneyu([2, 1], [3], alternative="two-sided", method="asymptotic")
    assert s.loc["harmful", "mannwhitney_u"] == ref.statistic and s.loc["harmful", "p_value"] == pytest.approx(ref.pvalue)


def test_marked_group_shift_hand_worked():
    eu = "europe (e.g. United Kingdom, Spain, Russia, Greece, etc)"
    na = "northern africa (e.g. Egypt, Sudan, Algeria, Morocco, Tunisia, etc)"
    rows = _rows([
        ("m", "fr", "geographic_origin", na, "employment_status", "unemployed"),
        ("n", "fr", "geographic_origin", na, "employment_status", "unemployed"),  # same association: counted once
        ("m", "fr", "religion", "Muslim", "education", "basic"),
        ("m", "fr", "income_level", "low", "religion", "Muslim"),  # compared side
        ("m", "en", "geographic_origin", na, "employment_status", "unemployed"),
        ("m", "en", "geographic_origin", eu.replace(", etc", ""), "income_level", "high"),  # spelling variant
        ("m", "it", "religion", "Christian", "age", "senior (65+)"),
        ("m", "fr", "geographic_origin", eu, "income_level", "high"),  # benign below
    ])
    harmful = {association_id(*r[2:]): True for r in rows.itertuples(index=False)}
    harmful[association_id("geographic_origin", eu, "income_level", "high")] = False
    groups = {"fr": {"unmarked": {"geographic_origin": ["europe"], "religion": ["Christian"]},
                     "marked": {"geographic_origin": ["northern africa"], "religion": ["Muslim"]}},
              "zz": {"marked": {"religion": ["Muslim"]}}}
    out = lg.marked_group_shift(rows, harmful, groups).set_index(["status", "group"])
    assert set(out.language) == {"fr"}  # zz absent from rows
    # fr: northern africa 1 (en 1, it 0 -> mean 0.5); Muslim 2 (en 0, it 0); europe 0 (en: variant spelling 1);
    # Christian 0 (it 1)
    assert out.loc[("marked", "northern africa"), ["n_own", "mean_other", "shift"]].tolist() == [1, 0.5, 0.5]
    assert out.loc[("marked", "Muslim"), ["n_own", "mean_other"]].tolist() == [2, 0.0]
    assert math.isnan(out.loc[("marked", "Muslim"), "ratio"])
    assert out.loc[("unmarked", "europe"), ["n_own", "mean_other", "shift"]].tolist() == [0, 0.5, -0.5]
    assert out.loc[("unmarked", "Christian"), "shift"] == -0.5
    base = lg.marked_group_shift(rows, harmful, groups, side="base").set_index(["status", "group"])
    assert base.loc[("marked", "Muslim"), "n_own"] == 1


def test_harmful_language_jaccard_hand_worked():
    rows = _rows([
        ("m", "en", "a", "1", "b", "1"), ("m", "fr", "a", "1", "b", "1"),
        ("m", "en", "a", "2", "b", "2"), ("m", "fr", "c", "1", "d", "1"), ("m", "hi", "c", "1", "d", "1"),
        ("m", "hi", "e", "1", "f", "1"),
    ])
    lab = {association_id("a", "1", "b", "1"): True, association_id("a", "2", "b", "2"): True,
           association_id("c", "1", "d", "1"): True, association_id("e", "1", "f", "1"): False}
    j = lg.harmful_language_jaccard(rows, lab)
    # en {ab1, ab2}, fr {ab1, cd1}, hi {cd1} (ef1 benign)
    assert j.loc["en", "fr"] == pytest.approx(1 / 3) and j.loc["fr", "hi"] == pytest.approx(1 / 2)
    assert j.loc["en", "hi"] == 0.0 and j.loc["hi", "hi"] == 1.0


def test_delta_test_error_rates_by_simulation():
    """Null (no LLM-human difference): the t-test rejects ~5%; a planted delta of -0.5 SD (n = 60) is found."""
    rng = np.random.default_rng(5)
    reps, n = 200, 30

    def table(shift, size):
        human = rng.uniform(1, 5, size)
        return pd.DataFrame({"base_attribute": "age", "base_value": "x", "compared_attribute": "gender",
                             "compared_value": "y", "human_mean": human, "llm_mean": human + shift + rng.normal(0, 1, size)})

    rej = sum(al.delta_by_dimension(table(0.0, n), dimension="base").iloc[0].p_value < 0.05 for _ in range(reps))
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.05)
    assert lo <= rej <= hi
    found = sum(al.delta_by_dimension(table(-0.5, 60), dimension="base").iloc[0].ci_high < 0 for _ in range(50))
    assert found >= 42  # power of the one-sample t-test at d = 0.5, n = 60 is ~0.97


def test_generation_vs_delta():
    delta = pd.DataFrame({"dimension": ["age", "gender", "religion", "all"], "n": [5, 4, 3, 9],
                          "mean_delta": [-0.4, 0.2, -0.1, -0.1], "ci_low": 0.0, "ci_high": 0.0})
    rows = _rows([
        ("m", "all", "age", "1", "gender", "1"), ("n", "all", "age", "1", "gender", "1"),
        ("m", "all", "age", "2", "religion", "1"), ("m", "fr", "gender", "1", "religion", "2"),
    ])
    table, rho = al.generation_vs_delta(delta, rows)
    # global rows only: age 3 (base), gender 2 (compared), religion 1 (compared)
    assert table.set_index("dimension")["generated_rows"].to_dict() == {"age": 3, "gender": 2, "religion": 1}
    assert rho.estimate == pytest.approx(stats.spearmanr([3, 2, 1], [-0.4, 0.2, -0.1]).statistic)
