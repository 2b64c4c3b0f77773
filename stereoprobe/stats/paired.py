"""Paired tests of two models on the same items: Wilcoxon signed-rank (continuous) and exact McNemar (binary).

- :func:`wilcoxon_signed_rank` — Wilcoxon (1945), "Individual comparisons by ranking methods", Biometrics
  Bull. 1:80–83. Paired differences ``d_i``, zeros dropped (Wilcoxon's "wilcox" convention), NaN dropped;
  ``T+ = Σ_{d_i>0} rank(|d_i|)``. Exact null distribution of ``T+`` over the ``2^n`` sign patterns when
  ``n ≤ EXACT_MAX_N`` and no ties; else the normal approximation with mean ``n(n+1)/4`` and variance
  ``n(n+1)(2n+1)/24 − Σ_t (t³ − t)/48`` (tie groups of size ``t``), no continuity correction. The two-sided
  p comes from ``scipy.stats.wilcoxon(d, zero_method="wilcox", correction=False, method=...)``; the statistic
  reported is ``T+`` (scipy reports ``min(T+, T−)``).
- :func:`mcnemar_exact` — McNemar (1947), Psychometrika 12:153–157, exact form: with ``b`` items positive for
  A only and ``c`` for B only, ``p = min(1, 2 · BinomCDF(min(b, c); b + c, 1/2))``, computed by ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`` (statistic ``min(b, c)``).
- :func:`paired_mean_difference` / :func:`paired_share_difference` — two models on the same items: the mean
  of ``d_i = x_i − y_i`` (continuous values; Wilcoxon p) or of ``d_i = [x_i] − [y_i]`` (binary outcomes, the
  difference of the two shares; exact McNemar p), with the percentile cluster-bootstrap interval of
  ``Σ_c Σ_{i∈c} d_i / Σ_c n_c`` over the items' clusters (:func:`stereoprobe.stats.bootstrap.cluster_bootstrap`,
  clusters in sorted order).
- :func:`paired_cluster_t` — the mean paired difference ``θ = Σ_c d_c / Σ_c n_c`` (``d_c`` the summed
  differences and ``n_c`` the items of cluster ``c``, ``K`` clusters) with the cluster-robust standard error
  ``se² = K/(K − 1) · Σ_c (d_c − θ n_c)² / (Σ_c n_c)²`` (Liang & Zeger 1986; Cameron & Miller 2015, J. Human
  Resources 50:317–372, the CR1 correction with ``K − 1`` degrees of freedom), the two-sided t-test of θ = 0
  and the interval ``θ ± t_{K−1} se``: one procedure, so ``p < 1 − level`` exactly when the interval at
  ``level`` excludes 0, at every level (:meth:`ClusterTTestResult.interval`). Equals statsmodels'
  ``OLS(d, 1).fit(cov_type="cluster", use_t=True)``; with one item per cluster it is the one-sample t-test of
  the differences. The leaderboard's paired comparisons use it (the Wilcoxon and McNemar p-values above treat
  items as independent and can disagree with a cluster interval; the percentile cluster bootstrap is too
  narrow with the ten or so clusters of a small run, so its inverted p-value rejects too often).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from stereoprobe.stats.bootstrap import cluster_bootstrap
from stereoprobe.stats.common import ConfidenceInterval, check_confidence_level

__all__ = [
    "EXACT_MAX_N", "WilcoxonResult", "wilcoxon_signed_rank", "McNemarResult", "mcnemar_exact",
    "PairedDifferenceResult", "paired_mean_difference", "paired_share_difference", "ClusterTTestResult",
    "paired_cluster_t",
]

EXACT_MAX_N = 50  # exact Wilcoxon null distribution up to this many non-zero differences (as scipy's "auto")


class WilcoxonResult(NamedTuple):
    """``statistic`` = ``T+``, two-sided ``pvalue``, ``n`` = number of non-zero differences."""

    statistic: float
    pvalue: float
    n: int


class McNemarResult(NamedTuple):
    """``statistic`` = ``min(b, c)`` and the exact two-sided ``pvalue``."""

    statistic: float
    pvalue: float


def wilcoxon_signed_rank(d: Sequence[float] | np.ndarray, method: str = "auto") -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test of paired differences ``d``.

    ``method``: "exact", "approx" or "auto" (exact when at most :data:`EXACT_MAX_N` non-zero differences
    and no ties among ``|d|``). No non-zero difference: ``T+ = 0, p = 1, n = 0``.

    >>> wilcoxon_signed_rank([1.0, 2.0, 3.0])  # T+ = 6; p = 2 · P(T+ >= 6) = 2/8
    WilcoxonResult(statistic=6.0, pvalue=0.25, n=3)
    """
    x = np.asarray(d, dtype=float)
    x = x[~np.isnan(x)]
    x = x[x != 0]
    n = len(x)
    if n == 0:
        return WilcoxonResult(0.0, 1.0, 0)
    from scipy import stats  # on first use: importing this module (the leaderboard's) does not import scipy.stats

    ranks = stats.rankdata(np.abs(x))
    t_plus = float(ranks[x > 0].sum())
    _, tie_sizes = np.unique(np.abs(x), return_counts=True)
    ties = bool((tie_sizes > 1).any())
    if method == "auto":
        method = "exact" if n <= EXACT_MAX_N and not ties else "approx"
    if method == "exact" and ties:
        raise ValueError("the exact Wilcoxon distribution needs untied |differences|")
    if method not in ("exact", "approx"):
        raise ValueError(f"unknown method {method!r} (exact, approx, auto)")
    res = stats.wilcoxon(x, zero_method="wilcox", correction=False, method=method)
    return WilcoxonResult(t_plus, float(min(1.0, res.pvalue)), n)


def mcnemar_exact(b: int, c: int) -> McNemarResult:
    """Exact two-sided McNemar test from the discordant counts ``b`` (A only) and ``c`` (B only).

    >>> mcnemar_exact(0, 3)  # p = 2 · (1/2)³
    McNemarResult(statistic=0.0, pvalue=0.25)
    """
    from statsmodels.stats.contingency_tables import mcnemar

    res = mcnemar([[0, int(b)], [int(c), 0]], exact=True)
    return McNemarResult(float(res.statistic), float(min(1.0, res.pvalue)))


class PairedDifferenceResult(NamedTuple):
    """``statistic`` = mean paired difference, its cluster-bootstrap ``confidence_interval``, the paired test's
    two-sided ``pvalue`` and ``n`` items (unpacks as ``estimate, interval, p, n``)."""

    statistic: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    n: int


def _cluster_sums(d: np.ndarray, clusters: Sequence[object] | np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (sorted), the sum of ``d`` and the number of items; one cluster per item without clusters."""
    if clusters is None:
        return d, np.ones_like(d)
    g = pd.DataFrame({"d": d, "c": clusters}).groupby("c", sort=True)["d"].agg(["sum", "size"])
    return g["sum"].to_numpy(float), g["size"].to_numpy(float)  # pandas' (compensated) sums, as the tables


def paired_mean_difference(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> PairedDifferenceResult:
    """Mean of ``x − y`` over paired items, cluster-bootstrap interval, Wilcoxon signed-rank p.

    >>> res = paired_mean_difference([3.0, 5.0, 4.0, 6.0], [1.0, 2.0, 4.0, 3.0], ["t1", "t1", "t2", "t2"])
    >>> res.statistic, round(res.pvalue, 4), res.n  # d = 2, 3, 0, 3: T+ = 6, tied -> z = 3/√3.375
    (2.0, 0.1025, 4)
    """
    d = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    num, den = _cluster_sums(d, clusters)
    ci = cluster_bootstrap(num, den, n_resamples, confidence_level, seed).confidence_interval
    return PairedDifferenceResult(float(d.mean()), ci, wilcoxon_signed_rank(d).pvalue, len(d))


def paired_share_difference(
    x: Sequence[bool] | np.ndarray,
    y: Sequence[bool] | np.ndarray,
    clusters: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> PairedDifferenceResult:
    """Share of ``x`` minus share of ``y`` (binary outcomes of the same items), cluster-bootstrap interval,
    exact McNemar p on the discordant items.

    >>> res = paired_share_difference([1, 1, 1, 0, 1], [0, 0, 0, 0, 1])
    >>> res.statistic, res.pvalue  # 3 items positive for x only, 0 for y only: p = 2 · (1/2)³
    (0.6, 0.25)
    """
    xa, ya = np.asarray(x, dtype=bool), np.asarray(y, dtype=bool)
    b, c = int(np.sum(xa & ~ya)), int(np.sum(~xa & ya))
    d = xa.astype(float) - ya.astype(float)
    num, den = _cluster_sums(d, clusters)
    ci = cluster_bootstrap(num, den, n_resamples, confidence_level, seed).confidence_interval
    return PairedDifferenceResult(float(d.mean()), ci, mcnemar_exact(b, c).pvalue, len(d))


class ClusterTTestResult(NamedTuple):
    """Mean paired difference (``statistic``), its cluster-robust t ``confidence_interval``, the t-test's
    two-sided ``pvalue``, ``n`` items, ``standard_error`` and ``df`` (clusters − 1)."""

    statistic: float
    confidence_interval: ConfidenceInterval
    pvalue: float
    n: int
    standard_error: float
    df: int

    def interval(self, confidence_level: float) -> ConfidenceInterval:
        """``θ ± t_{df} se`` at another level (an FCR-adjusted one, say); NaN bounds below two clusters."""
        level = check_confidence_level(confidence_level)
        if self.df < 1 or not np.isfinite(self.standard_error):
            return ConfidenceInterval(float("nan"), float("nan"))
        from scipy import stats  # on first use: importing this module (the leaderboard's) does not import scipy.stats

        half = float(stats.t.ppf(0.5 + level / 2, self.df)) * self.standard_error
        return ConfidenceInterval(self.statistic - half, self.statistic + half)


def paired_cluster_t(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray | None = None,
    confidence_level: float = 0.95,
) -> ClusterTTestResult:
    """Mean of ``x − y`` (booleans count as 0/1) over paired items with the cluster-robust t-test and interval
    (module docstring; one cluster per item without ``clusters``). Below two clusters: NaN p and interval. A
    zero standard error (every cluster has the same mean difference) gives ``p = 1`` when that difference is 0,
    else ``p = 0``, and the point interval.

    >>> res = paired_cluster_t([3.0, 5.0, 4.0, 6.0], [1.0, 2.0, 4.0, 3.0], ["t1", "t1", "t2", "t2"])
    >>> res.statistic, round(res.standard_error, 4), res.df, round(res.pvalue, 4)  # t = 4, 1 df: 1 − 2 atan(4)/π
    (2.0, 0.5, 1, 0.156)
    >>> (res.confidence_interval.low > 0) == (res.pvalue < 0.05)
    True
    """
    level = check_confidence_level(confidence_level)
    d = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    num, den = _cluster_sums(d, clusters)
    k, total = len(num), float(den.sum())
    theta = float(num.sum() / total) if total > 0 else float("nan")
    if k < 2:
        return ClusterTTestResult(theta, ConfidenceInterval(float("nan"), float("nan")), float("nan"), len(d),
                                  float("nan"), k - 1)
    resid = num - theta * den
    se = float(np.sqrt(k / (k - 1) * float(np.sum(resid ** 2))) / total)
    if se <= 1e-12 * max(1.0, abs(theta)):  # every cluster has the same mean difference
        res = ClusterTTestResult(theta, ConfidenceInterval(theta, theta), 1.0 if theta == 0 else 0.0, len(d), 0.0,
                                 k - 1)
        return res
    from scipy import stats  # on first use: importing this module (the leaderboard's) does not import scipy.stats

    p = float(2 * stats.t.sf(abs(theta) / se, k - 1))
    res = ClusterTTestResult(theta, ConfidenceInterval(float("nan"), float("nan")), p, len(d), se, k - 1)
    return res._replace(confidence_interval=res.interval(level))
