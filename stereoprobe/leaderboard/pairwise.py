"""Paired model-vs-model comparisons on the same items -> the rows of ``pairwise.csv``.

For every unordered pair of models (``model_a`` < ``model_b`` alphabetically) that share items of a probe,
``estimate`` is A − B (a positive value: A shows more of the measured bias), with an interval and a
two-sided p-value; ``q_value`` is the Benjamini–Hochberg adjustment over every row of the table that has a
p-value (:func:`add_q_values`). Every registered probe (:func:`stereoprobe.probes.registered`) whose descriptor
has a ``pairwise`` function contributes rows (built with :func:`pair_row`); its items and tests are described
in the probe's ``leaderboard`` module (:mod:`stereoprobe.stereotales.mining.leaderboard`,
:mod:`stereoprobe.dbb.leaderboard`, :mod:`stereoprobe.globalbias.leaderboard`). The helpers here pair two
models' items (:func:`paired_items`) and compare them (:func:`compare_continuous`, :func:`compare_binary`;
formulas in :mod:`stereoprobe.stats`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.leaderboard.sources import Sources
from stereoprobe.probes import LeaderboardOptions, registered
from stereoprobe.stats.multiple_testing import adjust_bh
from stereoprobe.stats.paired import paired_mean_difference, paired_share_difference

__all__ = ["PAIRWISE_COLUMNS", "add_q_values", "compare_binary", "compare_continuous", "model_pairs", "pair_row",
           "paired_items", "pairwise_table"]

PAIRWISE_COLUMNS = ["probe", "metric", "model_a", "model_b", "estimate", "ci_low", "ci_high", "p_value", "q_value",
                    "n", "test"]
NAN = float("nan")


def pair_row(probe: str, metric: str, a: str, b: str, est: float, ci: tuple[float, float], p: float, n: int,
             test: str) -> dict[str, Any]:
    """One row of the pairwise table (``q_value`` is filled by :func:`add_q_values`)."""
    return {"probe": probe, "metric": metric, "model_a": a, "model_b": b, "estimate": float(est),
            "ci_low": float(ci[0]), "ci_high": float(ci[1]), "p_value": float(p), "q_value": NAN, "n": int(n),
            "test": test}


def model_pairs(models: Iterable[Any]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct models, each pair alphabetically ordered."""
    return list(itertools.combinations(sorted(set(map(str, models))), 2))


def compare_continuous(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int,
                       level: float) -> tuple[float, tuple[float, float], float]:
    """Paired continuous values: (mean of x − y, cluster-bootstrap CI, Wilcoxon p), the statistic of
    :func:`stereoprobe.stats.paired.paired_mean_difference` in the leaderboard's argument order."""
    res = paired_mean_difference(x, y, clusters, n_boot, level, seed)
    return res.statistic, res.confidence_interval, res.pvalue


def compare_binary(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int,
                   level: float) -> tuple[float, tuple[float, float], float]:
    """Paired binary outcomes: (share_x − share_y, cluster-bootstrap CI, exact McNemar p), the statistic of
    :func:`stereoprobe.stats.paired.paired_share_difference` in the leaderboard's argument order."""
    res = paired_share_difference(x, y, clusters, n_boot, level, seed)
    return res.statistic, res.confidence_interval, res.pvalue


def paired_items(df: pd.DataFrame, key: list[str], a: str, b: str) -> pd.DataFrame:
    """Rows of models a and b side by side on ``key`` (suffixes _a, _b), items present for both only."""
    left = df[df["model"].astype(str) == a]
    right = df[df["model"].astype(str) == b]
    return left.merge(right, on=key, suffixes=("_a", "_b"), how="inner")


def add_q_values(df: pd.DataFrame) -> pd.DataFrame:
    """Benjamini–Hochberg q-values over every row with a p-value (rows without one keep an empty q)."""
    out = df.copy()
    ok = out["p_value"].notna()
    out["q_value"] = np.nan
    if ok.any():
        out.loc[ok, "q_value"] = adjust_bh(out.loc[ok, "p_value"].to_numpy(float))
    return out


def pairwise_table(src: Sources, options: LeaderboardOptions = LeaderboardOptions()) -> pd.DataFrame:
    """Every paired comparison of every registered probe, with BH q-values across the whole table."""
    rows = [r for d in registered() for r in d.call("pairwise", src, options)]
    return add_q_values(pd.DataFrame(rows, columns=PAIRWISE_COLUMNS))
