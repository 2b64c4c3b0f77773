"""Statistics for comparing models: intervals for one model's figures and paired tests between two models.

Pure functions on numbers and arrays (no I/O). Each states its formula and a reference; the tests check each
against an independent implementation (scipy, statsmodels) or a hand-worked table.

One model:

- :func:`wilson_interval` — Wilson (1927) score interval for a binomial proportion ``k/n``:
  centre ``(k + z²/2)/(n + z²)``, half-width ``z sqrt(k(n−k)/n + z²/4)/(n + z²)``.
- :func:`cluster_bootstrap` — percentile bootstrap over clusters (Davison & Hinkley 1997, §3.8) of a sum
  ``Σ_c num_c`` or a ratio ``Σ_c num_c / Σ_c den_c``: the clusters are drawn with replacement (multinomial
  weights), so items that share a cluster (a DBB question template, a GlobalBias descriptor, a StereoTales
  attribute pair) stay together.

Two models on the same items:

- :func:`wilcoxon_signed_rank` — Wilcoxon (1945) signed-rank test of paired differences ``d_i`` (zeros
  dropped, "wilcox" convention): ``T+ = Σ_{d_i>0} rank(|d_i|)``; exact null distribution of ``T+`` over the
  ``2^n`` sign patterns when ``n ≤ 50`` and no ties, else the normal approximation with mean ``n(n+1)/4`` and
  variance ``n(n+1)(2n+1)/24 − Σ_t (t³ − t)/48`` (tie groups of size ``t``), no continuity correction.
  Two-sided p (as ``scipy.stats.wilcoxon``).
- :func:`mcnemar_exact` — McNemar (1947) test of paired binary outcomes in its exact form: with ``b`` items
  positive for A only and ``c`` for B only, ``p = min(1, 2 · BinomCDF(min(b, c); b + c, 1/2))`` (as
  ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``).
- :func:`newcombe_interval` — Newcombe (1998, method 10) hybrid score interval for a difference of two
  independent proportions ``p1 − p2`` from the two Wilson intervals ``(l_i, u_i)``:
  ``[d − sqrt((p1−l1)² + (u2−p2)²), d + sqrt((u1−p1)² + (p2−l2)²)]``.
- :func:`two_proportion_z` — pooled two-sample z-test of ``p1 = p2``: ``z = (p1 − p2)/sqrt(p̄(1−p̄)(1/n1 + 1/n2))``.
- :func:`jaccard` — ``|A ∩ B| / |A ∪ B|`` (NaN when both sets are empty).
- :func:`bh_count_bootstrap` — cluster bootstrap of the number of Benjamini–Hochberg (1995) discoveries: in
  each draw the p-values of the drawn clusters (with multiplicity) are tested again. BH rejects the ``R``
  smallest of ``m`` p-values, ``R = max{k : p_(k) < k α / m}`` (strict, as ``stats.multiple_testing.bh_reject``);
  with the p-values sorted once, a draw's ranks are the cumulative multiplicities, so each draw costs O(m).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

__all__ = [
    "wilson_interval",
    "cluster_bootstrap",
    "wilcoxon_signed_rank",
    "mcnemar_exact",
    "newcombe_interval",
    "two_proportion_z",
    "jaccard",
    "bh_count_bootstrap",
    "EXACT_MAX_N",
]

NAN = float("nan")
EXACT_MAX_N = 50  # exact Wilcoxon null distribution up to this many non-zero differences (as scipy's "auto")


def _z(level: float) -> float:
    return float(stats.norm.ppf(1 - (1 - level) / 2))


def wilson_interval(k: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for the proportion ``k/n``; ``(nan, nan)`` when ``n == 0``."""
    if n <= 0:
        return NAN, NAN
    z = _z(level)
    centre = (k + z * z / 2) / (n + z * z)
    half = z * np.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def cluster_bootstrap(
    num: Sequence[float] | np.ndarray,
    den: Sequence[float] | np.ndarray | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile CI of ``Σ num`` (``den`` None) or ``Σ num / Σ den`` over clusters resampled with replacement.

    ``num[c]`` / ``den[c]``: the cluster's summed numerator / denominator. Draws whose denominator is 0 are
    left out of the ratio's percentiles. ``(nan, nan)`` without clusters or without any usable draw.
    """
    x = np.asarray(num, dtype=float)
    k = len(x)
    if k == 0 or n_boot < 1:
        return NAN, NAN
    rng = np.random.default_rng(seed)
    w = rng.multinomial(k, np.full(k, 1.0 / k), size=n_boot).astype(float)
    top = w @ x
    if den is None:
        draws = top
    else:
        bottom = w @ np.asarray(den, dtype=float)
        ok = bottom > 0
        if not ok.any():
            return NAN, NAN
        draws = top[ok] / bottom[ok]
    a = (1 - level) / 2
    lo, hi = np.quantile(draws, [a, 1 - a])
    return float(lo), float(hi)


def _signed_rank_exact_sf(n: int, t: int) -> float:
    """P(T+ >= t) under the null for n untied non-zero differences (counts of subsets of {1..n} by sum)."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    total = 2.0 ** n
    return float(counts[t:].sum() / total)


def wilcoxon_signed_rank(d: Sequence[float] | np.ndarray, method: str = "auto") -> tuple[float, float, int]:
    """Two-sided Wilcoxon signed-rank test of paired differences ``d``; returns ``(T+, p, n_nonzero)``.

    ``method``: "exact", "approx" or "auto" (exact when at most :data:`EXACT_MAX_N` non-zero differences
    and no ties among ``|d|``). NaN differences are dropped. No non-zero difference: ``(0, 1.0, 0)``.
    """
    x = np.asarray(d, dtype=float)
    x = x[~np.isnan(x)]
    x = x[x != 0]
    n = len(x)
    if n == 0:
        return 0.0, 1.0, 0
    ranks = stats.rankdata(np.abs(x))
    t_plus = float(ranks[x > 0].sum())
    _, tie_sizes = np.unique(np.abs(x), return_counts=True)
    ties = bool((tie_sizes > 1).any())
    if method == "auto":
        method = "exact" if n <= EXACT_MAX_N and not ties else "approx"
    if method == "exact":
        if ties:
            raise ValueError("the exact Wilcoxon distribution needs untied |differences|")
        t_min = min(t_plus, n * (n + 1) / 2 - t_plus)
        t_max = n * (n + 1) / 2 - t_min
        p = 2 * _signed_rank_exact_sf(n, int(round(t_max)))
        return t_plus, float(min(1.0, p)), n
    if method != "approx":
        raise ValueError(f"unknown method {method!r} (exact, approx, auto)")
    mean = n * (n + 1) / 4
    var = n * (n + 1) * (2 * n + 1) / 24 - float(np.sum(tie_sizes ** 3 - tie_sizes)) / 48
    if var <= 0:
        return t_plus, 1.0, n
    z = (t_plus - mean) / np.sqrt(var)
    return t_plus, float(min(1.0, 2 * stats.norm.sf(abs(z)))), n


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts ``b`` (A only) and ``c`` (B only)."""
    m = int(b) + int(c)
    if m == 0:
        return 1.0
    return float(min(1.0, 2 * stats.binom.cdf(min(int(b), int(c)), m, 0.5)))


def newcombe_interval(k1: float, n1: float, k2: float, n2: float, level: float = 0.95) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``k1/n1 − k2/n2``; ``(nan, nan)`` if a sample is empty."""
    if n1 <= 0 or n2 <= 0:
        return NAN, NAN
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, level)
    l2, u2 = wilson_interval(k2, n2, level)
    d = p1 - p2
    return float(d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)), float(d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def two_proportion_z(k1: float, n1: float, k2: float, n2: float) -> float:
    """Two-sided p of the pooled z-test of equal proportions; 1.0 when the pooled share is 0 or 1; NaN if a
    sample is empty."""
    if n1 <= 0 or n2 <= 0:
        return NAN
    pooled = (k1 + k2) / (n1 + n2)
    if pooled <= 0 or pooled >= 1:
        return 1.0
    z = (k1 / n1 - k2 / n2) / np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return float(2 * stats.norm.sf(abs(z)))


def jaccard(a: set, b: set) -> float:
    """``|a ∩ b| / |a ∪ b|``; NaN when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else NAN


def bh_count_bootstrap(
    p: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    alpha: float = 0.05,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile CI of the number of BH discoveries at ``alpha`` when whole clusters of p-values are resampled."""
    pv = np.asarray(p, dtype=float)
    if pv.size == 0 or n_boot < 1:
        return NAN, NAN
    _, cid = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    k = int(cid.max()) + 1
    order = np.argsort(pv, kind="mergesort")
    ps, cs = pv[order], cid[order]
    rng = np.random.default_rng(seed)
    w = rng.multinomial(k, np.full(k, 1.0 / k), size=n_boot)
    draws = np.empty(n_boot)
    for b in range(n_boot):
        mult = w[b][cs]
        ranks = np.cumsum(mult)
        m = ranks[-1]
        ok = (mult > 0) & (ps * m < ranks * alpha)
        draws[b] = ranks[ok].max() if ok.any() else 0.0
    a = (1 - level) / 2
    lo, hi = np.quantile(draws, [a, 1 - a])
    return float(lo), float(hi)
