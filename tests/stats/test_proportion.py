"""Wilson, Newcombe and the pooled z-test against statsmodels, scipy and the closed forms worked by hand."""

from __future__ import annotations

import math

import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, proportions_ztest

from stereoprobe.stats.proportion import (
    newcombe_interval,
    proportion,
    two_proportion_ztest,
    wilson_interval,
)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 200), (1, 3)])
def test_wilson_matches_statsmodels(k, n):
    lo, hi = wilson_interval(k, n)
    elo, ehi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(elo, abs=1e-12) and hi == pytest.approx(ehi, abs=1e-12)
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


@pytest.mark.parametrize("level", [0.8, 0.9, 0.99])
@pytest.mark.parametrize("k,n", [(0, 7), (4, 9), (250, 1000)])
def test_wilson_levels_match_statsmodels_and_scipy(k, n, level):
    ours = wilson_interval(k, n, confidence_level=level)
    assert ours == pytest.approx(proportion_confint(k, n, alpha=1 - level, method="wilson"), abs=1e-12)
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert ours == pytest.approx((ref.low, ref.high), abs=1e-12)
    res = proportion(k, n)
    assert res.statistic == k / n and res.confidence_interval(confidence_level=level) == ours


def test_wilson_matches_the_closed_form():
    z = 1.959963984540054  # Phi^-1(0.975)
    for k, n in [(0, 10), (3, 40), (17, 17), (250, 1000)]:
        centre = (k + z * z / 2) / (n + z * z)
        half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
        assert wilson_interval(k, n) == pytest.approx((max(0, centre - half), min(1, centre + half)), abs=1e-12)
    # the other spelling: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    k, n = 7, 10
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(centre - half, abs=1e-12) and hi == pytest.approx(centre + half, abs=1e-12)


def test_wilson_bounds_are_exact_at_the_ends_and_inputs_checked():
    assert wilson_interval(0, 2).low == 0.0 and wilson_interval(2, 2).high == 1.0
    assert math.isnan(proportion(0, 0).statistic)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson_interval(5, 3)
    with pytest.raises(ValueError, match="confidence_level"):
        wilson_interval(1, 3, confidence_level=95)


def test_wilson_coverage_by_simulation():
    """Wilson's 95% interval covers p = 0.3 in about 95% of samples of n = 50 (binomial acceptance band)."""
    import numpy as np

    rng = np.random.default_rng(4)
    reps = 2000
    ks = rng.binomial(50, 0.3, reps)
    hits = sum(lo <= 0.3 <= hi for lo, hi in (wilson_interval(int(k), 50) for k in ks))
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.95) / reps
    assert lo - 0.02 <= hits / reps <= hi  # Wilson is slightly liberal at some p; 0.02 slack


@pytest.mark.parametrize("k1,n1,k2,n2", [(20, 50, 10, 50), (3, 40, 9, 35), (0, 30, 5, 30), (44, 44, 40, 50)])
def test_newcombe_matches_statsmodels(k1, n1, k2, n2):
    lo, hi = newcombe_interval(k1, n1, k2, n2)
    elo, ehi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
    assert lo == pytest.approx(elo, abs=1e-10) and hi == pytest.approx(ehi, abs=1e-10)
    assert all(math.isnan(v) for v in newcombe_interval(1, 0, 1, 2))


@pytest.mark.parametrize("k1,n1,k2,n2", [(20, 50, 10, 50), (3, 40, 9, 35), (12, 30, 12, 30)])
def test_two_proportion_z_matches_statsmodels(k1, n1, k2, n2):
    zref, ref = proportions_ztest([k1, k2], [n1, n2])
    res = two_proportion_ztest(k1, n1, k2, n2)
    assert res.pvalue == pytest.approx(ref, rel=1e-10)
    assert res.statistic == pytest.approx(zref, rel=1e-10, abs=1e-12)
    assert two_proportion_ztest(0, 10, 0, 10).pvalue == 1.0
    assert all(math.isnan(v) for v in two_proportion_ztest(1, 0, 1, 2))
