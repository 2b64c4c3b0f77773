"""The t and χ² functions from ``scipy.special`` against ``scipy.stats`` itself, bit for bit, edges included."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stereoprobe.stats.distributions import chi2_ppf, t_cdf, t_sf

INF, NAN = np.inf, np.nan
X = np.array([-INF, -1e300, -40.0, -6.5, -2.1153, -1.0, -1e-12, -0.0, 0.0, 3e-9, 0.5, 1.96, 2.1153, 9.0, 37.5,
              1e300, INF, NAN])
DF = np.array([-1.0, 0.0, NAN, 1e-3, 0.5, 1.0, 2.0, 3.7, 6.9467, 30.0, 998.0, 1e7, 1e20, INF])
Q = np.array([-0.1, 0.0, 1e-300, 1e-12, 0.005, 0.025, 0.3, 0.5, 0.975, 0.995, 1 - 1e-12, 1.0, 1.1, NAN])


def _same(a, b) -> bool:
    """Equal arrays, NaN where the other is NaN, and the same type and shape (a scalar stays a scalar)."""
    return type(a) is type(b) and np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("ours, ref", [(t_cdf, stats.t.cdf), (t_sf, stats.t.sf)])
def test_t_functions_are_scipy_stats_bit_for_bit(ours, ref):
    x, df = np.meshgrid(X, DF)
    with np.errstate(all="ignore"):
        assert _same(ours(x, df), ref(x, df))
        assert _same(ours(X, 6.9467), ref(X, 6.9467))  # broadcast
        for a, d in [(-2.1153, 6.9467), (1.0, 0.0), (NAN, 3.0), (INF, 2.0), (-INF, 2.0), (0.0, INF)]:
            assert _same(ours(a, d), ref(a, d)), (a, d)


def test_chi2_ppf_is_scipy_stats_bit_for_bit():
    q, df = np.meshgrid(Q, np.concatenate([DF, [2 * 4.0, 2 * 4.0 + 2, 2 * 1000.0, 2 * 1001.0]]))
    with np.errstate(all="ignore"):
        assert _same(chi2_ppf(q, df), stats.chi2.ppf(q, df))
        for a, d in [(0.025, 8), (0.975, 2), (0.0, 2), (1.0, 2), (0.5, -1), (NAN, 2)]:
            assert _same(chi2_ppf(a, d), stats.chi2.ppf(a, d)), (a, d)


def test_random_arguments_match():
    rng = np.random.default_rng(44)
    x, df, q = rng.normal(0, 4, 5000), rng.lognormal(1.5, 2.0, 5000), rng.uniform(0, 1, 5000)
    assert _same(t_cdf(x, df), stats.t.cdf(x, df)) and _same(t_sf(x, df), stats.t.sf(x, df))
    assert _same(chi2_ppf(q, df), stats.chi2.ppf(q, df))
