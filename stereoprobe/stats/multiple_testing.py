"""False-discovery-rate adjustments (Benjamini–Hochberg, Benjamini–Yekutieli) and the BH decision set.

Benjamini & Hochberg (1995), JRSS-B 57:289–300: with sorted p-values ``p_(1) <= … <= p_(m)``, the adjusted
value is ``p̃_(k) = min_{j >= k} min(1, m p_(j) / j)``; rejecting ``p̃ < α`` controls the FDR at α for
independent or PRDS tests. Benjamini & Yekutieli (2001), Ann. Stat. 29:1165–1188: the same with ``m`` replaced
by ``m c(m)``, ``c(m) = Σ_{i<=m} 1/i``, valid under arbitrary dependence. Both follow the arithmetic of
``scipy.stats.false_discovery_control(p, method="bh"|"by")`` operation by operation (equal to it bit for bit;
any array shape; NaN or values outside [0, 1] are a ``ValueError``; the tests compare with scipy, statsmodels
and the formula above worked by hand).
"""

from __future__ import annotations

import numpy as np

__all__ = ["adjust_bh", "adjust_by", "bh_reject"]


def _adjust(p, method: str) -> np.ndarray:
    """BH (``"bh"``) or BY (``"by"``) over every value of ``p`` (any shape), checked first: the arithmetic of
    ``scipy.stats.false_discovery_control`` (sort, ``p_(k)·(m/k)``, BY's ``Σ 1/i``, the running minimum from
    the largest p, clip to [0, 1]) step by step in plain NumPy, so the values are scipy's bit for bit without its
    per-call array-API dispatch (the mining calls this thousands of times on families of <= 18 values)."""
    p = np.asarray(p, dtype=float)
    shape = p.shape
    flat = p.ravel()
    if flat.size == 0:
        return p.copy()
    if np.any(np.isnan(flat)) or np.any((flat < 0) | (flat > 1)):
        raise ValueError("p-values must lie in [0, 1] and not be NaN")
    m = flat.size
    if m == 1:  # scipy returns a single p-value unchanged
        return np.minimum(flat, 1.0).reshape(shape)
    order = np.argsort(flat)  # ties get equal adjusted values whatever their order
    i = np.arange(1, m + 1, dtype=float)
    ps = flat[order] * (m / i)
    if method == "by":
        ps *= np.sum(1 / i)
    np.minimum.accumulate(ps[::-1], out=ps[::-1])
    out = np.empty_like(ps)
    out[order] = ps
    return np.minimum(np.clip(out, 0.0, 1.0), 1.0).reshape(shape)


def adjust_bh(p) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (step-up, FDR under independence/PRDS).

    >>> adjust_bh([0.01, 0.04, 0.03, 0.5]).round(6).tolist()  # scipy false_discovery_control
    [0.04, 0.053333, 0.053333, 0.5]
    """
    return _adjust(p, "bh")


def adjust_by(p) -> np.ndarray:
    """Benjamini–Yekutieli adjusted p-values (FDR under arbitrary dependence): BH × Σ_{i<=m} 1/i.

    >>> adjust_by([0.01, 0.04, 0.03, 0.5]).round(6).tolist()  # BH × 25/12
    [0.083333, 0.111111, 0.111111, 1.0]
    """
    return _adjust(p, "by")


def bh_reject(p, alpha: float = 0.05) -> np.ndarray:
    """Decisions ``adjust_bh(p) < alpha`` (the upstream rule: strictly below α).

    Monotone: lowering any p-value can only enlarge the rejected set, which is what lets a sequential test
    stop once the decisions at the upper and at the lower ends of every p-value's interval coincide.

    >>> bh_reject([0.01, 0.04, 0.03, 0.5], alpha=0.05).tolist()
    [True, False, False, False]
    """
    return adjust_bh(p) < alpha
