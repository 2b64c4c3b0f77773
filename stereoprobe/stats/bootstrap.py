"""Cluster (block) bootstrap of sums and ratios of sums, and of the number of Benjamini–Hochberg discoveries.

Percentile bootstrap over clusters (Davison & Hinkley 1997, *Bootstrap Methods and their Application*, §3.8;
Efron & Tibshirani 1993, §13.3): the ``K`` clusters are drawn with replacement — as multinomial weights
``w ~ Multinomial(K, 1/K, …, 1/K)``, one row per resample, from ``numpy.random.default_rng(seed)`` — so items
that share a cluster (a DBB question template, a GlobalBias descriptor, a StereoTales attribute pair) stay
together. A resample's statistic is ``Σ_c w_c num_c`` (a count or sum) or ``Σ_c w_c num_c / Σ_c w_c den_c``
(a ratio: a mean over items when ``den`` holds the cluster sizes, the mean over clusters when ``den`` is all
ones); resamples whose denominator is 0 are left out. The interval holds the ``α/2`` and ``1 − α/2``
quantiles of the resampled statistics. With one item per cluster and ``den`` all ones this is the ordinary
percentile bootstrap of a mean (``scipy.stats.bootstrap(..., method="percentile")``, other random draws).

:func:`bh_count_bootstrap` resamples clusters of p-values the same way and counts, in each resample, the
Benjamini & Hochberg (1995) discoveries of the drawn p-values (with multiplicity): ``R = max{k : p_(k) < kα/m}``
(strict, as :func:`stereoprobe.stats.multiple_testing.bh_reject`). With the p-values sorted once, a
resample's ranks are the cumulative multiplicities, so each resample costs O(m).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stereoprobe.stats.common import NAN_INTERVAL, ConfidenceInterval, check_confidence_level, percentile_interval

__all__ = ["ClusterBootstrapResult", "cluster_bootstrap", "bh_count_bootstrap", "cluster_weights"]


@dataclass(frozen=True)
class ClusterBootstrapResult:
    """Result of a cluster bootstrap, with the fields of scipy's ``BootstrapResult``."""

    confidence_interval: ConfidenceInterval
    bootstrap_distribution: np.ndarray
    standard_error: float


def cluster_weights(n_clusters: int, n_resamples: int, seed: int = 0) -> np.ndarray:
    """``n_resamples × n_clusters`` multinomial resampling weights (each row sums to ``n_clusters``).

    >>> cluster_weights(3, 2, seed=0).sum(axis=1).tolist()
    [3.0, 3.0]
    """
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_resamples).astype(float)


def _result(draws: np.ndarray, confidence_level: float) -> ClusterBootstrapResult:
    if draws.size == 0:
        return ClusterBootstrapResult(NAN_INTERVAL, draws, math.nan)
    se = float(np.std(draws, ddof=1)) if draws.size > 1 else math.nan
    return ClusterBootstrapResult(percentile_interval(draws, confidence_level), draws, se)


def cluster_bootstrap(
    num: Sequence[float] | np.ndarray,
    den: Sequence[float] | np.ndarray | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> ClusterBootstrapResult:
    """Percentile cluster bootstrap of ``Σ num`` (``den`` None) or of ``Σ num / Σ den``.

    Parameters
    ----------
    num, den : array_like, one value per cluster
        The cluster's summed numerator and (for a ratio) summed denominator.
    n_resamples : int
        Resamples (the same seed and ``n_resamples`` draw the same clusters for any ``num``/``den`` of the
        same length, so a count and a mean computed in two calls come from one set of resamples).
    confidence_level : float
        Two-sided level of the percentile interval.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    ClusterBootstrapResult
        ``confidence_interval`` (NaN bounds without clusters, resamples or any resample with a positive
        denominator), ``bootstrap_distribution`` (the usable resampled statistics), ``standard_error``.

    Examples
    --------
    >>> cluster_bootstrap([2, 2, 2], n_resamples=200).confidence_interval
    ConfidenceInterval(low=6.0, high=6.0)
    >>> cluster_bootstrap([0.1, 0.1, 0.1], [1, 1, 1]).confidence_interval  # equal ratios: exact
    ConfidenceInterval(low=0.1, high=0.1)
    >>> res = cluster_bootstrap([0, 1, 5, 2], [1, 1, 1, 1], n_resamples=500, seed=3)
    >>> lo, hi = res.confidence_interval
    >>> bool(lo <= 2.0 <= hi), res.bootstrap_distribution.shape
    (True, (500,))
    """
    check_confidence_level(confidence_level)
    x = np.asarray(num, dtype=float)
    k = len(x)
    if k == 0 or n_resamples < 1:
        return _result(np.empty(0), confidence_level)
    w = cluster_weights(k, n_resamples, seed)
    top = w @ x
    if den is None:
        return _result(top, confidence_level)
    d = np.asarray(den, dtype=float)
    bottom = w @ d
    ok = bottom > 0
    if np.all(d > 0) and np.ptp(x / d) == 0:  # every cluster has the same ratio: exactly that ratio, no rounding
        return _result(np.full(n_resamples, x[0] / d[0]), confidence_level)
    return _result(top[ok] / bottom[ok], confidence_level)


def bh_count_bootstrap(
    p: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> ClusterBootstrapResult:
    """Percentile interval of the number of BH discoveries at ``alpha`` when whole clusters of p-values are
    resampled (``clusters[i]`` names the cluster of ``p[i]``).

    >>> p = [0.001, 0.002, 0.5, 0.9]
    >>> bh_count_bootstrap(p, ["a", "a", "b", "b"], n_resamples=200).confidence_interval
    ConfidenceInterval(low=0.0, high=4.0)
    """
    check_confidence_level(confidence_level)
    pv = np.asarray(p, dtype=float)
    if pv.size == 0 or n_resamples < 1:
        return _result(np.empty(0), confidence_level)
    _, cid = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    k = int(cid.max()) + 1
    order = np.argsort(pv, kind="mergesort")
    ps, cs = pv[order], cid[order]
    w = cluster_weights(k, n_resamples, seed).astype(np.int64)
    draws = np.empty(n_resamples)
    for b in range(n_resamples):
        mult = w[b][cs]
        ranks = np.cumsum(mult)
        m = ranks[-1]
        ok = (mult > 0) & (ps * m < ranks * alpha)
        draws[b] = ranks[ok].max() if ok.any() else 0.0
    return _result(draws, confidence_level)
