"""Association mining (the paper's two steps, upstream step_02_compute_associations.py): tables, decisions against the reference, simulations, aggregation."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.stats import binom, false_discovery_control

from stereoprobe.stereotales.mining.associations import (
    MiningConfig,
    aggregate_across_languages,
    aggregate_across_models,
    build_contingency_table,
    family_pvalues,
    mine_associations,
    provider_of,
)
from stereoprobe.stereotales.mining.synthetic import ATTRIBUTE_SHAPES, Planted, synthetic_stories

ATTRS = list(ATTRIBUTE_SHAPES)


def _frame(rows):
    return pd.DataFrame(rows, columns=["model", "language", "target_attribute", "gender", "income_level", "education"])


def _hand_frame():
    """gender-prompted stories: 'man' 12, 'woman' 12, 'non-binary' 5 (< 10: dropped); income and
    education extracted, with unknown/other values that must be dropped pairwise."""
    rows = []
    for i in range(12):
        rows.append(("m/x", "en", "gender", "man", "high income" if i < 9 else "low income", "unknown"))
        rows.append(("m/x", "en", "gender", "woman", "low income" if i < 9 else "high income", "basic"))
    for _ in range(5):
        rows.append(("m/x", "en", "gender", "non-binary", "low income", "basic"))
    rows.append(("m/x", "en", "gender", "man", "other", "basic"))
    return _frame(rows)


def test_table_construction_drops_sparse_rows_unknown_and_other():
    res = mine_associations(_hand_frame(), ["gender", "income_level", "education"],
                            MiningConfig(p_method="reference-mc", mc_resamples=2000))
    pt = res.pair_tests
    # gender -> education: man has 1 non-unknown education row (< 10) -> fewer than 2 rows -> skipped
    assert set(pt["compared_attribute"]) == {"income_level"}
    row = pt.iloc[0]
    assert json.loads(row["row_values"]) == ["man", "woman"]  # non-binary (5 stories) dropped
    assert json.loads(row["col_values"]) == ["high income", "low income"]  # "other" dropped
    assert json.loads(row["table"]) == [[9, 3], [3, 9]]
    assert row["n"] == 24


def test_build_contingency_table_skips_small_tables():
    labels = ["a", "b"]
    assert build_contingency_table(np.array([0] * 12 + [1] * 3), np.array([0, 1] * 7 + [0]), labels, labels) is None
    assert build_contingency_table(np.array([0] * 12 + [1] * 12), np.array([0] * 24), labels, labels) is None


def test_reference_mc_mode_equals_direct_scipy_calls():
    df = synthetic_stories(["m/a"], ["en"], seed=3, attributes={k: ATTRIBUTE_SHAPES[k] for k in ATTRS[:4]})
    cfg = MiningConfig(p_method="reference-mc", mc_resamples=3000)
    pt = mine_associations(df, ATTRS[:4], cfg).pair_tests
    assert len(pt) > 0
    for _, r in pt.iterrows():
        t = np.array(json.loads(r["table"]))
        ref = stats.fisher_exact(t, method=stats.MonteCarloMethod(n_resamples=3000, rng=np.random.default_rng(42)))
        assert r["p"] == ref.pvalue
    for (_, a), g in pt.groupby(["model", "base_attribute"]):
        assert g["p_bh"].to_numpy() == pytest.approx(false_discovery_control(g["p"].to_numpy(), method="bh"))
        assert (g["significant"] == (g["p_bh"] < 0.05)).all()


def _random_family(rng, m):
    tables = []
    for _ in range(m):
        r, c = rng.integers(2, 5), rng.integers(2, 6)
        strength = rng.choice([0.0, 0.15, 0.3, 0.6])
        base = rng.dirichlet(np.ones(c) * 3)
        tabs = [rng.multinomial(int(rng.integers(15, 60)), (1 - strength) * base + strength * rng.dirichlet(np.ones(c)))
                for _ in range(r)]
        t = np.array(tabs)
        t = t[:, t.sum(axis=0) > 0]
        if t.shape[1] >= 2:
            tables.append(t)
    return tables


def test_fast_path_decisions_equal_reference_decisions():
    rng = np.random.default_rng(11)
    n_ref = 20_000
    fast_cfg = MiningConfig(p_method="auto", mc_resamples=n_ref)
    ref_cfg = MiningConfig(p_method="reference-mc", mc_resamples=n_ref)
    n_tests = n_sig = 0
    methods = set()
    for _ in range(12):
        tables = _random_family(rng, int(rng.integers(3, 9)))
        fast = family_pvalues(tables, fast_cfg)
        ref = family_pvalues(tables, ref_cfg)
        assert (fast["significant"].to_numpy() == ref["significant"].to_numpy()).all()
        # consistency of the reported numbers with the decisions
        assert ((fast["p_bh"] < 0.05).to_numpy() == fast["significant"].to_numpy()).all()
        replayed = fast["p_method"] == "reference-mc"
        assert (fast.loc[replayed, "p"].to_numpy() == ref.loc[replayed, "p"].to_numpy()).all()
        methods |= set(fast["p_method"])
        n_tests += len(tables)
        n_sig += int(ref["significant"].sum())
    assert 0 < n_sig < n_tests  # the set exercises both decisions
    assert {"exact", "sequential-mc"} <= methods


def test_sequential_stops_early_on_clear_cases():
    strong = np.array([[40, 5], [5, 40], [20, 22]])
    null = np.array([[20, 21, 19], [18, 22, 20]])
    res = family_pvalues([strong, null, null + 1], MiningConfig(p_method="sequential-mc"))
    assert list(res["significant"]) == [True, False, False]
    # zero exceedances in k draws certify p < about ln(2·looks/δ)/k = 19/k: 2,048 draws reach α/m = 1/60
    assert res["n_resamples"].max() <= 4096
    assert res["n_resamples"].sum() < 10_000  # the reference would draw 1.5 million tables


def test_null_simulation_false_discoveries_within_nominal_rate():
    # independent attributes: every rejection is false; BH at 0.05 -> P(any rejection in a family) <= 0.05
    df = synthetic_stories(["m/a", "m/b", "m/c"], ["en", "fr"], seed=21)
    res = mine_associations(df, ATTRS, MiningConfig())
    pt = res.pair_tests
    fam = pt.groupby(["model", "base_attribute"])["significant"].any()
    assert len(fam) == 57
    assert fam.sum() <= binom.ppf(0.999, len(fam), 0.05)
    assert pt["significant"].mean() <= 0.05
    assert res.associations.empty or len(res.associations) <= 2


def test_planted_associations_are_found_with_their_lift():
    planted = [
        Planted("income_level", 0, "education", 0, 2.5),
        Planted("health_status", 2, "disability_status", 1, 2.5),
        Planted("professional_field", 9, "gender", 1, 2.0),
        Planted("age", 5, "employment_status", 4, 4.0),
    ]
    df = synthetic_stories(["m/a", "p/b"], ["en", "fr", "es", "it", "pt", "du", "uk", "ar", "hi", "zh"],
                           planted=planted, seed=5)
    res = mine_associations(df, ATTRS, MiningConfig(n_jobs=1))
    found = res.associations
    covered = checked = 0
    for pl in planted:
        for model in ("m/a", "p/b"):
            hit = found[(found["model"] == model) & (found["base_attribute"] == pl.base_attribute)
                        & (found["base_value"] == f"{pl.base_attribute}_{pl.base_value}")
                        & (found["compared_attribute"] == pl.compared_attribute)
                        & (found["compared_value"] == f"{pl.compared_attribute}_{pl.compared_value}")]
            if pl.lift >= 2.5:  # lift 2.0 sits on the filter's edge: about half are found
                assert len(hit) == 1, (pl, model)
                h = hit.iloc[0]
                checked += 1
                covered += h["lift_ci_low"] <= pl.lift <= h["lift_ci_high"]
    assert checked == 6 and covered >= 5  # 95 % intervals: P(two or more misses of 6) ≈ 3 %
    agg = aggregate_across_models(res.value_tests)
    top = agg[(agg["base_attribute"] == "age") & (agg["compared_attribute"] == "employment_status")]
    assert top["models_count"].iloc[0] == 2 and top["models_total"].iloc[0] == 2
    assert top["providers"].iloc[0] == "m;p"


def test_run_family_reports_both_adjustments():
    df = synthetic_stories(["m/a"], ["en"], seed=2, planted=[Planted("age", 5, "employment_status", 4, 4.0)])
    res = mine_associations(df, ATTRS, MiningConfig(fdr_family="run"))
    pt = res.pair_tests
    assert pt["p_bh_run"].to_numpy() == pytest.approx(false_discovery_control(pt["p"].to_numpy(), method="bh"))
    assert (pt["significant"] == (pt["p_bh_run"] < 0.05)).all()
    sig = set(map(tuple, pt.loc[pt["significant"], ["base_attribute", "compared_attribute"]].to_numpy()))
    assert set(map(tuple, res.value_tests[["base_attribute", "compared_attribute"]].drop_duplicates().to_numpy())) == sig


def test_value_tests_match_scipy_per_cell():
    df = synthetic_stories(["m/a"], ["en", "fr"], seed=4, planted=[Planted("age", 5, "employment_status", 4, 4.0)],
                           attributes={k: ATTRIBUTE_SHAPES[k] for k in ("age", "employment_status", "gender")})
    res = mine_associations(df, ["age", "employment_status", "gender"])
    vt = res.value_tests
    pt = res.pair_tests.set_index(["base_attribute", "compared_attribute"])
    g = vt[(vt["base_attribute"] == "age") & (vt["compared_attribute"] == "employment_status")]
    table = np.array(json.loads(pt.loc[("age", "employment_status"), "table"]))
    assert len(g) == table.size
    p = []
    for _, r in g.iterrows():
        a = r["count"]
        b = r["base_total"] - a
        c = r["compared_total"] - a
        d = r["n"] - a - b - c
        p.append(stats.fisher_exact([[a, b], [c, d]], alternative="greater").pvalue)
        assert r["lift"] == pytest.approx(a * r["n"] / (r["base_total"] * r["compared_total"]))
        assert r["fraction"] == pytest.approx(a / r["base_total"])
    assert g["p"].to_numpy() == pytest.approx(np.array(p))
    assert g["p_by"].to_numpy() == pytest.approx(false_discovery_control(np.array(p), method="by"))
    expect = (g["effect"].isin(["medium", "large"])) & (g["p_by"] < 0.05) & (g["lift"] >= 2)
    assert (g["passes"] == expect).all()


def test_parallel_equals_serial_and_by_language_slices():
    df = synthetic_stories(["m/a", "m/b"], ["en", "fr"], seed=8,
                           attributes={k: ATTRIBUTE_SHAPES[k] for k in ("age", "gender", "income_level")},
                           planted=[Planted("age", 0, "income_level", 0, 3.0)])
    a = mine_associations(df, ["age", "gender", "income_level"], MiningConfig(n_jobs=1), by_language=True)
    b = mine_associations(df, ["age", "gender", "income_level"], MiningConfig(n_jobs=2), by_language=True)
    pd.testing.assert_frame_equal(a.pair_tests, b.pair_tests)
    pd.testing.assert_frame_equal(a.value_tests, b.value_tests)
    assert set(a.pair_tests["slice"]) == {"en", "fr"}


def test_bootstrap_stability():
    df = synthetic_stories(["m/a"], ["en", "fr", "es"], seed=9,
                           attributes={k: ATTRIBUTE_SHAPES[k] for k in ("age", "employment_status", "gender")},
                           planted=[Planted("age", 5, "employment_status", 4, 4.0)])
    res = mine_associations(df, ["age", "employment_status", "gender"], MiningConfig(bootstrap_reps=8))
    assoc = res.associations
    planted = assoc[(assoc["base_value"] == "age_5") & (assoc["compared_value"] == "employment_status_4")]
    assert len(planted) == 1 and planted["stability"].iloc[0] >= 0.75
    assert res.value_tests.loc[~res.value_tests["passes"], "stability"].isna().all()


def _vt(rows):
    cols = ["model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value", "fraction",
            "lift", "passes"]
    return pd.DataFrame(rows, columns=cols)


def test_aggregate_across_models_hand_worked():
    vt = _vt([
        ("openai/x", "all", "A", "a", "B", "b", 0.5, 2.0, True),
        ("google/y", "all", "A", "a", "B", "b", 0.3, 3.0, True),
        ("google/z", "all", "A", "a", "B", "b", 0.9, 1.2, False),
        ("google/z", "all", "A", "a2", "B", "b", 0.9, 2.2, True),
    ])
    agg = aggregate_across_models(vt).set_index("base_value")
    assert agg.loc["a", "models_count"] == 2 and agg.loc["a", "models_total"] == 3
    assert agg.loc["a", "mean_percentage"] == 40.0 and agg.loc["a", "mean_lift"] == 2.5
    assert agg.loc["a", "providers"] == "google;openai"
    assert provider_of("azure_ai/gpt-4o") == "azure_ai" and provider_of("local") == "local"


def test_aggregate_across_languages_hand_worked():
    vt = _vt([
        ("m", "en", "A", "a", "B", "b", 0.5, 2.0, True),
        ("m", "fr", "A", "a", "B", "b", 0.5, 2.0, True),
        ("m", "fr", "A", "a", "B", "c", 0.5, 2.0, True),
        ("m", "hi", "C", "c", "D", "d", 0.5, 2.0, True),
        ("m", "hi", "A", "a", "B", "b", 0.5, 1.0, False),
    ])
    per, jac, spec = aggregate_across_languages(vt, languages=["en", "fr", "hi", "zh"])
    assert jac.loc["en", "fr"] == pytest.approx(1 / 2)
    assert jac.loc["en", "hi"] == 0.0 and np.isnan(jac.loc["zh", "zh"])
    assert per.set_index(["base_value", "compared_value"]).loc[("a", "b"), "languages_count"] == 2
    assert set(spec["language"]) == {"fr", "hi"} and len(spec) == 2


def test_config_validation():
    with pytest.raises(ValueError, match="p_method"):
        MiningConfig(p_method="exactish")
    with pytest.raises(ValueError, match="missing column"):
        mine_associations(pd.DataFrame({"model": []}), ["a", "b"])


def test_categorical_and_plain_frames_give_the_same_tables():
    df = synthetic_stories(["m/a"], ["en"], seed=12, attributes={k: ATTRIBUTE_SHAPES[k] for k in ("age", "gender", "religion")})
    plain = df.astype({c: object for c in ("age", "gender", "religion", "target_attribute", "model")})
    plain.loc[plain.index[:30], "religion"] = None  # missing values count as unknown
    cat = plain.astype({"religion": "category", "age": "category", "gender": "category"})
    cfg = MiningConfig(p_method="asymptotic")
    a = mine_associations(plain, ["age", "gender", "religion"], cfg).pair_tests
    b = mine_associations(cat, ["age", "gender", "religion"], cfg).pair_tests
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
def test_fast_path_decisions_equal_reference_decisions_large():
    """60 random families (≈ 600 tests), reference with 50,000 resamples: every decision equal."""
    rng = np.random.default_rng(2024)
    n_ref = 50_000
    fast_cfg = MiningConfig(mc_resamples=n_ref)
    ref_cfg = MiningConfig(p_method="reference-mc", mc_resamples=n_ref)
    total = 0
    for _ in range(60):
        tables = _random_family(rng, int(rng.integers(4, 18)))
        fast = family_pvalues(tables, fast_cfg)
        ref = family_pvalues(tables, ref_cfg)
        assert (fast["significant"].to_numpy() == ref["significant"].to_numpy()).all()
        total += len(tables)
    assert total > 500
