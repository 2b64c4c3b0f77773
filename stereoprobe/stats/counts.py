"""Intervals of counts: the exact Poisson interval, and the one interval every count of the leaderboard shows.

- :func:`poisson_exact_interval` — Garwood (1936), "Fiducial limits for the Poisson distribution",
  Biometrika 28:437–442. For an observed count ``k`` and ``α = 1 − confidence_level``:

      low = ½ χ²_{α/2}(2k)   (0 when k = 0),    high = ½ χ²_{1−α/2}(2k + 2),

  with ``χ²_q(ν)`` the ``q`` quantile of the χ² distribution with ``ν`` degrees of freedom: the set of means
  ``μ`` that neither one-sided exact Poisson test at ``α/2`` rejects. It never shrinks to a point: a count of 0
  has the 95 % interval [0, 3.69], a count of 4 [1.09, 10.24]. Equal to ``statsmodels.stats.rates.
  confint_poisson(k, 1, method="exact-c")`` (checked in ``tests/stats/test_counts.py``).
- :func:`count_interval` — the interval of a count the leaderboard shows: the exact Poisson interval,
  widened to a cluster bootstrap interval when one is given and reaches further (items of one template,
  descriptor or attribute pair are not independent, which only widens the spread). So a count of a handful
  of items never gets a point interval such as [0, 0], and every count column uses this one rule.
"""

from __future__ import annotations

import math

from stereoprobe.stats.common import NAN_INTERVAL, ConfidenceInterval, check_confidence_level

__all__ = ["COUNT_METHOD", "count_interval", "poisson_exact_interval"]

#: how :func:`count_interval` is named in tables (the leaderboard's ``method`` column)
COUNT_METHOD = "exact Poisson (Garwood), widened to the cluster bootstrap"


def poisson_exact_interval(k: float, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Garwood's exact interval of a Poisson mean from the count ``k`` (module docstring); NaN bounds for a
    missing, negative or non-integer count.

    >>> poisson_exact_interval(0)
    ConfidenceInterval(low=0.0, high=3.688879...)
    >>> [round(b, 3) for b in poisson_exact_interval(4)]
    [1.09, 10.242]
    >>> poisson_exact_interval(float("nan"))
    ConfidenceInterval(low=nan, high=nan)
    """
    alpha = 1.0 - check_confidence_level(confidence_level)
    try:
        k = float(k)
    except (TypeError, ValueError):
        return NAN_INTERVAL
    if not math.isfinite(k) or k < 0 or k != int(k):
        return NAN_INTERVAL
    from stereoprobe.stats.distributions import chi2_ppf  # scipy.stats.chi2.ppf's doubles, without scipy.stats

    low = 0.0 if k == 0 else float(chi2_ppf(alpha / 2, 2 * k)) / 2
    high = float(chi2_ppf(1 - alpha / 2, 2 * k + 2)) / 2
    return ConfidenceInterval(low, high)


def count_interval(k: float, clustered: ConfidenceInterval | tuple[float, float] | None = None,
                   confidence_level: float = 0.95) -> ConfidenceInterval:
    """The leaderboard's interval of the count ``k``: :func:`poisson_exact_interval`, widened to
    ``clustered`` (a cluster bootstrap interval) where that reaches further; NaN bounds of ``clustered`` are
    ignored.

    >>> count_interval(0, (0.0, 0.0))                      # a bootstrap's [0, 0] claims certainty; this does not
    ConfidenceInterval(low=0.0, high=3.688879...)
    >>> [round(b, 2) for b in count_interval(4, (0.0, 14.0))]  # clustered items: the bootstrap is wider
    [0.0, 14.0]
    """
    exact = poisson_exact_interval(k, confidence_level)
    if clustered is None or math.isnan(exact.low):
        return exact
    lows = [b for b in (exact.low, float(clustered[0])) if not math.isnan(b)]
    highs = [b for b in (exact.high, float(clustered[1])) if not math.isnan(b)]
    return ConfidenceInterval(min(lows), max(highs))
