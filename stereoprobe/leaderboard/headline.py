"""Headline figures per model and probe, each with an interval, from the probes' output tables.

Every registered probe (:func:`stereoprobe.probes.registered`) whose descriptor has a ``metrics`` function
contributes rows (dicts with the keys of :data:`METRIC_COLUMNS`, built with :func:`metric_row`); what each
figure is and how its interval is computed is in the probe's ``leaderboard`` module
(:mod:`stereoprobe.stereotales.mining.leaderboard`, :mod:`stereoprobe.dbb.leaderboard`,
:mod:`stereoprobe.globalbias.leaderboard`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from stereoprobe.leaderboard.sources import Sources
from stereoprobe.probes import LeaderboardOptions, registered

__all__ = ["METRIC_COLUMNS", "as_bool", "headline_table", "metric_row", "wide_table"]

METRIC_COLUMNS = ["model", "probe", "metric", "estimate", "ci_low", "ci_high", "n", "better", "method"]
NAN = float("nan")


def metric_row(model: str, probe: str, metric: str, est: float, ci: tuple[float, float] = (NAN, NAN),
               n: float = NAN, better: str = "lower", method: str = "", count: bool = False,
               level: float = 0.95) -> dict[str, Any]:
    """One row of the metrics table (``probe``: the leaderboard board, e.g. ``dbb_sg``). ``count``: ``est`` is
    a count, whose interval is the one rule of every count column (:func:`stereoprobe.stats.counts.
    count_interval`: exact Poisson at ``level``, widened to ``ci``, the cluster bootstrap's, where wider)."""
    if count:
        from stereoprobe.stats.counts import COUNT_METHOD, count_interval

        ci = count_interval(est, ci, level)
        method = f"{method}; interval: {COUNT_METHOD}" if method else COUNT_METHOD
    return {"model": model, "probe": probe, "metric": metric, "estimate": float(est), "ci_low": float(ci[0]),
            "ci_high": float(ci[1]), "n": float(n), "better": better, "method": method}


def as_bool(s: pd.Series) -> pd.Series:
    """A flag column read back from CSV or Parquet as booleans (``"True"``, ``"1"``, ``"yes"``; missing: False)."""
    if s.dtype == object:
        s = s.map(lambda v: str(v).strip().lower() in ("true", "1", "1.0", "yes") if not pd.isna(v) else False)
    return s.fillna(False).astype(bool)


def headline_table(src: Sources, options: LeaderboardOptions = LeaderboardOptions()) -> pd.DataFrame:
    """Long table: one row per (model, probe, metric) with estimate, interval, n, direction and method, from
    every registered probe's ``metrics`` function, in the probes' display order."""
    rows = [r for d in registered() for r in d.call("metrics", src, options)]
    return pd.DataFrame(rows, columns=METRIC_COLUMNS)


def wide_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per model: ``model``, then per metric ``<probe>.<metric>``, ``..._ci_low``, ``..._ci_high``."""
    models = sorted(metrics["model"].unique())
    out = pd.DataFrame({"model": models})
    for (probe, metric), g in metrics.groupby(["probe", "metric"], sort=False):
        g = g.set_index("model")
        name = f"{probe}.{metric}"
        out[name] = out["model"].map(g["estimate"])
        out[f"{name}_ci_low"] = out["model"].map(g["ci_low"])
        out[f"{name}_ci_high"] = out["model"].map(g["ci_high"])
    return out
