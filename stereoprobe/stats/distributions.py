"""The t and χ² distribution functions the post-processing needs, from ``scipy.special`` alone: the doubles of
``scipy.stats.t.cdf`` / ``t.sf`` / ``chi2.ppf``, without importing ``scipy.stats`` (about a second of a
post-processing command's start, for one call).

``scipy.stats``' continuous distributions evaluate these functions as the special functions below, behind
argument checks done in Python (``rv_continuous.cdf`` / ``sf`` / ``ppf`` in ``scipy/stats/_distn_infrastructure.py``,
scipy 1.17): ``t_gen._cdf(x, df) = stdtr(df, x)``, ``t_gen._sf(x, df) = stdtr(df, -x)``, ``chi2_gen._ppf(q, df) =
2 * gammaincinv(df / 2, q)`` (loc 0, scale 1). The checks are reproduced here: NaN for a degree of freedom that
is not positive or a NaN argument; the support's ends (``x = ±inf``; ``q = 0``, ``q = 1``) give the bounds
themselves; ``q`` outside [0, 1] gives NaN. ``tests/stats/test_distributions.py`` compares them bit for bit with
``scipy.stats`` on grids that include every such edge.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

__all__ = ["chi2_ppf", "t_cdf", "t_sf"]


def _args(x: ArrayLike, df: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x, df = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(df, dtype=float))
    return x, df


def _out(values: np.ndarray) -> np.ndarray | np.float64:
    return values[()] if values.ndim == 0 else values


def t_cdf(x: ArrayLike, df: ArrayLike) -> np.ndarray | np.float64:
    """``scipy.stats.t.cdf(x, df)``, the same doubles (module docstring).

    >>> round(float(t_cdf(-2.1153, 6.9467)), 4)  # scipy.stats.t.cdf: 0.036261
    0.0363
    """
    x, df = _args(x, df)
    with np.errstate(invalid="ignore"):
        good = (df > 0) & ~np.isnan(x)
        out = np.where(good & np.isfinite(x), special.stdtr(np.where(good, df, 1.0), np.where(good, x, 0.0)), 0.0)
    out = np.where(good & (x == np.inf), 1.0, out)
    return _out(np.where(good, out, np.nan))


def t_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray | np.float64:
    """``scipy.stats.t.sf(x, df)``, the same doubles (module docstring).

    >>> round(float(2 * t_sf(2.1153, 6.9467)), 4)  # two-sided p, scipy: 2 * stats.t.sf = 0.072523
    0.0725
    """
    x, df = _args(x, df)
    with np.errstate(invalid="ignore"):
        good = (df > 0) & ~np.isnan(x)
        out = np.where(good & np.isfinite(x), special.stdtr(np.where(good, df, 1.0), np.where(good, -x, 0.0)), 0.0)
    out = np.where(good & (x == -np.inf), 1.0, out)
    return _out(np.where(good, out, np.nan))


def chi2_ppf(q: ArrayLike, df: ArrayLike) -> np.ndarray | np.float64:
    """``scipy.stats.chi2.ppf(q, df)``, the same doubles (module docstring).

    >>> round(float(chi2_ppf(0.975, 2)) / 2, 6)  # Garwood's upper bound for a count of 0: 3.688879
    3.688879
    """
    q, df = _args(q, df)
    with np.errstate(invalid="ignore"):
        good = df > 0
        inner = good & (q > 0) & (q < 1)
        # `* 1.0 + 0.0`: scipy's `_ppf(q) * scale + loc` with scale 1 and loc 0, kept for the same doubles
        ppf = 2 * special.gammaincinv(np.where(inner, df, 2.0) / 2, np.where(inner, q, 0.5))
        out = np.where(inner, ppf * 1.0 + 0.0, np.nan)
    out = np.where(good & (q == 0), 0.0, out)
    out = np.where(good & (q == 1), np.inf, out)
    return _out(out)
