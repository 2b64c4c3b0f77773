"""The leaderboard's statistics against independent implementations (scipy, statsmodels) and hand-worked values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, proportions_ztest

from stereoprobe.leaderboard.paired import (
    cluster_bootstrap,
    jaccard,
    mcnemar_exact,
    newcombe_interval,
    two_proportion_z,
    wilcoxon_signed_rank,
    wilson_interval,
)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 200), (1, 3)])
def test_wilson_matches_statsmodels(k, n):
    lo, hi = wilson_interval(k, n)
    elo, ehi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(elo, abs=1e-12) and hi == pytest.approx(ehi, abs=1e-12)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


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
    _, p, n = wilcoxon_signed_rank(d)  # auto -> approx because of ties
    ref = stats.wilcoxon(d, method="approx", zero_method="wilcox", correction=False)
    assert n == int(np.sum(d != 0))
    assert p == pytest.approx(ref.pvalue, rel=1e-9)


def test_wilcoxon_hand_worked():
    # d = 1, 2, 3 (all positive): T+ = 6; exact two-sided p = 2 * P(T+ >= 6) = 2 * 1/8
    assert wilcoxon_signed_rank([1.0, 2.0, 3.0]) == (6.0, 0.25, 3)
    assert wilcoxon_signed_rank([0.0, 0.0]) == (0.0, 1.0, 0)


@pytest.mark.parametrize("b,c", [(0, 0), (5, 1), (1, 5), (12, 12), (30, 11), (0, 9)])
def test_mcnemar_matches_statsmodels(b, c):
    ref = mcnemar(np.array([[7, b], [c, 4]]), exact=True).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(min(1.0, ref), rel=1e-12)


def test_mcnemar_hand_worked():
    # b=0, c=3: p = 2 * (1/2)^3 = 0.25
    assert mcnemar_exact(0, 3) == pytest.approx(0.25)


@pytest.mark.parametrize("k1,n1,k2,n2", [(20, 50, 10, 50), (3, 40, 9, 35), (0, 30, 5, 30), (44, 44, 40, 50)])
def test_newcombe_matches_statsmodels(k1, n1, k2, n2):
    lo, hi = newcombe_interval(k1, n1, k2, n2)
    elo, ehi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
    assert lo == pytest.approx(elo, abs=1e-10) and hi == pytest.approx(ehi, abs=1e-10)


@pytest.mark.parametrize("k1,n1,k2,n2", [(20, 50, 10, 50), (3, 40, 9, 35), (12, 30, 12, 30)])
def test_two_proportion_z_matches_statsmodels(k1, n1, k2, n2):
    _, ref = proportions_ztest([k1, k2], [n1, n2])
    assert two_proportion_z(k1, n1, k2, n2) == pytest.approx(ref, rel=1e-10)
    assert two_proportion_z(0, 10, 0, 10) == 1.0


def test_jaccard():
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    assert math.isnan(jaccard(set(), set()))


def test_cluster_bootstrap_degenerate_and_seeded():
    # identical clusters: every draw gives the same sum and ratio
    assert cluster_bootstrap([2, 2, 2], None, n_boot=200) == (6.0, 6.0)
    assert cluster_bootstrap([1, 1], [2, 2], n_boot=200) == (0.5, 0.5)
    a = cluster_bootstrap([0, 1, 5, 2], [1, 1, 1, 1], n_boot=500, seed=3)
    assert a == cluster_bootstrap([0, 1, 5, 2], [1, 1, 1, 1], n_boot=500, seed=3)
    assert 0 <= a[0] <= 2 <= a[1] <= 5  # the mean 2 lies inside, bounds within the data range
    assert all(math.isnan(v) for v in cluster_bootstrap([], None))


def test_cluster_bootstrap_covers_the_mean():
    # coverage of the percentile interval of a mean of 40 normal clusters, close to the nominal 95%
    rng = np.random.default_rng(7)
    hits = 0
    for i in range(200):
        x = rng.normal(1.0, 1.0, 40)
        lo, hi = cluster_bootstrap(x, np.ones(40), n_boot=400, seed=i)
        hits += lo <= 1.0 <= hi
    assert 0.88 <= hits / 200 <= 0.99


def test_bh_count_bootstrap_matches_a_naive_resampling():
    # the same multinomial draws, then BH on the concatenated p-values of the drawn clusters
    from stereoprobe.leaderboard.paired import bh_count_bootstrap
    from stereoprobe.stats.multiple_testing import bh_reject

    rng = np.random.default_rng(2)
    clusters = np.repeat([f"d{i:02d}" for i in range(12)], 5)
    p = np.where(rng.random(60) < 0.3, rng.uniform(0, 0.004, 60), rng.uniform(0, 1, 60))
    lo, hi = bh_count_bootstrap(p, clusters, alpha=0.05, n_boot=300, seed=4)
    names = sorted(set(clusters))
    w = np.random.default_rng(4).multinomial(12, np.full(12, 1 / 12), size=300)
    naive = []
    for row in w:
        drawn = np.concatenate([np.repeat(p[clusters == n], c) for n, c in zip(names, row) if c])
        naive.append(int(bh_reject(drawn, 0.05).sum()))
    elo, ehi = np.quantile(naive, [0.025, 0.975])
    assert (lo, hi) == (float(elo), float(ehi))
    assert lo <= int(bh_reject(p, 0.05).sum()) <= hi
