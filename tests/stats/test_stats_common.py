"""The shared interval pieces: the level check, the critical value and the percentile interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from stereoprobe.stats.common import ConfidenceInterval, check_confidence_level, critical_z, percentile_interval


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_critical_z_matches_scipy(level):
    assert critical_z(level) == pytest.approx(stats.norm.interval(level)[1], rel=1e-14)


@pytest.mark.parametrize("bad", [0, 1, 95, -0.5, float("nan")])
def test_confidence_level_must_lie_in_the_open_unit_interval(bad):
    with pytest.raises(ValueError, match="confidence_level"):
        check_confidence_level(bad)


def test_percentile_interval_is_numpy_quantiles_and_a_named_tuple():
    draws = np.random.default_rng(0).normal(size=1001)
    ci = percentile_interval(draws, 0.9)
    assert isinstance(ci, ConfidenceInterval)
    assert ci == pytest.approx(tuple(np.quantile(draws, [0.05, 0.95])), rel=1e-12)
    lo, hi = ci
    assert (lo, hi) == (ci.low, ci.high)
    assert all(math.isnan(b) for b in percentile_interval(np.empty(0)))
