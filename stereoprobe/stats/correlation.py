"""Pearson and Spearman correlation with their p-values and confidence intervals (scipy's ``pearsonr`` manner).

- Pearson ``r`` of the pairs without a NaN; two-sided p of ``H0: ρ = 0`` from
  ``t = r √((n − 2)/(1 − r²))`` with ``n − 2`` df (as ``scipy.stats.pearsonr``). Interval: Fisher (1921)
  z transform, ``tanh(atanh(r) ± z_{1−α/2} / √(n − 3))`` (as ``pearsonr(...).confidence_interval()``).
- Spearman ``ρ`` = Pearson r of the average ranks (ties share their mean rank); p from the same t
  approximation (as ``scipy.stats.spearmanr``). Intervals: ``"bonett-wright"`` (default), the Fisher z
  interval with the standard error ``√((1 + ρ²/2)/(n − 3))`` of Bonett & Wright (2000), "Sample size
  requirements for estimating Pearson, Kendall and Spearman correlations", Psychometrika 65(1):23–28, better
  calibrated for ρ than ``1/√(n − 3)``; ``"bootstrap"``, the percentile interval of ρ over paired resamples
  (rows drawn with replacement from ``numpy.random.default_rng(seed)``; resamples with a constant column are
  skipped).

An interval needs ``n ≥ 4`` (NaN bounds otherwise); ``|r| = 1`` gives the degenerate interval ``[r, r]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from stereoprobe.stats.common import NAN_INTERVAL, ConfidenceInterval, critical_z, percentile_interval

__all__ = ["CorrelationResult", "pearson", "spearman", "average_ranks", "fisher_z_interval"]

SpearmanInterval = Literal["bonett-wright", "bootstrap"]


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("x and y must be 1-D arrays of the same length")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def _r(a: np.ndarray, b: np.ndarray) -> float:
    da, db = a - a.mean(), b - b.mean()
    den = math.sqrt(float(np.dot(da, da)) * float(np.dot(db, db)))
    return float(np.dot(da, db) / den) if den > 0 else math.nan


def _t_pvalue(r: float, n: int) -> float:
    """Two-sided p of H0: ρ = 0 from t = r √((n−2)/(1−r²)) with n − 2 df."""
    if n < 3 or math.isnan(r):
        return math.nan
    if abs(r) >= 1:
        return 0.0
    t = r * math.sqrt((n - 2) / (1 - r * r))
    return float(2 * stats.t.sf(abs(t), n - 2))


def average_ranks(a: np.ndarray | Sequence[float]) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (``scipy.stats.rankdata(a, method="average")``).

    >>> average_ranks([10, 20, 20, 5]).tolist()
    [2.0, 3.5, 3.5, 1.0]
    """
    x = np.asarray(a, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x), dtype=float)
    sx = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sx[j + 1] == sx[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def fisher_z_interval(r: float, se: float, confidence_level: float = 0.95) -> ConfidenceInterval:
    """``tanh(atanh(r) ± z_{1−α/2} · se)``: the Fisher z interval with standard error ``se`` on the z scale.

    >>> [round(b, 4) for b in fisher_z_interval(0.5, 1 / math.sqrt(37))]
    [0.2233, 0.7021]
    """
    if math.isnan(r) or math.isnan(se):
        return NAN_INTERVAL
    if abs(r) >= 1:
        return ConfidenceInterval(r, r)
    zc = critical_z(confidence_level)
    z = math.atanh(r)
    return ConfidenceInterval(math.tanh(z - zc * se), math.tanh(z + zc * se))


@dataclass(frozen=True)
class CorrelationResult:
    """A correlation coefficient: ``statistic``, two-sided ``pvalue``, ``n`` pairs used, and the intervals.

    ``method`` is ``"pearson"`` or ``"spearman"``; ``x``, ``y`` keep the pairs used (for the bootstrap).
    """

    method: str
    statistic: float
    pvalue: float
    n: int
    x: np.ndarray = field(repr=False, compare=False)
    y: np.ndarray = field(repr=False, compare=False)

    def confidence_interval(
        self,
        confidence_level: float = 0.95,
        method: SpearmanInterval | Literal["fisher-z"] | None = None,
        n_resamples: int = 9999,
        seed: int = 0,
    ) -> ConfidenceInterval:
        """Interval of the coefficient. ``method`` None: ``"fisher-z"`` for Pearson, ``"bonett-wright"`` for
        Spearman; ``"bootstrap"`` (Spearman): percentile interval over ``n_resamples`` paired resamples."""
        default = "fisher-z" if self.method == "pearson" else "bonett-wright"
        how = method or default
        if how not in (default, "bootstrap") or (how == "bootstrap" and self.method != "spearman"):
            raise ValueError(f"unknown {self.method} interval method {how!r} "
                             f"({default}{' or bootstrap' if self.method == 'spearman' else ''})")
        r, n = self.statistic, self.n
        if how == "bootstrap":
            return _bootstrap_spearman(self.x, self.y, confidence_level, n_resamples, seed) if n >= 3 else NAN_INTERVAL
        if n <= 3 or math.isnan(r):
            return NAN_INTERVAL
        se = 1 / math.sqrt(n - 3) if how == "fisher-z" else math.sqrt((1 + r * r / 2) / (n - 3))
        return fisher_z_interval(r, se, confidence_level)


def pearson(x: Sequence[float], y: Sequence[float]) -> CorrelationResult:
    """Pearson r of the pairs of ``x`` and ``y`` without a NaN.

    >>> res = pearson([1.0, 2.0, 2.5, 4.0, 3.0, 5.0], [1.5, 2.0, 3.0, 3.5, 4.0, 4.5])
    >>> round(res.statistic, 6), round(res.pvalue, 6), res.n
    (0.911345, 0.011441, 6)
    >>> [round(b, 4) for b in res.confidence_interval(confidence_level=0.95)]
    [0.3832, 0.9904]
    """
    a, b = _paired(x, y)
    n = len(a)
    r = _r(a, b) if n >= 2 else math.nan
    return CorrelationResult("pearson", r, _t_pvalue(r, n), n, a, b)


def spearman(x: Sequence[float], y: Sequence[float]) -> CorrelationResult:
    """Spearman ρ (Pearson r of average ranks) of the pairs without a NaN.

    >>> res = spearman([1.0, 2.0, 2.5, 4.0, 3.0, 5.0], [1.5, 2.0, 3.0, 3.5, 4.0, 4.5])
    >>> round(res.statistic, 6)  # 1 − 6 Σd² / (n(n² − 1)) = 1 − 12/210
    0.942857
    >>> [round(b, 3) for b in res.confidence_interval()]  # Bonett–Wright
    [0.383, 0.996]
    """
    a, b = _paired(x, y)
    n = len(a)
    rho = _r(average_ranks(a), average_ranks(b)) if n >= 2 else math.nan
    return CorrelationResult("spearman", rho, _t_pvalue(rho, n), n, a, b)


def _bootstrap_spearman(a: np.ndarray, b: np.ndarray, confidence_level: float, n_resamples: int,
                        seed: int) -> ConfidenceInterval:
    rng = np.random.default_rng(seed)
    n = len(a)
    rhos: list[np.ndarray] = []
    done = 0
    while done < n_resamples:  # blocks of at most 500 resamples keep memory small for large n
        k = min(500, n_resamples - done)
        idx = rng.integers(0, n, size=(k, n))
        ra = stats.rankdata(a[idx], axis=1)
        rb = stats.rankdata(b[idx], axis=1)
        ra -= ra.mean(axis=1, keepdims=True)
        rb -= rb.mean(axis=1, keepdims=True)
        den = np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))
        ok = den > 0
        rhos.append((ra * rb).sum(axis=1)[ok] / den[ok])
        done += k
    return percentile_interval(np.concatenate(rhos) if rhos else np.empty(0), confidence_level)
