"""Binomial proportions: the Wilson score interval, Newcombe's interval of a difference, the pooled z-test.

- :func:`wilson_interval` — Wilson (1927), "Probable inference, the law of succession, and statistical
  inference", JASA 22:209–212. For ``k`` successes in ``n`` trials, ``p̂ = k/n`` and ``z = z_{1−α/2}``:

      centre = (k + z²/2) / (n + z²),   half-width = z √(k(n − k)/n + z²/4) / (n + z²),

  the set of ``p`` whose score test ``|p̂ − p| / √(p(1 − p)/n) ≤ z`` accepts. Bounds are exactly 0 when
  ``k = 0`` and exactly 1 when ``k = n``. Equals ``statsmodels.stats.proportion.proportion_confint(k, n,
  alpha=1 − confidence_level, method="wilson")`` and scipy's ``binomtest(k, n).proportion_ci(method="wilson")``.
- :func:`newcombe_interval` — Newcombe (1998), "Interval estimation for the difference between independent
  proportions: comparison of eleven methods", Stat. Med. 17:873–890, method 10 (hybrid score): with
  ``d = p̂₁ − p̂₂`` and the Wilson intervals ``(l_i, u_i)``,
  ``[d − √((p̂₁ − l₁)² + (u₂ − p̂₂)²), d + √((u₁ − p̂₁)² + (p̂₂ − l₂)²)]``
  (``statsmodels`` ``confint_proportions_2indep(..., method="newcomb", compare="diff")``).
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

from scipy import stats

from stereoprobe.stats.common import NAN_INTERVAL, ConfidenceInterval, critical_z

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
    if n <= 0:
        return NAN_INTERVAL
    if k < 0 or k > n:
        raise ValueError(f"wilson_interval: need 0 <= k <= n, got k={k}, n={n}")
    z = critical_z(confidence_level)
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return ConfidenceInterval(float(low), float(high))


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
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, confidence_level)
    l2, u2 = wilson_interval(k2, n2, confidence_level)
    d = p1 - p2
    return ConfidenceInterval(float(d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)),
                              float(d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)))


def _newcombe_bound_at_z(k1: float, n1: float, k2: float, n2: float, z: float) -> float:
    """The bound of Newcombe's interval nearer 0 (the lower bound when ``k1/n1 >= k2/n2``) at critical value z."""
    def wilson(k: float, n: float) -> tuple[float, float]:
        centre = (k + z * z / 2) / (n + z * z)
        half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
        return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else min(1.0, centre + half))

    p1, p2 = k1 / n1, k2 / n2
    (l1, u1), (l2, u2) = wilson(k1, n1), wilson(k2, n2)
    if p1 >= p2:
        return p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    return p1 - p2 + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


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
    from scipy.optimize import brentq

    if n1 <= 0 or n2 <= 0:
        return math.nan
    if k1 / n1 == k2 / n2:
        return 1.0
    sign = 1.0 if k1 / n1 > k2 / n2 else -1.0

    def gap(z: float) -> float:  # positive while the interval at this z excludes 0
        return sign * _newcombe_bound_at_z(k1, n1, k2, n2, z)

    top = 40.0
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
    z = (k1 / n1 - k2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return ZTestResult(float(z), float(2 * stats.norm.sf(abs(z))))
