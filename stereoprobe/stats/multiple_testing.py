"""False-discovery-rate adjustments (Benjamini–Hochberg, Benjamini–Yekutieli) and the BH decision set.

Benjamini & Hochberg (1995), JRSS-B 57:289–300: with sorted p-values ``p_(1) <= … <= p_(m)``, the adjusted
value is ``p̃_(k) = min_{j >= k} min(1, m p_(j) / j)``; rejecting ``p̃ < α`` controls the FDR at α for
independent or PRDS tests. Benjamini & Yekutieli (2001), Ann. Stat. 29:1165–1188: the same with ``m`` replaced
by ``m c(m)``, ``c(m) = Σ_{i<=m} 1/i``, valid under arbitrary dependence. Both are computed by
``scipy.stats.false_discovery_control(p, method="bh"|"by")`` (any array shape; NaN or values outside [0, 1]
are a ``ValueError``; the tests compare with the formula above worked by hand).
"""

from __future__ import annotations

import numpy as np

__all__ = ["adjust_bh", "adjust_by", "bh_reject"]


def _adjust(p, method: str) -> np.ndarray:
    """``scipy.stats.false_discovery_control`` over every value of ``p`` (any shape), checked first."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p, dtype=float)
    shape = p.shape
    flat = p.ravel()
    if flat.size == 0:
        return p.copy()
    if np.any(np.isnan(flat)) or np.any((flat < 0) | (flat > 1)):
        raise ValueError("p-values must lie in [0, 1] and not be NaN")
    return np.minimum(false_discovery_control(flat, method=method), 1.0).reshape(shape)


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
