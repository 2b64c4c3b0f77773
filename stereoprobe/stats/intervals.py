"""Confidence intervals for the lift of a cell of a contingency table whose row totals are fixed by design.

In StereoTales the row totals ``R_i`` (stories prompted with base value i) are fixed by the design; for
cell (i, j) write ``p1 = a / R_i`` (share of B=j among A=i), ``p2 = c / (n − R_i)`` (among A≠i) and
``w = R_i / n``. The lift is ``L = p1 / P(B=j)`` with ``P(B=j) = w p1 + (1 − w) p2``, hence

    L = 1 / (w + (1 − w) / RR),   RR = p1 / p2   (risk ratio),

a strictly increasing function of RR for fixed ``w``. A confidence interval for RR therefore maps to one for
the lift. We use Katz's log interval for the ratio of two independent binomial proportions (Katz, Baptista,
Azen & Pike 1978, Biometrics 34:469–474):

    log RR ± z_{1−α/2} sqrt(1/a − 1/R_i + 1/c − 1/(n − R_i)),

with the Haldane–Anscombe 0.5 correction to all four cells when a cell is zero (Pettigrew et al. 1986).
Without correction it equals ``statsmodels`` ``Table2x2(...).riskratio_confint(method="normal")`` (normal approximation on the log scale).
"""

from __future__ import annotations

import numpy as np

from stereoprobe.stats.common import ConfidenceInterval, critical_z

__all__ = ["katz_log_rr_interval", "lift_interval"]


def katz_log_rr_interval(a, b, c, d, confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Risk ratio ``(a/(a+b)) / (c/(c+d))`` and its Katz log confidence interval (vectorised).

    Cells ``[[a, b], [c, d]]`` (rows = exposed / unexposed, first column = outcome). Where any of the four
    cells is zero, 0.5 is added to all four before computing (Haldane–Anscombe correction).
    Returns ``(rr, low, high)``.

    >>> rr, lo, hi = katz_log_rr_interval(20, 80, 10, 90)  # RR 2, se = sqrt(1/20 − 1/100 + 1/10 − 1/100)
    >>> float(rr), round(float(lo), 4), round(float(hi), 4)
    (2.0, 0.9866, 4.0545)
    """
    a, b, c, d = (np.asarray(x, dtype=float) for x in (a, b, c, d))
    zero = (a == 0) | (b == 0) | (c == 0) | (d == 0)
    a, b, c, d = (np.where(zero, x + 0.5, x) for x in (a, b, c, d))
    rr = (a / (a + b)) / (c / (c + d))
    se = np.sqrt(1 / a - 1 / (a + b) + 1 / c - 1 / (c + d))
    z = critical_z(confidence_level)
    return rr, rr * np.exp(-z * se), rr * np.exp(z * se)


def lift_interval(table, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Confidence interval for the lift of every cell of an r×c table, through Katz's interval for the risk
    ratio of cell (i, j) against the other rows, mapped by ``L = 1 / (w + (1 − w)/RR)``; ``low`` and ``high``
    are arrays of the table's shape.

    The mapping is exact for the point estimate (it reproduces ``n_ij n / (R_i C_j)`` when no cell is
    zero). A cell whose complement column ``C_j − n_ij`` is zero has RR = ∞ and lift ``1 / w``: the upper
    bound is ``1/w`` (the maximum possible lift).

    >>> lo, hi = lift_interval([[30, 10], [10, 30]])  # lift of cell (0, 0): 30·80 / (40·40) = 1.5
    >>> bool(lo[0, 0] < 1.5 < hi[0, 0]), round(float(hi[0, 0]), 4)  # statsmodels Table2x2 RR interval, mapped
    (True, 1.6817)
    """
    t = np.asarray(table, dtype=float)
    n = t.sum()
    rows = t.sum(axis=1, keepdims=True)
    cols = t.sum(axis=0, keepdims=True)
    a = t
    b = rows - t
    c = cols - t
    d = n - rows - cols + t
    _, lo, hi = katz_log_rr_interval(a, b, c, d, confidence_level)
    w = np.broadcast_to(rows / n, t.shape)

    def to_lift(rr):
        with np.errstate(divide="ignore"):
            return 1.0 / (w + (1 - w) / rr)

    return ConfidenceInterval(to_lift(lo), to_lift(hi))
