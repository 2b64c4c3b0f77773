"""Shared pieces of the statistics: the interval type, the critical value and the percentile interval.

Every interval in :mod:`stereoprobe.stats` is a :class:`ConfidenceInterval` (a named tuple ``low, high`` as
scipy's, so ``lo, hi = ...`` keeps working) and every level is a ``confidence_level`` in (0, 1), 0.95 by
default, as in ``scipy.stats``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["ConfidenceInterval", "NAN_INTERVAL", "critical_z", "check_confidence_level", "percentile_interval"]


class ConfidenceInterval(NamedTuple):
    """Lower and upper bound of a two-sided confidence interval (as ``scipy.stats._common.ConfidenceInterval``).

    >>> ConfidenceInterval(0.25, 0.75)
    ConfidenceInterval(low=0.25, high=0.75)
    >>> lo, hi = ConfidenceInterval(0.25, 0.75); hi - lo
    0.5
    """

    low: float
    high: float


NAN_INTERVAL = ConfidenceInterval(math.nan, math.nan)


def check_confidence_level(confidence_level: float) -> float:
    """``confidence_level`` as a float, or ``ValueError`` unless it lies strictly between 0 and 1."""
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must lie strictly between 0 and 1, got {confidence_level!r}")
    return level


def critical_z(confidence_level: float = 0.95) -> float:
    """Two-sided standard normal critical value ``z_{1−α/2}`` with ``α = 1 − confidence_level``.

    >>> round(critical_z(0.95), 6)
    1.959964
    """
    from scipy import stats  # here, not at import: the eval's live metrics import this module, not scipy.stats

    return float(stats.norm.ppf(0.5 + check_confidence_level(confidence_level) / 2))


def percentile_interval(draws: np.ndarray, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Percentile interval of bootstrap draws: their ``α/2`` and ``1 − α/2`` quantiles (numpy's default linear
    interpolation; Efron & Tibshirani 1993, §13.3). NaN bounds without draws.

    >>> percentile_interval(np.arange(101.0), 0.5)
    ConfidenceInterval(low=25.0, high=75.0)
    """
    tail = (1 - check_confidence_level(confidence_level)) / 2
    x = np.asarray(draws, dtype=float)
    if x.size == 0:
        return NAN_INTERVAL
    lo, hi = np.quantile(x, [tail, 1 - tail])
    return ConfidenceInterval(float(lo), float(hi))
