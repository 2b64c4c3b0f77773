"""Pearson and Spearman with their intervals against scipy, a hand-worked Bonett–Wright interval and simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from stereoprobe.stats.correlation import average_ranks, fisher_z_interval, pearson, spearman

X = [1.0, 2.0, 2.5, 4.0, 3.0, 5.0]
Y = [1.5, 2.0, 3.0, 3.5, 4.0, 4.5]


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_pearson_matches_scipy(level):
    res = pearson(X, Y)
    ref = stats.pearsonr(X, Y)
    assert res.statistic == pytest.approx(ref.statistic, abs=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(confidence_level=level)  # scipy: Fisher z transform
    assert res.confidence_interval(confidence_level=level) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert res.n == 6 and res.method == "pearson"


def test_pearson_random_samples_match_scipy():
    rng = np.random.default_rng(0)
    for n in (5, 17, 200):
        x = rng.normal(size=n)
        y = 0.4 * x + rng.normal(size=n)
        res, ref = pearson(x, y), stats.pearsonr(x, y)
        assert res.statistic == pytest.approx(ref.statistic, abs=1e-12)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-8)
        assert res.confidence_interval() == pytest.approx(tuple(ref.confidence_interval()), abs=1e-12)


def test_nan_pairs_dropped_and_small_samples():
    res = pearson(X + [np.nan, 3.0], Y + [2.0, np.nan])
    assert res.n == 6 and res.statistic == pytest.approx(stats.pearsonr(X, Y).statistic)
    three = pearson([1, 2, 3], [1, 3, 2])
    assert three.n == 3 and all(math.isnan(b) for b in three.confidence_interval())
    perfect = spearman([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert perfect.statistic == 1.0 and perfect.pvalue == 0.0 and perfect.confidence_interval() == (1.0, 1.0)
    with pytest.raises(ValueError, match="same length"):
        pearson([1, 2], [1, 2, 3])


def test_spearman_hand_worked_bonett_wright():
    # ranks X: 1 2 3 5 4 6; ranks Y: 1 2 3 4 5 6; sum d^2 = 2 -> rho = 1 - 6*2/(6*35)
    rho = 1 - 12 / 210
    res = spearman(X, Y)
    assert res.statistic == pytest.approx(rho, abs=1e-12)
    ref = stats.spearmanr(X, Y)
    assert res.statistic == pytest.approx(ref.statistic) and res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    # Bonett & Wright (2000): se(z) = sqrt((1 + rho^2/2) / (n - 3)); worked by hand: z = 0.5 ln(34) = 1.76318,
    # se = 0.69390, 1.95996 * se = 1.36002 -> tanh(0.40316) = 0.38264, tanh(3.12320) = 0.99614
    lo, hi = res.confidence_interval()
    assert lo == pytest.approx(0.38264, abs=2e-5) and hi == pytest.approx(0.99614, abs=2e-5)
    assert res.confidence_interval(method="bonett-wright") == (lo, hi)


def test_spearman_ties_match_scipy_and_ranks():
    x = [1, 2, 2, 3, 4, 4, 4, 5, 1, 3]
    y = [2, 1, 3, 3, 5, 4, 4, 5, 2, 2]
    assert spearman(x, y).statistic == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert average_ranks(x).tolist() == stats.rankdata(x).tolist()


def test_spearman_bootstrap_close_to_scipy_bootstrap():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.6 * x + rng.normal(size=40)
    ours = spearman(x, y).confidence_interval(method="bootstrap", n_resamples=4000, seed=1)
    ref = stats.bootstrap(
        (x, y), lambda a, b: stats.spearmanr(a, b).statistic, paired=True, vectorized=False,
        n_resamples=4000, method="percentile", rng=np.random.default_rng(2),
    ).confidence_interval
    assert ours.low == pytest.approx(ref.low, abs=0.04) and ours.high == pytest.approx(ref.high, abs=0.04)
    assert ours == spearman(x, y).confidence_interval(method="bootstrap", n_resamples=4000, seed=1)  # seeded


def test_interval_methods_checked():
    with pytest.raises(ValueError, match="pearson interval method 'bootstrap'"):
        pearson(X, Y).confidence_interval(method="bootstrap")
    with pytest.raises(ValueError, match="spearman interval method 'fisher-z'"):
        spearman(X, Y).confidence_interval(method="fisher-z")


def test_fisher_z_by_hand():
    # r = 0.5, n = 40: atanh(0.5) = 0.549306, se = 1/sqrt(37) = 0.164399, ± 1.959964 se = ± 0.322216
    lo, hi = fisher_z_interval(0.5, 1 / math.sqrt(37))
    assert lo == pytest.approx(math.tanh(0.549306 - 0.322216), abs=2e-6)
    assert hi == pytest.approx(math.tanh(0.549306 + 0.322216), abs=2e-6)


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_interval_coverage_by_simulation(method):
    """95% intervals cover the population value in ~95% of samples (bivariate normal, rho = 0.5, n = 40);
    the population Spearman rho of a bivariate normal is 6/pi asin(rho/2) (Pearson 1907)."""
    rng = np.random.default_rng(12)
    rho, n, reps = 0.5, 40, 400
    target = rho if method == "pearson" else 6 / math.pi * math.asin(rho / 2)
    hits = 0
    for _ in range(reps):
        x, y = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n).T
        lo, hi = (pearson if method == "pearson" else spearman)(x, y).confidence_interval()
        hits += lo <= target <= hi
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.95) / reps  # 99.9% acceptance band
    assert lo <= hits / reps <= hi
