"""Wilcoxon signed-rank and exact McNemar against scipy, statsmodels and hand-worked values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from stereoprobe.stats.paired import mcnemar_exact, wilcoxon_signed_rank


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_exact_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    d = rng.normal(0.3 * (seed % 3), 1, 5 + 7 * seed)  # continuous: no ties, no zeros
    t, p, n = wilcoxon_signed_rank(d, method="exact")
    ref = stats.wilcoxon(d, method="exact", zero_method="wilcox")
    r_plus = float(stats.rankdata(np.abs(d))[d > 0].sum())
    assert t == r_plus and n == len(d)
    assert p == pytest.approx(ref.pvalue, rel=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_approx_with_ties_and_zeros_matches_scipy(seed):
    rng = np.random.default_rng(100 + seed)
    d = rng.integers(-4, 6, 30 + 10 * seed).astype(float)  # many ties and zeros
    res = wilcoxon_signed_rank(d)  # auto -> approx because of ties
    ref = stats.wilcoxon(d, method="approx", zero_method="wilcox", correction=False)
    assert res.n == int(np.sum(d != 0))
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_wilcoxon_hand_worked():
    # d = 1, 2, 3 (all positive): T+ = 6; exact two-sided p = 2 * P(T+ >= 6) = 2 * 1/8
    assert wilcoxon_signed_rank([1.0, 2.0, 3.0]) == (6.0, 0.25, 3)
    assert wilcoxon_signed_rank([0.0, 0.0]) == (0.0, 1.0, 0)
    with pytest.raises(ValueError, match="untied"):
        wilcoxon_signed_rank([1.0, 1.0, -2.0], method="exact")


@pytest.mark.parametrize("b,c", [(0, 0), (5, 1), (1, 5), (12, 12), (30, 11), (0, 9)])
def test_mcnemar_matches_statsmodels(b, c):
    ref = mcnemar(np.array([[7, b], [c, 4]]), exact=True)
    res = mcnemar_exact(b, c)
    assert res.pvalue == pytest.approx(min(1.0, ref.pvalue), rel=1e-12)
    assert res.statistic == ref.statistic


def test_mcnemar_hand_worked():
    # b=0, c=3: p = 2 * (1/2)^3 = 0.25
    assert mcnemar_exact(0, 3).pvalue == pytest.approx(0.25)


def test_wilcoxon_type_i_error_by_simulation():
    """Under H0 (symmetric differences) the 5% test rejects in about 5% of samples."""
    rng = np.random.default_rng(9)
    reps = 1000
    rejections = sum(wilcoxon_signed_rank(rng.normal(0, 1, 25)).pvalue < 0.05 for _ in range(reps))
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.05) / reps
    assert lo <= rejections / reps <= hi


def test_paired_differences_by_hand_and_with_clusters():
    """Mean difference and the paired tests by hand; the interval is the cluster bootstrap of the per-cluster
    sums and sizes (worked out here with numpy), clusters in sorted order."""
    from stereoprobe.stats.bootstrap import cluster_bootstrap
    from stereoprobe.stats.paired import paired_mean_difference, paired_share_difference

    x, y = np.array([3.0, 5.0, 4.0, 6.0, 1.0]), np.array([1.0, 2.0, 4.0, 3.0, 2.0])
    clusters = np.array(["t2", "t1", "t2", "t3", "t1"])
    res = paired_mean_difference(x, y, clusters, n_resamples=400, confidence_level=0.9, seed=2)
    d = x - y  # 2, 3, 0, 3, -1
    assert res.statistic == pytest.approx(1.4) and res.n == 5
    assert res.pvalue == pytest.approx(stats.wilcoxon(d, zero_method="wilcox", correction=False,
                                                      method="approx").pvalue, rel=1e-12)
    sums, sizes = np.array([3 - 1, 2 + 0, 3.0]), np.array([2.0, 2.0, 1.0])  # t1, t2, t3
    assert res.confidence_interval == cluster_bootstrap(sums, sizes, 400, 0.9, 2).confidence_interval
    xs, ys = [True, True, False, True, False], [False, True, False, False, True]
    share = paired_share_difference(xs, ys, clusters, n_resamples=400, seed=2)
    assert share.statistic == pytest.approx(3 / 5 - 2 / 5)
    assert share.pvalue == pytest.approx(mcnemar(np.array([[1, 2], [1, 1]]), exact=True).pvalue)  # b=2, c=1
    est, ci, p, n = paired_share_difference(xs, ys)  # no clusters: every item its own cluster
    assert n == 5 and ci == cluster_bootstrap(np.array([1, 0, 0, 1, -1.0]), np.ones(5)).confidence_interval


@pytest.mark.parametrize("seed", range(8))
def test_paired_cluster_t_equals_statsmodels_cluster_robust_ols(seed):
    import statsmodels.api as sm

    from stereoprobe.stats.paired import paired_cluster_t

    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 60))
    clusters = rng.integers(0, int(rng.integers(3, 12)), n)
    x, y = rng.normal(0.2, 1, n), rng.normal(0, 1, n)
    res = paired_cluster_t(x, y, clusters, 0.9)
    fit = sm.OLS(x - y, np.ones(n)).fit(cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True)
    assert res.statistic == pytest.approx(float(fit.params[0]), rel=1e-12)
    assert res.standard_error == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert res.pvalue == pytest.approx(float(fit.pvalues[0]), rel=1e-9)
    assert list(res.confidence_interval) == pytest.approx(list(fit.conf_int(alpha=0.1)[0]), rel=1e-9)


def test_paired_cluster_t_one_item_per_cluster_is_the_one_sample_t_test():
    from stereoprobe.stats.paired import paired_cluster_t

    rng = np.random.default_rng(3)
    d = rng.normal(0.3, 1, 25)
    res = paired_cluster_t(d, np.zeros(25))
    ref = stats.ttest_1samp(d, 0.0)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert list(res.confidence_interval) == pytest.approx(list(ref.confidence_interval(0.95)), rel=1e-10)


def test_paired_cluster_t_degenerate_cases():
    from stereoprobe.stats.paired import paired_cluster_t

    same = paired_cluster_t([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], ["a", "b", "c"])
    assert same.pvalue == 1.0 and tuple(same.confidence_interval) == (0.0, 0.0)
    shifted = paired_cluster_t([2.0, 2.0], [1.0, 1.0], ["a", "b"])
    assert shifted.pvalue == 0.0 and tuple(shifted.confidence_interval) == (1.0, 1.0)
    one = paired_cluster_t([2.0, 3.0], [1.0, 1.0], ["a", "a"])
    assert np.isnan(one.pvalue) and np.isnan(one.confidence_interval.low)


@pytest.mark.parametrize("k1,n1,k2,n2", [(20, 50, 10, 50), (3, 7, 0, 9), (40, 41, 2, 30), (5, 100, 9, 120)])
def test_newcombe_pvalue_inverts_the_interval(k1, n1, k2, n2):
    from stereoprobe.stats.proportion import newcombe_interval, newcombe_pvalue

    p = newcombe_pvalue(k1, n1, k2, n2)
    for gamma in (p * 0.99, p * 1.01, 0.05, 0.5):
        if not 1e-9 < gamma < 1:  # a level within 1e-9 of 1 is not representable as 1 − γ
            continue
        lo, hi = newcombe_interval(k1, n1, k2, n2, 1 - gamma)
        assert (lo > 0 or hi < 0) == (p < gamma)
