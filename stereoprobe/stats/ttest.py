"""Student's one-sample t-test and Welch's two-sample t-test, with the t confidence interval of the mean
(difference), as ``scipy.stats.ttest_1samp`` / ``ttest_ind(equal_var=False)``.

- :func:`one_sample_ttest` — Student (1908), Biometrika 6:1–25: ``t = (x̄ − μ₀) / (s/√n)`` with ``n − 1`` df,
  ``s`` the sample standard deviation (ddof 1); interval ``x̄ ± t_{n−1, 1−α/2} s/√n``. With ``s = 0`` the
  interval is ``[x̄, x̄]`` and the two-sided p is 1 when ``x̄ = μ₀``, else 0 (the limit of the test).
- :func:`welch_ttest` — Welch (1947), Biometrika 34:28–35: ``t = (x̄ − ȳ) / √(s_x²/n_x + s_y²/n_y)`` with the
  Welch–Satterthwaite df ``(v_x + v_y)² / (v_x²/(n_x − 1) + v_y²/(n_y − 1))``, ``v = s²/n``. NaN with fewer
  than two values in a sample or no variance in either.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from stereoprobe.stats.common import NAN_INTERVAL, ConfidenceInterval, check_confidence_level

__all__ = ["TTestResult", "one_sample_ttest", "welch_ttest", "welch_ttests"]

Alternative = Literal["two-sided", "less", "greater"]


@dataclass(frozen=True)
class TTestResult:
    """``statistic`` (t), ``pvalue``, ``df``; ``estimate`` (mean, or mean difference) and its standard error
    ``standard_error``, from which :meth:`confidence_interval` builds the two-sided t interval."""

    statistic: float
    pvalue: float
    df: float
    estimate: float
    standard_error: float

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """``estimate ± t_{df, 1−α/2} · standard_error`` (two-sided, whatever the test's alternative)."""
        level = check_confidence_level(confidence_level)
        if math.isnan(self.estimate) or math.isnan(self.df) or math.isnan(self.standard_error):
            return NAN_INTERVAL
        from scipy import stats  # on first use: importing this module does not import scipy.stats

        half = float(stats.t.ppf(0.5 + level / 2, self.df)) * self.standard_error
        return ConfidenceInterval(self.estimate - half, self.estimate + half)


def _pvalue(t: float, df: float, alternative: Alternative) -> float:
    return float(_pvalues(np.asarray(t, dtype=float), np.asarray(df, dtype=float), alternative))


def one_sample_ttest(x: Sequence[float] | np.ndarray, popmean: float = 0.0,
                     alternative: Alternative = "two-sided") -> TTestResult:
    """One-sample t-test of ``mean(x) = popmean``; NaN with fewer than two values.

    >>> res = one_sample_ttest([0.5, -0.1, 0.8, 0.3, 0.6])
    >>> round(res.statistic, 4), round(res.pvalue, 4), res.df  # scipy ttest_1samp
    (2.7456, 0.0516, 4.0)
    >>> [round(b, 4) for b in res.confidence_interval()]
    [-0.0047, 0.8447]
    """
    a = np.asarray(x, dtype=float)
    n = len(a)
    m = float(a.mean()) if n else math.nan
    if n < 2:
        return TTestResult(math.nan, math.nan, math.nan, m, math.nan)
    se = float(a.std(ddof=1)) / math.sqrt(n)
    df = float(n - 1)
    if se == 0:
        if alternative not in ("two-sided", "less", "greater"):
            raise ValueError(f"unknown alternative {alternative!r} (two-sided, less, greater)")
        d = m - popmean
        t = 0.0 if d == 0 else math.copysign(math.inf, d)
        p = 1.0 if d == 0 else _pvalue(t, df, alternative)
        return TTestResult(t, p, df, m, 0.0)
    t = (m - popmean) / se
    return TTestResult(t, _pvalue(t, df, alternative), df, m, se)


def _welch_statistic(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> TTestResult:
    """:func:`welch_ttest` without its p-value (NaN), which :func:`_pvalue` adds where ``statistic`` is a number."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n1, n2 = len(a), len(b)
    diff = float(a.mean() - b.mean()) if n1 and n2 else math.nan
    if n1 < 2 or n2 < 2:
        return TTestResult(math.nan, math.nan, math.nan, diff, math.nan)
    v1, v2 = float(np.var(a, ddof=1)) / n1, float(np.var(b, ddof=1)) / n2
    se = math.sqrt(v1 + v2)
    if se == 0:
        return TTestResult(math.nan, math.nan, math.nan, diff, 0.0)
    df = (v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1))
    return TTestResult(diff / se, math.nan, df, diff, se)


def welch_ttest(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
                alternative: Alternative = "two-sided") -> TTestResult:
    """Welch's unequal-variance t-test of ``mean(x) = mean(y)``; ``estimate`` = ``mean(x) − mean(y)``.

    >>> res = welch_ttest([1.0, 2.0, 3.0, 4.0], [2.5, 3.5, 4.5, 6.0, 7.0], alternative="less")
    >>> round(res.statistic, 4), round(res.df, 4), round(res.pvalue, 4)  # scipy ttest_ind(equal_var=False)
    (-2.1153, 6.9467, 0.0363)
    """
    r = _welch_statistic(x, y)
    if math.isnan(r.statistic):
        return r
    return replace(r, pvalue=_pvalue(r.statistic, r.df, alternative))


def welch_ttests(pairs: Sequence[tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]],
                 alternative: Alternative = "two-sided") -> list[TTestResult]:
    """:func:`welch_ttest` of each ``(x, y)`` pair, the p-values from one call of the t distribution on all of
    them (the same function element by element: the same numbers as one test at a time, faster for many).

    >>> [round(r.pvalue, 4) for r in welch_ttests([([1.0, 2.0, 3.0, 4.0], [2.5, 3.5, 4.5, 6.0, 7.0]),
    ...                                             ([1.0], [2.0, 3.0])], alternative="less")]
    [0.0363, nan]
    """
    results = [_welch_statistic(x, y) for x, y in pairs]
    tested = [k for k, r in enumerate(results) if not math.isnan(r.statistic)]
    if tested:
        t = np.array([results[k].statistic for k in tested])
        df = np.array([results[k].df for k in tested])
        for k, p in zip(tested, _pvalues(t, df, alternative)):
            results[k] = replace(results[k], pvalue=float(p))
    return results


def _pvalues(t: np.ndarray, df: np.ndarray, alternative: Alternative) -> np.ndarray:
    """:func:`_pvalue` of each (t, df): ``scipy.stats.t``'s values, from ``scipy.special`` (no ``scipy.stats``
    import: :mod:`stereoprobe.stats.distributions`)."""
    from stereoprobe.stats.distributions import t_cdf, t_sf

    if alternative == "two-sided":
        return 2 * t_sf(np.abs(t), df)
    if alternative == "less":
        return t_cdf(t, df)
    if alternative == "greater":
        return t_sf(t, df)
    raise ValueError(f"unknown alternative {alternative!r} (two-sided, less, greater)")
