"""APX, bias scores, flags, the stricter test and the validation against hand-worked tables.

Hand-worked table (2 groups x 2 names x 2 descriptors x 2 templates):

template 1 ppl   A: n1 d1=10 d2=20, n2 d1=14 d2=16 (mean 15)   B: m1 d1=30 d2=20, m2 d1=26 d2=24 (mean 25)
  overall 20 -> ratios A 0.75, B 1.25 -> APX means A d1 16.0, A d2 24.0, B d1 22.4, B d2 17.6
  min-max (16..24): A d1 0, A d2 1, B d1 0.8, B d2 0.2
template 2 ppl   A all 10, B all 20, overall 15 -> ratios 0.6667 -> 0.667 and 1.3333 -> 1.333 (rounded)
  APX A 10/0.667 = 14.9925 -> 14.99; B 20/1.333 = 15.0038 -> 15.00 -> min-max A 0, B 1
  (unrounded: every APX is exactly 15 -> all 0)
scores (faithful): A d1 0, A d2 0.5, B d1 0.9, B d2 0.6;  (unrounded): 0, 0.5, 0.4, 0.1
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from stereoprobe.globalbias import apx as A
from stereoprobe.globalbias.options import GlobalBiasOptions
from stereoprobe.stats.bootstrap import cluster_bootstrap
from stereoprobe.stats.proportion import wilson_interval


def hand_table() -> pd.DataFrame:
    rows = []
    t1 = {("A", "n1"): (10, 20), ("A", "n2"): (14, 16), ("B", "m1"): (30, 20), ("B", "m2"): (26, 24)}
    for (g, n), (v1, v2) in t1.items():
        rows += [(g, n, "d1", 1, v1), (g, n, "d2", 1, v2)]
        val = 10 if g == "A" else 20
        rows += [(g, n, "d1", 2, val), (g, n, "d2", 2, val)]
    return pd.DataFrame(rows, columns=["group", "name", "descriptor", "template", "ppl"])


def test_apx_ratio_rounding():
    d = A.apx(hand_table())
    r = d.groupby(["template", "group"])["group_ratio"].first()
    assert r[(1, "A")] == 0.75 and r[(1, "B")] == 1.25
    assert r[(2, "A")] == 0.667 and r[(2, "B")] == 1.333
    exact = A.apx(hand_table(), round_ratio=None)
    assert exact[exact.template == 2]["apx"].to_numpy() == pytest.approx(15.0)


def test_group_means_and_bias_scores_faithful():
    s = A.score_table(hand_table()).set_index(["group", "descriptor"])
    assert s.loc[("A", "d1"), "apx_1"] == pytest.approx(16.0)
    assert s.loc[("B", "d1"), "apx_1"] == pytest.approx(22.4)
    assert s.loc[("A", "d1"), "apx_2"] == 14.99 and s.loc[("B", "d2"), "apx_2"] == 15.0
    expected = {("A", "d1"): 0.0, ("A", "d2"): 0.5, ("B", "d1"): 0.9, ("B", "d2"): 0.6}
    for k, v in expected.items():
        assert s.loc[k, "score"] == pytest.approx(v)


def test_bias_scores_unrounded():
    s = A.score_table(hand_table(), options=GlobalBiasOptions(faithful_rounding=False))
    s = s.set_index(["group", "descriptor"])
    expected = {("A", "d1"): 0.0, ("A", "d2"): 0.5, ("B", "d1"): 0.4, ("B", "d2"): 0.1}
    for k, v in expected.items():
        assert s.loc[k, "score"] == pytest.approx(v)


def test_apx_input_skips_the_apx_step():
    d = A.apx(hand_table())
    s1 = A.score_table(d[["group", "name", "descriptor", "template", "apx"]], value="apx")
    s2 = A.score_table(hand_table())
    assert s1["score"].to_numpy() == pytest.approx(s2["score"].to_numpy())


def test_reference_flag_rule_threshold():
    # one group at 0, the others at 1: sd (ddof 1) = 1/sqrt(n), threshold (n-1)/n - z/sqrt(n);
    # the low group is flagged iff (n-1)/sqrt(n) > 2.3263: n = 7 -> 2.268 (no), n = 8 -> 2.475 (yes)
    for n, expect in ((7, False), (8, True)):
        sc = pd.DataFrame({"group": [f"g{i}" for i in range(n)], "descriptor": "d", "axis": "x",
                           "score": [0.0] + [1.0] * (n - 1)})
        f = A.reference_flags(sc)
        assert bool(f.iloc[0]) is expect and not f.iloc[1:].any()
    from scipy import stats

    assert A.Z_ONE_PERCENT == float(stats.norm.ppf(0.99))  # the literal is scipy's value, bit for bit
    sc = pd.DataFrame({"group": [f"g{i}" for i in range(8)], "descriptor": "d", "axis": "age",
                       "score": [0.0] + [1.0] * 7})
    assert A.reference_flags(sc).isna().all()


def _sd_per_key_by_pandas(keys: pd.Series, values: pd.Series) -> np.ndarray:
    """The reference: pandas' own ``Series.std(ddof=1)`` of each key's rows, one Series per key (a plain loop)."""
    out = np.empty(len(values))
    for k in pd.unique(keys):
        rows = np.flatnonzero((keys == k).to_numpy())
        out[rows] = pd.Series(values.to_numpy()[rows]).std(ddof=1)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_group_sd_is_bit_identical_to_pandas_series_std(seed):
    """The reference flag's sd per descriptor (one numpy pass per key) equals pandas' ``Series.std(ddof=1)`` to
    the last bit: shuffled keys, groups of 1 to 299 rows (numpy's pairwise sums change at 8 and 128), magnitudes
    from 1e-3 to 1e5; a missing value takes pandas' path (its NaN rule) and stays equal."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 300, size=rng.integers(1, 25))
    keys = pd.Series(np.repeat([f"d{i}" for i in range(len(sizes))], sizes))
    keys = keys.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    scale = 10.0 ** rng.integers(-3, 4)
    values = pd.Series(rng.random(len(keys)) * scale + rng.random() * 100 * scale)
    got = A._group_sd(keys, values).to_numpy()
    assert np.array_equal(got, _sd_per_key_by_pandas(keys, values), equal_nan=True)
    assert np.isnan(got[keys.map(keys.value_counts()).to_numpy() == 1]).all()
    values.iloc[0] = np.nan
    assert np.array_equal(A._group_sd(keys, values).to_numpy(),
                          values.groupby(keys).transform(lambda s: s.std(ddof=1)).to_numpy(), equal_nan=True)


def test_reference_flags_unchanged_on_real_shaped_scores():
    """Flags from the per-key sd equal flags from pandas' per-group ``transform(lambda s: s.std(ddof=1))`` (the
    rule as first written) on 40 groups x 300 descriptors of bias scores with ties and exact 0/1 ends."""
    rng = np.random.default_rng(7)
    sc = pd.DataFrame([(f"g{g}", f"d{d}", "x", float(np.round(rng.random(), rng.integers(1, 17))))
                       for d in range(300) for g in range(40)], columns=["group", "descriptor", "axis", "score"])
    g = sc.groupby("descriptor")["score"]
    thr = g.transform("mean") - A.Z_ONE_PERCENT * g.transform(lambda s: s.std(ddof=1))
    assert A.reference_flags(sc).astype(bool).tolist() == (sc["score"] < thr).tolist()


def test_perplexity_normalisations():
    assert A.token_perplexity(-6.0, 3) == pytest.approx(np.exp(2.0))
    assert A.byte_perplexity(-6.0, 12) == pytest.approx(np.exp(0.5))
    assert A.bits_per_byte(-np.log(2) * 24, 12) == pytest.approx(2.0)
    assert A.byte_perplexity(-6.0, 12) == pytest.approx(2 ** A.bits_per_byte(-6.0, 12))


def test_bh_matches_statsmodels():
    p = np.random.default_rng(2).uniform(size=200) ** 3
    ref = multipletests(p, method="fdr_bh")[1]
    assert A.benjamini_hochberg(p) == pytest.approx(ref)
    q = A.benjamini_hochberg(np.array([0.01, np.nan, 0.04]))
    assert np.isnan(q[1]) and q[0] == pytest.approx(0.02) and q[2] == pytest.approx(0.04)


def _sim_names(effect: float, seed: int, n_groups=10, n_names=8, n_desc=40):
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(n_desc):
        for g in range(n_groups):
            shift = -effect if (g == 0 and d < 10) else 0.0
            for n in range(n_names):
                rows.append((f"g{g}", f"n{n}", f"d{d}", rng.normal(0.5 + shift, 0.1)))
    return pd.DataFrame(rows, columns=["group", "name", "descriptor", "name_score"])


@pytest.mark.parametrize("method", ["welch", "permutation"])
def test_stricter_test_null_and_planted(method):
    null = A.stricter_test(_sim_names(0.0, 3), method=method, n_permutations=500)
    assert 0.02 < (null["p_value"] < 0.05).mean() < 0.08  # uniform p under the null
    assert null["significant"].sum() <= 2
    planted = A.stricter_test(_sim_names(0.3, 4), method=method, n_permutations=1000)
    hits = planted[planted["significant"].fillna(False).astype(bool)]
    found = {(g, d) for g, d in zip(hits.group, hits.descriptor)}
    assert {("g0", f"d{i}") for i in range(10)} <= found
    assert len(found - {("g0", f"d{i}") for i in range(10)}) <= 2


def test_associations_table_strips_articles():
    sc = pd.DataFrame({"group": ["A", "A", "B"], "descriptor": ["a nurse", "am tall", "an owl"],
                       "score": [0.2, 0.1, 0.3], "flagged": pd.array([True, True, False], dtype="boolean")})
    t = A.associations(sc)
    assert t.to_dict("records") == [{"group": "A", "n": 2, "descriptors": "tall, nurse"}]


def validation_table() -> pd.DataFrame:
    # docstring of test_validation_hand_worked
    vals = {"ENGLISH": (10, 10), "CHINESE": (5, 15), "ARAB": (12, 8), "HISPANIC": (4, 4), "AFRICAN": (1000, 1000)}
    rows = []
    for eth, (x, y) in vals.items():
        rows += [(f"{eth}_F", eth, "F", "x", "asian", 1, x), (f"{eth}_F", eth, "F", "y", "arab", 1, y),
                 (f"{eth}_F", eth, "F", "bug", "nonce", 1, 1.0), (f"{eth}_F", eth, "F", "x", "asian", 2, 1.0)]
    return pd.DataFrame(rows, columns=["group", "ethnicity", "gender", "descriptor", "target", "template", "ppl"])


def test_validation_hand_worked():
    """PPL: HISPANIC (4) is lowest for both descriptors -> accuracy 0; ranks of the targets 2 and 2 -> MRR 0.5.
    APX (AFRICAN, nonce and template 2 dropped first): overall 8.5, ratios 10/8.5 -> 1.176, 4/8.5 -> 0.471;
    x: C 4.25 < H 8.49 < E 8.50 < A 10.20; y: A 6.80 < H 8.49 < E 8.50 < C 12.76 -> accuracy 1, MRR 1."""
    mapping = {"ENGLISH": "white", "CHINESE": "asian", "ARAB": "arab", "HISPANIC": "hispanic"}
    summary, detail = A.validation(validation_table(), mapping)
    s = summary.set_index("measure")
    assert s.loc["ppl", "accuracy"] == 0.0 and s.loc["ppl", "mrr"] == pytest.approx(0.5)
    assert s.loc["apx", "accuracy"] == 1.0 and s.loc["apx", "mrr"] == pytest.approx(1.0)
    assert s.loc["apx", "n_descriptors"] == 2 and s.loc["apx", "chance_accuracy"] == 0.25
    assert s.loc["apx", "chance_mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    x = detail[(detail.measure == "apx") & (detail.descriptor == "x")].iloc[0]
    assert x["ranking"] == "asian < hispanic < white < arab"


def _sim_sentences(seed: int, planted: float = 0.0, n_groups=10, n_names=8, n_desc=30):
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_groups):
        for n in range(n_names):
            for d in range(n_desc):
                for t in (1, 2):
                    z = rng.normal(4, 0.5) - (planted if (g == 0 and d < 5) else 0.0)
                    rows.append((f"g{g}", f"n{n}", f"d{d}", t, float(np.exp(z))))
    return pd.DataFrame(rows, columns=["group", "name", "descriptor", "template", "ppl"])


def test_name_scores_cancel_group_wide_shifts():
    df = _sim_sentences(5, n_groups=3, n_names=3, n_desc=4)
    shifted = df.copy()
    shifted.loc[shifted.group == "g1", "ppl"] *= 7.0
    a, b = A.name_scores(df, value="ppl"), A.name_scores(shifted, value="ppl")
    assert a["name_score"].to_numpy() == pytest.approx(b["name_score"].to_numpy())


def test_stricter_test_robust_to_one_extreme_sentence_and_finds_planted():
    df = _sim_sentences(6)
    df.loc[0, "ppl"] = 1e6  # one extreme sentence of g0 inflates its APX ratio: all of g0 looks "likely"
    s = A.score_table(df)
    assert s["significant"].fillna(False).sum() == 0
    assert 0.02 < (s["p_value"] < 0.05).mean() < 0.09
    s = A.score_table(_sim_sentences(7, planted=1.0))
    hits = s[s["significant"].fillna(False).astype(bool)]
    found = {(g, d) for g, d in zip(hits.group, hits.descriptor)}
    planted = {("g0", f"d{i}") for i in range(5)}
    assert len(found & planted) >= 4 and len(found - planted) <= 1


def test_validation_three_template_variant():
    """Template 2 = 3 x template 1: APX ratios are scale-free and min-max normalisation removes the scale, so
    the normalised template average ranks like template 1 alone (same accuracy and MRR)."""
    mapping = {"ENGLISH": "white", "CHINESE": "asian", "ARAB": "arab", "HISPANIC": "hispanic"}
    t1 = validation_table()
    t1 = t1[t1.template == 1]
    both = pd.concat([t1, t1.assign(template=2, ppl=t1.ppl * 3)], ignore_index=True)
    one, _ = A.validation(both, mapping, template=1)
    avg, _ = A.validation(both, mapping, template=(1, 2))
    assert avg[["accuracy", "mrr"]].to_numpy() == pytest.approx(one[["accuracy", "mrr"]].to_numpy())
    with pytest.raises(ValueError, match="inputs have"):
        A.validation(t1, mapping, template=(1, 3))


def test_validation_intervals():
    """Accuracy: the Wilson score interval by hand, (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n);
    MRR: a percentile bootstrap over descriptors, degenerate when every descriptor has the same reciprocal
    rank, and containing the estimate otherwise."""
    import math

    z = 1.959963984540054
    k, n = 7, 10
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(centre - half, abs=1e-12) and hi == pytest.approx(centre + half, abs=1e-12)
    def mrr_interval(rr):  # what validation() applies: the mean over descriptors, one descriptor per cluster
        return cluster_bootstrap(rr, np.ones(len(rr)), n_resamples=2000, seed=0).confidence_interval

    assert mrr_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)
    rr = [1, 0.5, 1 / 3, 1, 0.25, 1, 0.5]
    lo, hi = mrr_interval(rr)
    assert min(rr) <= lo < sum(rr) / len(rr) < hi <= max(rr)
    assert mrr_interval(rr) == (lo, hi)  # seeded
    mapping = {"ENGLISH": "white", "CHINESE": "asian", "ARAB": "arab", "HISPANIC": "hispanic"}
    s = A.validation(validation_table(), mapping)[0].set_index("measure")
    assert s.loc["ppl", "accuracy_ci_low"] == 0.0 and s.loc["ppl", "mrr_ci_low"] == s.loc["ppl", "mrr_ci_high"] == 0.5
    assert s.loc["apx", "accuracy_ci_low"] == pytest.approx(wilson_interval(2, 2)[0])


def test_figure1_descriptors_and_plot():
    """Descriptors with a flagged group come first, the most extreme outlier first; the plot's line sits at
    mean - 2.326 sd (computed here with numpy)."""
    from stereoprobe.globalbias.plots import figure1, figure1_descriptors

    rows = []
    for d, low in (("calm", 0.0), ("tall", 0.3), ("kind", None)):
        for g in range(12):
            score = 0.5 + 0.01 * g
            if low is not None and g == 0:
                score = low
            rows.append({"descriptor": d, "group": f"G{g}", "score": score})
    s = pd.DataFrame(rows)
    s["flagged"] = A.reference_flags(s)
    assert figure1_descriptors(s, n=2) == ["calm", "tall"]
    fig = figure1(s, "calm")
    sub = s[s.descriptor == "calm"]["score"].to_numpy()
    line = fig.axes[0].lines[0].get_ydata()[0]
    assert line == pytest.approx(sub.mean() - 2.3263478740408408 * sub.std(ddof=1))


def test_validation_mrr_rounds_pooled_means_like_the_reference():
    """Notebook 7 ranks the pooled means rounded to 2 d.p.: target arab at 10.004 vs asian at 10.001 ties at
    10.00 (ties in the groups' name order: arab first) -> reciprocal rank 1; unrounded asian < arab -> 1/2.
    Accuracy (notebook 6, per gender, rounded too) moves the same way: correct rounded, wrong unrounded."""
    mapping = {"ENGLISH": "white", "CHINESE": "asian", "ARAB": "arab", "HISPANIC": "hispanic"}
    ppl = {"ARAB": 10.004, "CHINESE": 10.001, "ENGLISH": 20.0, "HISPANIC": 30.0}
    d = pd.DataFrame([{"group": f"{e}_F", "name": f"n{e}", "descriptor": "d", "template": 1, "ethnicity": e,
                       "gender": "F", "target": "arab", "ppl": v} for e, v in ppl.items()])
    faithful = A.validation(d, mapping)[0].set_index("measure")
    exact = A.validation(d, mapping, faithful_rounding=False)[0].set_index("measure")
    assert faithful.loc["ppl", "mrr"] == 1.0 and exact.loc["ppl", "mrr"] == 0.5
    assert faithful.loc["ppl", "accuracy"] == 1.0 and exact.loc["ppl", "accuracy"] == 0.0


def _notebook_summary(df: pd.DataFrame, outer: list[str]) -> pd.DataFrame:
    """Notebooks 6/7 ``get_summary_df`` on columns Gender, Ethnicity Group, Target Ethnicity, descriptor, ppl:
    nested loops over ``.unique()`` values, rounded means, then ``sort_values(by='descriptor')``."""
    rows = []
    for combo in itertools.product(*(df[c].unique() for c in outer)):
        for target, desc in itertools.product(df["Target Ethnicity"].unique(), df["descriptor"].unique()):
            mask = (df["Target Ethnicity"] == target) & (df["descriptor"] == desc)
            for c, v in zip(outer, combo):
                mask &= df[c] == v
            if mask.any():
                rows.append({**dict(zip(outer, combo)), "Average Perplexity": round(df[mask]["ppl"].mean(), 2),
                             "descriptor": desc, "Target Ethnicity": target})
    return pd.DataFrame(rows).sort_values(by="descriptor")


def _notebook_scores(df: pd.DataFrame) -> tuple[float, float]:
    """Accuracy (notebook 6, ``get_min_perplexities``) and MRR (notebook 7, ``get_mrr_df``, unrounded)."""
    s6 = _notebook_summary(df, ["Gender", "Ethnicity Group"])
    best = s6.loc[s6.groupby(["descriptor", "Target Ethnicity"])["Average Perplexity"].idxmin()]
    accuracy = float((best["Ethnicity Group"] == best["Target Ethnicity"]).sum() / len(best))
    s7 = _notebook_summary(df, ["Ethnicity Group"])
    rr = []
    for desc in s7["descriptor"].unique():
        ranked = s7[s7["descriptor"] == desc].sort_values(by="Average Perplexity").reset_index(drop=True)
        rr.append(1.0 / (ranked[ranked["Ethnicity Group"] == ranked.iloc[0]["Target Ethnicity"]].index[0] + 1))
    return accuracy, float(np.mean(rr))


def test_validation_ties_broken_as_the_notebooks():
    """Equal rounded means: the group chosen (accuracy) and the rank (MRR) follow the notebooks' row order and
    pandas' default (unstable) sort, computed here by the notebooks' own steps on the same sentences; the
    groups' name order (a stable sort over sorted keys) gives other figures on this input."""
    mapping = {"HISPANIC": "hispanic", "ENGLISH": "white", "ARAB": "arab", "CHINESE": "asian"}
    rng = np.random.default_rng(3)
    rows = []
    for k in range(12):
        target = list(mapping.values())[k % 4]
        for e in mapping:
            for g in ("M", "F"):
                ppl = 10.0 if k % 3 else float(rng.choice([10.0, 10.001, 10.2]))  # ties at 2 d.p.
                rows.append({"group": f"{e}_{g}", "name": f"n{e}{g}", "descriptor": f"d{(7 * k) % 12:02d}",
                             "template": 1, "ethnicity": e, "gender": g, "target": target, "ppl": ppl})
    d = pd.DataFrame(rows)
    got = A.validation(d, mapping)[0].set_index("measure").loc["ppl"]
    nb = d.assign(**{"Gender": d["gender"], "Ethnicity Group": d["ethnicity"].map(mapping),
                     "Target Ethnicity": d["target"]})
    accuracy, mrr = _notebook_scores(nb)
    assert got["accuracy"] == pytest.approx(accuracy) and got["mrr"] == pytest.approx(mrr)
    by_name = nb.groupby(["descriptor", "Target Ethnicity", "Ethnicity Group"], sort=True)["ppl"].mean().round(2)
    name_rr = [1.0 / (list(s.sort_values(kind="stable").index.get_level_values(2)).index(t) + 1)
               for (_, t), s in by_name.groupby(level=[0, 1])]
    assert float(np.mean(name_rr)) != pytest.approx(mrr)  # the input does tell the two tie rules apart
