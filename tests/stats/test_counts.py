"""The exact Poisson interval against statsmodels and scipy, and the leaderboard's one count interval."""

from __future__ import annotations

import math

import pytest
from scipy import stats
from statsmodels.stats.rates import confint_poisson

from stereoprobe.stats.counts import count_interval, poisson_exact_interval


@pytest.mark.parametrize("k", [0, 1, 2, 4, 17, 250])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_matches_statsmodels_exact_c(k: int, level: float) -> None:
    low, high = confint_poisson(k, 1, method="exact-c", alpha=1 - level)
    ours = poisson_exact_interval(k, level)
    assert ours.low == pytest.approx(float(low), abs=1e-9) and ours.high == pytest.approx(float(high), rel=1e-9)


@pytest.mark.parametrize("k", [1, 4, 17])
def test_bounds_are_where_the_one_sided_exact_tests_sit_at_alpha_half(k: int) -> None:
    low, high = poisson_exact_interval(k, 0.95)
    assert stats.poisson.sf(k - 1, low) == pytest.approx(0.025, rel=1e-6)  # P(X >= k | low)
    assert stats.poisson.cdf(k, high) == pytest.approx(0.025, rel=1e-6)  # P(X <= k | high)


def test_zero_is_never_certain_and_bad_counts_are_nan() -> None:
    assert poisson_exact_interval(0) == (0.0, pytest.approx(-math.log(0.025)))  # P(X=0 | mu) = 0.025
    assert count_interval(0, (0.0, 0.0)).high > 3.6
    assert count_interval(3, (1.0, 9.0)) == (pytest.approx(0.6187, abs=1e-4), pytest.approx(9.0))
    assert count_interval(3, (float("nan"), float("nan"))) == poisson_exact_interval(3)
    for bad in (-1, 2.5, float("nan"), None):
        assert all(math.isnan(b) for b in poisson_exact_interval(bad))
