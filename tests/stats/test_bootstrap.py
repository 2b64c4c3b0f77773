"""The cluster bootstrap against scipy's bootstrap, a naive resampling, and coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sst

from stereoprobe.stats.bootstrap import bh_count_bootstrap, cluster_bootstrap
from stereoprobe.stats.multiple_testing import bh_reject


def test_cluster_bootstrap_degenerate_and_seeded():
    # identical clusters: every draw gives the same sum and ratio
    assert cluster_bootstrap([2, 2, 2], None, n_resamples=200).confidence_interval == (6.0, 6.0)
    assert cluster_bootstrap([1, 1], [2, 2], n_resamples=200).confidence_interval == (0.5, 0.5)
    assert cluster_bootstrap([0.5, 0.5, 0.5], [1, 1, 1]).confidence_interval == (0.5, 0.5)
    a = cluster_bootstrap([0, 1, 5, 2], [1, 1, 1, 1], n_resamples=500, seed=3).confidence_interval
    assert a == cluster_bootstrap([0, 1, 5, 2], [1, 1, 1, 1], n_resamples=500, seed=3).confidence_interval
    assert 0 <= a[0] <= 2 <= a[1] <= 5  # the mean 2 lies inside, bounds within the data range
    assert all(math.isnan(v) for v in cluster_bootstrap([], None).confidence_interval)
    assert all(math.isnan(v) for v in cluster_bootstrap([1, 2], [0, 0]).confidence_interval)


def test_cluster_bootstrap_matches_scipy():
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 6, size=40).astype(float)
    sums = counts * rng.uniform(20, 80, size=40)
    c_ci = cluster_bootstrap(counts, n_resamples=20000, seed=1).confidence_interval
    m = cluster_bootstrap(sums, counts, n_resamples=20000, seed=1)
    ref_c = sst.bootstrap((counts,), np.sum, n_resamples=20000, method="percentile", rng=np.random.default_rng(2))
    ref_m = sst.bootstrap((counts, sums), lambda c, s, axis=-1: s.sum(axis=axis) / c.sum(axis=axis),
                          paired=True, vectorized=True, n_resamples=20000, method="percentile",
                          rng=np.random.default_rng(2))
    width_c = ref_c.confidence_interval.high - ref_c.confidence_interval.low
    width_m = ref_m.confidence_interval.high - ref_m.confidence_interval.low
    assert c_ci == pytest.approx(tuple(ref_c.confidence_interval), abs=0.05 * width_c)
    assert m.confidence_interval == pytest.approx(tuple(ref_m.confidence_interval), abs=0.05 * width_m)
    assert m.standard_error == pytest.approx(ref_m.standard_error, rel=0.05)


def test_cluster_bootstrap_draws_are_the_multinomial_resamples():
    """Hand-built: the resampled ratios are Σ w num / Σ w den with numpy's multinomial weights of the seed."""
    num, den = np.array([3.0, 0.0, 8.0]), np.array([1.0, 2.0, 4.0])
    res = cluster_bootstrap(num, den, n_resamples=50, confidence_level=0.8, seed=7)
    w = np.random.default_rng(7).multinomial(3, [1 / 3] * 3, size=50)
    ratios = (w @ num) / (w @ den)
    assert np.array_equal(res.bootstrap_distribution, ratios)
    assert res.confidence_interval == tuple(np.quantile(ratios, [0.1, 0.9]))


@pytest.mark.parametrize("ratio", [False, True])
def test_cluster_bootstrap_coverage_by_simulation(ratio):
    """Mean of 40 normal clusters (ratio with unit sizes), and the mean of the planted S over biased instances
    (cluster counts and sums): the 95% interval covers the true value in about 95% of samples."""
    rng = np.random.default_rng(7 if ratio else 11)
    hits, reps = 0, 200
    for i in range(reps):
        if ratio:
            x = rng.normal(1.0, 1.0, 40)
            lo, hi = cluster_bootstrap(x, np.ones(40), n_resamples=400, seed=i).confidence_interval
            hits += lo <= 1.0 <= hi
        else:
            counts = rng.poisson(3, size=60).astype(float)
            sums = np.array([rng.uniform(20, 60, int(c)).sum() for c in counts])
            lo, hi = cluster_bootstrap(sums, counts, n_resamples=500, seed=int(rng.integers(1 << 30))).confidence_interval
            hits += lo <= 40.0 <= hi
    assert 0.88 <= hits / reps <= 0.99


def test_bh_count_bootstrap_matches_a_naive_resampling():
    # the same multinomial draws, then BH on the concatenated p-values of the drawn clusters
    rng = np.random.default_rng(2)
    clusters = np.repeat([f"d{i:02d}" for i in range(12)], 5)
    p = np.where(rng.random(60) < 0.3, rng.uniform(0, 0.004, 60), rng.uniform(0, 1, 60))
    lo, hi = bh_count_bootstrap(p, clusters, alpha=0.05, n_resamples=300, seed=4).confidence_interval
    names = sorted(set(clusters))
    w = np.random.default_rng(4).multinomial(12, np.full(12, 1 / 12), size=300)
    naive = []
    for row in w:
        drawn = np.concatenate([np.repeat(p[clusters == n], c) for n, c in zip(names, row) if c])
        naive.append(int(bh_reject(drawn, 0.05).sum()))
    elo, ehi = np.quantile(naive, [0.025, 0.975])
    assert (lo, hi) == (float(elo), float(ehi))
    assert lo <= int(bh_reject(p, 0.05).sum()) <= hi
    assert all(math.isnan(v) for v in bh_count_bootstrap([], []).confidence_interval)
