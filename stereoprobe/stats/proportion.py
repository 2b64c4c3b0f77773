"""Binomial proportions: the Wilson score interval, Newcombe's interval of a difference, the pooled z-test.

- :func:`wilson_interval` — Wilson (1927), "Probable inference, the law of succession, and statistical
  inference", JASA 22:209–212. For ``k`` successes in ``n`` trials, ``p̂ = k/n`` and ``z = z_{1−α/2}``:

      centre = (k + z²/2) / (n + z²),   half-width = z √(k(n − k)/n + z²/4) / (n + z²),

  the set of ``p`` whose score test ``|p̂ − p| / √(p(1 − p)/n) ≤ z`` accepts. Bounds are exactly 0 when
  ``k = 0`` and exactly 1 when ``k = n``. Computed by ``statsmodels.stats.proportion.proportion_confint(k, n,
  alpha=1 − confidence_level, method="wilson")``; the tests check it against the formula above and scipy's
  ``binomtest(k, n).proportion_ci(method="wilson")``.
- :func:`newcombe_interval` — Newcombe (1998), "Interval estimation for the difference between independent
  proportions: comparison of eleven methods", Stat. Med. 17:873–890, method 10 (hybrid score): with
  ``d = p̂₁ − p̂₂`` and the Wilson intervals ``(l_i, u_i)``,
  ``[d − √((p̂₁ − l₁)² + (u₂ − p̂₂)²), d + √((u₁ − p̂₁)² + (p̂₂ − l₂)²)]``
  (computed by ``statsmodels`` ``confint_proportions_2indep(..., method="newcomb", compare="diff")``).
- :func:`newcombe_pvalue` — the p-value that inverts Newcombe's interval: the smallest ``1 − level`` at which
  the interval excludes 0, so that a test at α and the ``1 − α`` interval always agree (the leaderboard's
  StereoTales comparisons use it with :func:`newcombe_interval`).
- :func:`two_proportion_ztest` — pooled two-sample z-test of ``p₁ = p₂``:
  ``z = (p̂₁ − p̂₂) / √(p̄(1 − p̄)(1/n₁ + 1/n₂))``, ``p̄ = (k₁ + k₂)/(n₁ + n₂)``, two-sided p from the normal
  (``statsmodels.stats.proportion.proportions_ztest``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from stereoprobe.stats.common import NAN_INTERVAL, ConfidenceInterval, check_confidence_level

__all__ = [
    "ProportionResult",
    "proportion",
    "wilson_interval",
    "newcombe_interval",
    "newcombe_pvalue",
    "ZTestResult",
    "two_proportion_ztest",
]


def wilson_interval(k: float, n: float, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval of the proportion ``k/n``; NaN bounds when ``n <= 0``.

    Parameters
    ----------
    k, n : float
        Successes and trials (``0 <= k <= n``; a weighted count may be fractional).
    confidence_level : float
        Two-sided level, 0.95 by default.

    Examples
    --------
    >>> wilson_interval(3, 10)  # doctest: +ELLIPSIS
    ConfidenceInterval(low=0.1077912674063..., high=0.6032218525388...)
    >>> wilson_interval(0, 10).low, round(wilson_interval(0, 10).high, 4)
    (0.0, 0.2775)
    >>> wilson_interval(0, 0)
    ConfidenceInterval(low=nan, high=nan)
    """
    from statsmodels.stats.proportion import proportion_confint

    if n <= 0:
        return NAN_INTERVAL
    if k < 0 or k > n:
        raise ValueError(f"wilson_interval: need 0 <= k <= n, got k={k}, n={n}")
    alpha = 1 - check_confidence_level(confidence_level)
    low, high = proportion_confint(k, n, alpha=alpha, method="wilson")
    low = 0.0 if k == 0 else max(0.0, float(low))
    high = 1.0 if k == n else min(1.0, float(high))
    return ConfidenceInterval(low, high)


@dataclass(frozen=True)
class ProportionResult:
    """A binomial proportion ``k/n`` (as the proportion part of scipy's ``BinomTestResult``).

    >>> res = proportion(7, 10)
    >>> res.statistic
    0.7
    >>> [round(b, 4) for b in res.confidence_interval(confidence_level=0.9)]
    [0.4417, 0.8731]
    """

    k: float
    n: float

    @property
    def statistic(self) -> float:
        """``k/n``; NaN when ``n == 0``."""
        return self.k / self.n if self.n > 0 else math.nan

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """The Wilson score interval (:func:`wilson_interval`)."""
        return wilson_interval(self.k, self.n, confidence_level)


def proportion(k: float, n: float) -> ProportionResult:
    """The proportion of ``k`` successes in ``n`` trials, with its Wilson ``confidence_interval()``."""
    return ProportionResult(k, n)


def newcombe_interval(k1: float, n1: float, k2: float, n2: float, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Newcombe's hybrid score interval of ``k1/n1 − k2/n2``; NaN bounds when a sample is empty.

    >>> [round(b, 4) for b in newcombe_interval(20, 50, 10, 50)]
    [0.0201, 0.3636]
    """
    if n1 <= 0 or n2 <= 0:
        return NAN_INTERVAL
    return _newcombe(k1, n1, k2, n2, 1 - check_confidence_level(confidence_level))


def _newcombe(k1: float, n1: float, k2: float, n2: float, alpha: float) -> ConfidenceInterval:
    """Newcombe's interval at ``1 − alpha`` (statsmodels), ``alpha`` given directly so that a tiny one keeps
    its precision (:func:`newcombe_pvalue` searches it)."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=alpha)
    return ConfidenceInterval(float(low), float(high))


def newcombe_pvalue(k1: float, n1: float, k2: float, n2: float) -> float:
    """Two-sided p-value dual to :func:`newcombe_interval`: ``p < 1 − level`` exactly when the interval at
    ``level`` excludes 0 (up to the root finder's 1e-12 on the critical value). 1 when the shares are
    equal, NaN when a sample is empty.

    The bound nearer 0 moves away from the estimate as the critical value ``z`` grows; ``z*`` where it
    reaches 0 gives ``p = 2 (1 − Φ(z*))``.

    >>> p = newcombe_pvalue(20, 50, 10, 50)
    >>> at = lambda gamma: newcombe_interval(20, 50, 10, 50, 1 - gamma).low
    >>> round(p, 4), at(0.999 * p) < 0 < at(1.001 * p)
    (0.0293, True)
    """
    from scipy import stats  # on first use: importing this module does not import scipy.stats
    from scipy.optimize import brentq

    if n1 <= 0 or n2 <= 0:
        return math.nan
    if k1 / n1 == k2 / n2:
        return 1.0
    lower = k1 / n1 > k2 / n2  # the bound nearer 0

    def gap(z: float) -> float:  # positive while the interval at critical value z excludes 0
        low, high = _newcombe(k1, n1, k2, n2, float(2 * stats.norm.sf(z)))
        return low if lower else -high

    top = 37.0  # 2 (1 − Φ(37)) ≈ 1e-299, still a positive float
    if gap(top) > 0:
        return float(2 * stats.norm.sf(top))
    z_star = brentq(gap, 0.0, top, xtol=1e-12)
    return float(min(1.0, 2 * stats.norm.sf(z_star)))


class ZTestResult(NamedTuple):
    """``statistic`` (z) and two-sided ``pvalue`` of a z-test."""

    statistic: float
    pvalue: float


def two_proportion_ztest(k1: float, n1: float, k2: float, n2: float) -> ZTestResult:
    """Pooled two-sample z-test of equal proportions, two-sided.

    ``z = 0, p = 1`` when the pooled share is 0 or 1 (no variation); NaN when a sample is empty.

    >>> res = two_proportion_ztest(20, 50, 10, 50)
    >>> round(res.statistic, 4), round(res.pvalue, 4)
    (2.1822, 0.0291)
    """
    if n1 <= 0 or n2 <= 0:
        return ZTestResult(math.nan, math.nan)
    pooled = (k1 + k2) / (n1 + n2)
    if pooled <= 0 or pooled >= 1:
        return ZTestResult(0.0, 1.0)
    from scipy import stats  # on first use: importing this module does not import scipy.stats

    z = (k1 / n1 - k2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return ZTestResult(float(z), float(2 * stats.norm.sf(abs(z))))
