"""Paired model-vs-model comparisons on the same items -> the rows of ``pairwise.csv``.

For every unordered pair of models (``model_a`` < ``model_b`` alphabetically) that share items of a probe,
``estimate`` is A − B (a positive value: A shows more of the measured bias), with an interval and a
two-sided p-value from ONE procedure: the p-value inverts the interval (the cluster-robust t-test and
interval of :func:`stereoprobe.stats.paired.paired_cluster_t`; Newcombe's interval and
:func:`stereoprobe.stats.proportion.newcombe_pvalue`), so ``p_value < 0.05`` exactly when the 95% interval
excludes 0. ``q_value`` is the Benjamini–Hochberg adjustment over every row of the table that has a p-value,
and ``fcr_low``/``fcr_high`` the false-coverage-rate adjusted interval of Benjamini & Yekutieli (2005), JASA
100:71–81: the same procedure at level ``fcr_level = 1 − max(R, 1)·α/m`` (``R`` rows with q < α of ``m``
tested). A row has q < α exactly when its FCR interval excludes 0 (BH selects the p-values below ``Rα/m`` and
leaves the others at or above ``(R + 1)α/m``), so a star on q and the interval shown beside it always agree
(:func:`add_q_values`). Every registered probe (:func:`stereoprobe.probes.registered`) whose descriptor
has a ``pairwise`` function contributes rows (built with :func:`pair_row`); its items and tests are described
in the probe's ``leaderboard`` module (:mod:`stereoprobe.stereotales.mining.leaderboard`,
:mod:`stereoprobe.dbb.leaderboard`, :mod:`stereoprobe.globalbias.leaderboard`). The helpers here pair two
models' items (:func:`paired_items`) and compare them (:func:`compare_continuous`, :func:`compare_binary`;
formulas in :mod:`stereoprobe.stats`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.leaderboard.sources import Sources
from stereoprobe.probes import LeaderboardOptions, registered
from stereoprobe.stats.common import ConfidenceInterval
from stereoprobe.stats.multiple_testing import adjust_bh
from stereoprobe.stats.paired import paired_cluster_t
from stereoprobe.stats.proportion import newcombe_interval, newcombe_pvalue

__all__ = ["ALPHA", "PAIRWISE_COLUMNS", "LevelledInterval", "add_q_values", "compare_binary", "compare_continuous",
           "compare_shares", "model_pairs", "pair_row", "paired_items", "pairwise_table", "significant"]

PAIRWISE_COLUMNS = ["probe", "metric", "model_a", "model_b", "estimate", "ci_low", "ci_high", "p_value", "q_value",
                    "n", "test", "fcr_level", "fcr_low", "fcr_high"]
NAN = float("nan")
ALPHA = 0.05  # the FDR level of the stars and of the FCR-adjusted intervals
_AT_LEVEL = "_interval_at_level"  # transient column: the row's interval procedure at any level


class LevelledInterval(tuple):
    """``(low, high)`` of a comparison, carrying ``at_level(confidence_level)``: the same procedure at another
    level (used for the FCR-adjusted interval once the number of BH selections is known)."""

    at_level: Callable[[float], ConfidenceInterval]

    def __new__(cls, ci: tuple[float, float], at_level: Callable[[float], ConfidenceInterval]) -> LevelledInterval:
        obj = super().__new__(cls, (float(ci[0]), float(ci[1])))
        obj.at_level = at_level
        return obj


def scaled_interval(ci: tuple[float, float], factor: float) -> tuple[float, float]:
    """``ci`` times ``factor`` (> 0), a :class:`LevelledInterval` staying one at every level: e.g. a paired
    difference of shares over n items as a difference of counts (n times it, the same test)."""
    low, high = float(ci[0]) * factor, float(ci[1]) * factor
    if isinstance(ci, LevelledInterval):
        at_level = ci.at_level
        return LevelledInterval((low, high), lambda level: ConfidenceInterval(
            *(float(b) * factor for b in at_level(level))))
    return low, high


def pair_row(probe: str, metric: str, a: str, b: str, est: float, ci: tuple[float, float], p: float, n: int,
             test: str) -> dict[str, Any]:
    """One row of the pairwise table (``q_value`` and the FCR interval are filled by :func:`add_q_values`, from
    ``ci.at_level`` when ``ci`` is a :class:`LevelledInterval`)."""
    row = {"probe": probe, "metric": metric, "model_a": a, "model_b": b, "estimate": float(est),
           "ci_low": float(ci[0]), "ci_high": float(ci[1]), "p_value": float(p), "q_value": NAN, "n": int(n),
           "test": test, "fcr_level": NAN, "fcr_low": NAN, "fcr_high": NAN}
    if isinstance(ci, LevelledInterval):
        row[_AT_LEVEL] = ci.at_level
    return row


def model_pairs(models: Iterable[Any]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct models, each pair alphabetically ordered."""
    return list(itertools.combinations(sorted(set(map(str, models))), 2))


def compare_continuous(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int,
                       level: float) -> tuple[float, LevelledInterval, float]:
    """Paired continuous values: (mean of x − y, cluster-robust t interval, its t-test p), from
    :func:`stereoprobe.stats.paired.paired_cluster_t` (``n_boot`` and ``seed`` are unused: the procedure is
    analytic; they stay for the probes' calls)."""
    res = paired_cluster_t(x, y, clusters, level)
    return res.statistic, LevelledInterval(res.confidence_interval, res.interval), res.pvalue


def compare_binary(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int,
                   level: float) -> tuple[float, LevelledInterval, float]:
    """Paired binary outcomes: (share_x − share_y, cluster-robust t interval, its t-test p)."""
    return compare_continuous(np.asarray(x, dtype=bool).astype(float), np.asarray(y, dtype=bool).astype(float),
                              clusters, n_boot, seed, level)


def compare_shares(k1: float, n1: float, k2: float, n2: float, level: float) -> tuple[float, LevelledInterval, float]:
    """Two independent shares: (k1/n1 − k2/n2, Newcombe's interval, the p-value inverting it)."""
    def at_level(confidence_level: float) -> ConfidenceInterval:
        return newcombe_interval(k1, n1, k2, n2, confidence_level)

    return k1 / n1 - k2 / n2, LevelledInterval(at_level(level), at_level), newcombe_pvalue(k1, n1, k2, n2)


def paired_items(df: pd.DataFrame, key: list[str], a: str, b: str) -> pd.DataFrame:
    """Rows of models a and b side by side on ``key`` (suffixes _a, _b), items present for both only."""
    left = df[df["model"].astype(str) == a]
    right = df[df["model"].astype(str) == b]
    return left.merge(right, on=key, suffixes=("_a", "_b"), how="inner")


def significant(q: object, alpha: float = ALPHA) -> bool:
    """The star of a row: its BH q-value lies below ``alpha``."""
    return bool(not pd.isna(q) and float(q) < alpha)  # type: ignore[arg-type]


def add_q_values(df: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Benjamini–Hochberg q-values over every row with a p-value (rows without one keep an empty q), and, for
    rows whose interval can be recomputed at another level, the FCR-adjusted interval (module docstring)."""
    out = df.copy()
    ok = out["p_value"].notna()
    out["q_value"] = np.nan
    for col in ("fcr_level", "fcr_low", "fcr_high"):
        out[col] = np.nan
    if ok.any():
        out.loc[ok, "q_value"] = adjust_bh(out.loc[ok, "p_value"].to_numpy(float))
    selected = int((out.loc[ok, "q_value"] < alpha).sum())
    fcr = 1 - max(selected, 1) * alpha / max(int(ok.sum()), 1)
    if _AT_LEVEL in out.columns:
        for i in out.index[ok]:
            at_level = out.at[i, _AT_LEVEL]
            if callable(at_level):
                out.at[i, "fcr_level"] = fcr
                out.at[i, "fcr_low"], out.at[i, "fcr_high"] = at_level(fcr)
        out = out.drop(columns=[_AT_LEVEL])
    return out


def pairwise_table(src: Sources, options: LeaderboardOptions = LeaderboardOptions()) -> pd.DataFrame:
    """Every paired comparison of every registered probe, with BH q-values and FCR-adjusted intervals across
    the whole table."""
    rows = [r for d in registered() for r in d.call("pairwise", src, options)]
    return add_q_values(pd.DataFrame(rows, columns=PAIRWISE_COLUMNS + [_AT_LEVEL]))[PAIRWISE_COLUMNS]
