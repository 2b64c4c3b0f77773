"""GlobalBias' headline counts with their one interval each, computed once by ``stereoprobe globalbias`` and
written as its ``headline`` table; the report, the leaderboard and the index read that table.

- ``flagged``: group x descriptor pairs flagged by the reference 1% rule. Interval: cluster bootstrap over
  descriptors (:func:`stereoprobe.stats.bootstrap.cluster_bootstrap` of the per-descriptor counts), widened to
  Garwood's exact Poisson interval (:func:`stereoprobe.stats.counts.count_interval`).
- ``significant``: discoveries of the stricter test (Benjamini-Hochberg at ``alpha``). Interval: cluster
  bootstrap over descriptors with BH re-applied to the resampled p-values in each draw
  (:func:`stereoprobe.stats.bootstrap.bh_count_bootstrap`), widened the same way. Re-applying BH lets a draw
  find discoveries the observed data do not (BH's threshold moves with the resampled p-values), so at one
  count this interval can reach further than ``flagged``'s: two methods, each named in ``method``.
"""

from __future__ import annotations

import pandas as pd

from stereoprobe.leaderboard.headline import as_bool
from stereoprobe.stats.bootstrap import bh_count_bootstrap, cluster_bootstrap
from stereoprobe.stats.counts import COUNT_METHOD, count_interval
from stereoprobe.stats.multiple_testing import bh_reject

__all__ = ["FLAGGED_METHOD", "HEADLINE_COLUMNS", "N_BOOT", "SIGNIFICANT_METHOD", "headline_rows"]

#: bootstrap draws of the headline intervals (the leaderboard's default)
N_BOOT = 2000
HEADLINE_COLUMNS = ["metric", "estimate", "ci_low", "ci_high", "n", "method"]
FLAGGED_METHOD = "reference 1% rule; cluster bootstrap over descriptors"
SIGNIFICANT_METHOD = "stricter test, BH; cluster bootstrap over descriptors with BH re-applied"


def headline_rows(scores: pd.DataFrame, alpha: float = 0.05, n_boot: int = N_BOOT, seed: int = 0,
                  level: float = 0.95) -> list[dict[str, object]]:
    """The headline rows (:data:`HEADLINE_COLUMNS`) of one model's ``bias_scores`` table (module docstring);
    ``significant`` only where the table holds p-values."""
    flagged = as_bool(scores["flagged"])
    descs = sorted(scores["descriptor"].astype(str).unique())
    per = flagged.groupby(scores["descriptor"].astype(str)).sum().reindex(descs, fill_value=0).to_numpy(float)
    k = float(flagged.sum())
    ci = count_interval(k, cluster_bootstrap(per, None, n_boot, level, seed).confidence_interval, level)
    rows: list[dict[str, object]] = [{"metric": "flagged", "estimate": k, "ci_low": ci.low, "ci_high": ci.high,
                                      "n": len(scores), "method": f"{FLAGGED_METHOD}; interval: {COUNT_METHOD}"}]
    if "p_value" in scores.columns and scores["p_value"].notna().any():
        t = scores[scores["p_value"].notna()]
        sig = as_bool(t["significant"]) if "significant" in t.columns else pd.Series(bh_reject(t["p_value"], alpha),
                                                                                     index=t.index)
        boot = bh_count_bootstrap(t["p_value"].to_numpy(float), t["descriptor"].astype(str).to_numpy(), alpha,
                                  n_boot, level, seed).confidence_interval
        ci = count_interval(float(sig.sum()), boot, level)
        rows.append({"metric": "significant", "estimate": float(sig.sum()), "ci_low": ci.low, "ci_high": ci.high,
                     "n": len(t), "method": f"{SIGNIFICANT_METHOD}; interval: {COUNT_METHOD}"})
    return rows
