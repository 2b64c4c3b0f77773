"""Effect sizes of contingency tables: Pearson χ², bias-corrected Cramér's V and its df-adjusted category,
fraction and lift of a cell."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["pearson_chi2", "cramers_v_corrected", "effect_category", "fraction_and_lift"]


def pearson_chi2(table) -> float:
    """Pearson's χ² without continuity correction, ``Σ (n_ij − E_ij)² / E_ij`` with ``E_ij = R_i C_j / n``
    (= ``scipy.stats.chi2_contingency(table, correction=False).statistic``; zero-margin rows/columns must be
    removed first).

    >>> round(pearson_chi2([[10, 20], [30, 40]]), 6)  # scipy: 0.793651
    0.793651
    """
    t = np.asarray(table, dtype=float)
    n = t.sum()
    e = np.outer(t.sum(axis=1), t.sum(axis=0)) / n
    if np.any(e == 0):
        raise ValueError("the table has an empty row or column; drop it before computing chi2")
    return float(((t - e) ** 2 / e).sum())


def cramers_v_corrected(table) -> float:
    """Bias-corrected Cramér's V (Bergsma 2013, J. Korean Stat. Soc. 42:323–328), as upstream StereoTales:

        φ² = χ²/n ; φ²* = max(0, φ² − (k−1)(r−1)/(n−1)) ;
        r* = r − (r−1)²/(n−1) ; k* = k − (k−1)²/(n−1) ;
        V* = sqrt(φ²* / min(k*−1, r*−1))   (0 when the denominator is ≤ 0)

    By hand for ``[[30, 10], [10, 30]]``: χ² = 20, n = 80, φ²* = 0.25 − 1/79, r* = k* = 2 − 1/79, so
    V* = √(0.237342 / 0.987342) = 0.490290:

    >>> round(cramers_v_corrected([[30, 10], [10, 30]]), 6)
    0.49029
    """
    t = np.asarray(table, dtype=float)
    n = t.sum()
    r, k = t.shape
    if n <= 1:
        return 0.0
    phi2 = pearson_chi2(t) / n
    phi2_corr = max(0.0, phi2 - (k - 1) * (r - 1) / (n - 1))
    r_corr = r - (r - 1) ** 2 / (n - 1)
    k_corr = k - (k - 1) ** 2 / (n - 1)
    denom = min(k_corr - 1, r_corr - 1)
    if denom <= 0:
        return 0.0
    return float(math.sqrt(phi2_corr / denom))


def effect_category(v: float, df_star: int) -> str:
    """Cohen's (1988) w thresholds 0.1 / 0.3 / 0.5 divided by √df*, df* = min(r, c) − 1 of the filtered table:
    ``large`` if V ≥ 0.5/√df*, ``medium`` if ≥ 0.3/√df*, ``small`` if ≥ 0.1/√df*, else ``negligible``.

    >>> effect_category(0.35, 1), effect_category(0.35, 4)  # thresholds 0.1/0.3/0.5, then 0.05/0.15/0.25
    ('medium', 'large')
    """
    if df_star < 1:
        raise ValueError(f"df* must be >= 1, got {df_star}")
    s = math.sqrt(df_star)
    if v >= 0.5 / s:
        return "large"
    if v >= 0.3 / s:
        return "medium"
    if v >= 0.1 / s:
        return "small"
    return "negligible"


def fraction_and_lift(table) -> tuple[np.ndarray, np.ndarray]:
    """Per cell ``fraction = n_ij / R_i`` (P(B=j | A=i)) and ``lift = n_ij / E_ij`` with
    ``E_ij = R_i C_j / n`` (= P(B=j | A=i) / P(B=j)).

    >>> fraction, lift = fraction_and_lift([[30, 10], [10, 30]])
    >>> fraction[0].tolist(), lift[0].tolist()
    ([0.75, 0.25], [1.5, 0.5])
    """
    t = np.asarray(table, dtype=float)
    n = t.sum()
    rows = t.sum(axis=1, keepdims=True)
    cols = t.sum(axis=0, keepdims=True)
    return t / rows, t * n / (rows * cols)
