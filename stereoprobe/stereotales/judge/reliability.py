"""Agreement among raters of the same kind: human raters with each other, LLM judges with each other.

The paper reports that "LLM raters agree more with each other than humans do" (Le Jeune et al., 2026,
StereoTales, human-LLM comparison). These functions put numbers on both sides with the same measures, so the
claim can be checked next to the human-LLM agreement of :mod:`.alignment`:

- Krippendorff's alpha (:func:`stereoprobe.stats.agreement.krippendorff_alpha_from_counts`) of the individual
  harm ratings (interval and ordinal, 1-5) and of the harmful/benign labels (nominal; rating >= threshold), with
  a percentile bootstrap interval over associations (units);
- split-half reliability of the mean rating per association: the ratings of each association are split at
  random into two halves, the half means are correlated over associations (Pearson), and the Spearman-Brown
  formula ``2 r / (1 + r)`` steps the correlation up to the full panel (Spearman 1910; Brown 1910). The
  estimate is the mean over random splits;
- the reliability of a panel's mean grows with the panel's size (Spearman-Brown), so the split-half figures of
  23 LLM judges and of about 8 human raters per association are not on equal footing. Two rows put them on it:
  the reliability of one rater, ``rho_1 = r_k / (k - (k - 1) r_k)`` (the Spearman-Brown formula stepped down
  from the panel's ``k`` = mean ratings per association), and, when both groups are present, each group's
  reliability at the human panel's size ``m``, ``m rho_1 / (1 + (m - 1) rho_1)``.

Which rating of an LLM counts: one answer per (model, association), the valid answer of the lowest epoch, so
that an LLM judge contributes one rating per association like one human rater (means over repetitions would
make LLMs look more reliable by construction).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from stereoprobe.stats.agreement import (
    Level,
    krippendorff_alpha_bootstrap,
    krippendorff_alpha_from_counts,
    spearman_brown,
)

HUMAN_GROUP = "human raters"
LLM_GROUP = "LLM judges"
RELIABILITY_COLUMNS = [
    "group", "measure", "estimate", "ci_low", "ci_high", "ci_method", "n_items", "n_raters", "n_ratings",
]


def single_llm_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    """One rating per (evaluator, association): the valid harm rating of the lowest epoch.

    ``ratings``: the ``judge_ratings`` table. Returns ``rater, item, value``.
    """
    valid = ratings.dropna(subset=["harm"]).sort_values(["evaluator", "association_id", "epoch"], kind="mergesort")
    first = valid.drop_duplicates(["evaluator", "association_id"])
    return pd.DataFrame({"rater": first["evaluator"].astype(str), "item": first["association_id"].astype(str),
                         "value": first["harm"].astype(float)}).reset_index(drop=True)


def human_long(human: pd.DataFrame) -> pd.DataFrame:
    """Human ratings (``participant_id, association_id, harm``) as ``rater, item, value``."""
    return pd.DataFrame({"rater": human["participant_id"].astype(str), "item": human["association_id"].astype(str),
                         "value": human["harm"].astype(float)})


def unit_counts(long: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Units x values count table of a ``rater, item, value`` frame (items in sorted order) and the values."""
    if long.empty:
        return np.zeros((0, 0)), np.zeros(0)
    tab = pd.crosstab(long["item"], long["value"])
    return tab.to_numpy(float), tab.columns.to_numpy(float)


def alpha_with_ci(
    long: pd.DataFrame, level: Level, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0
) -> tuple[float, float, float]:
    """Krippendorff's alpha of ``rater, item, value`` data and a percentile bootstrap interval over items.

    Each resample draws the items with replacement (numpy ``default_rng(seed)``) and recomputes alpha from the
    resampled coincidences; undefined resamples (a single value) are skipped. ``n_resamples = 0``: no interval.
    """
    counts, values = unit_counts(long)
    if counts.size == 0:
        return math.nan, math.nan, math.nan
    est = krippendorff_alpha_from_counts(counts, values, level)
    if n_resamples <= 0 or math.isnan(est):
        return est, math.nan, math.nan
    lo, hi = krippendorff_alpha_bootstrap(counts, values, level, n_resamples, confidence, seed).confidence_interval
    return est, lo, hi


def split_half(long: pd.DataFrame, n_splits: int = 200, seed: int = 0) -> tuple[float, float, float, int]:
    """Split-half reliability of the mean rating per item with the Spearman-Brown correction.

    Items with fewer than two ratings are dropped. For each of ``n_splits`` random splits (numpy
    ``default_rng(seed)``), the ratings of every item are shuffled and cut into two halves (sizes
    ``floor(m/2)`` and ``ceil(m/2)``), the two half means are correlated over items (Pearson r) and corrected
    with :func:`spearman_brown`. Returns (mean corrected r over splits, its 2.5% and 97.5% split quantiles,
    number of items). NaN with fewer than three items or when a half is constant in every split.
    """
    g = long.groupby("item")["value"]
    groups = [v.to_numpy(float) for _, v in g if len(v) >= 2]
    k = len(groups)
    if k < 3 or n_splits <= 0:
        return math.nan, math.nan, math.nan, k
    # items of equal size m form one k_m x m matrix; a split shuffles each row (argsort of random keys)
    by_size: dict[int, list[int]] = {}
    for i, v in enumerate(groups):
        by_size.setdefault(len(v), []).append(i)
    blocks = [(np.array(idx), np.stack([groups[i] for i in idx])) for idx in by_size.values()]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_splits):
        a = np.empty(k)
        b = np.empty(k)
        for idx, mat in blocks:
            m = mat.shape[1]
            shuffled = np.take_along_axis(mat, np.argsort(rng.random(mat.shape), axis=1), axis=1)
            a[idx], b[idx] = shuffled[:, : m // 2].mean(axis=1), shuffled[:, m // 2 :].mean(axis=1)
        if a.std() == 0 or b.std() == 0:
            continue
        out.append(spearman_brown(float(np.corrcoef(a, b)[0, 1])))
    if not out:
        return math.nan, math.nan, math.nan, k
    return float(np.mean(out)), float(np.quantile(out, 0.025)), float(np.quantile(out, 0.975)), k


def panel_size(long: pd.DataFrame) -> float:
    """Mean number of ratings per item among the items with at least two (the split-half's panel size)."""
    sizes = long.groupby("item").size() if len(long) else pd.Series(dtype=float)
    sizes = sizes[sizes >= 2]
    return float(sizes.mean()) if len(sizes) else math.nan


PER_RATER = "reliability_per_rater (split-half stepped down by Spearman-Brown to one rater)"


def _rows(group: str, long: pd.DataFrame, threshold: float, confidence: float, n_resamples: int, n_splits: int,
          seed: int) -> list[dict[str, object]]:
    n_items = int(long.groupby("item").size().ge(2).sum()) if len(long) else 0
    base = {"group": group, "n_items": n_items, "n_raters": int(long["rater"].nunique()), "n_ratings": len(long)}
    boot = f"percentile bootstrap over associations ({n_resamples} resamples)"
    rows: list[dict[str, object]] = []
    for level in ("interval", "ordinal"):
        est, lo, hi = alpha_with_ci(long, level, confidence, n_resamples, seed)
        rows.append({**base, "measure": f"krippendorff_alpha_{level} (ratings 1-5)", "estimate": est, "ci_low": lo,
                     "ci_high": hi, "ci_method": boot})
    labels = long.assign(value=(long["value"] >= threshold).astype(float))
    est, lo, hi = alpha_with_ci(labels, "nominal", confidence, n_resamples, seed)
    rows.append({**base, "measure": f"krippendorff_alpha_nominal (harmful iff rating >= {threshold:g})",
                 "estimate": est, "ci_low": lo, "ci_high": hi, "ci_method": boot})
    sh, lo, hi, k = split_half(long, n_splits, seed)
    size = panel_size(long)
    rows.append({**base, "measure": f"split_half_spearman_brown (mean rating per association, {size:.1f} "
                 "ratings each)", "estimate": sh, "ci_low": lo, "ci_high": hi,
                 "ci_method": f"2.5-97.5% range over {n_splits} random splits", "n_items": k})
    step = 1 / size if size > 0 else math.nan
    rows.append({**base, "measure": PER_RATER, "estimate": spearman_brown(sh, step),
                 "ci_low": spearman_brown(lo, step), "ci_high": spearman_brown(hi, step),
                 "ci_method": f"the split-half range stepped down from {size:.1f} ratings per association",
                 "n_items": k})
    return rows


def _common_size_rows(rows: list[dict[str, object]], size: float) -> list[dict[str, object]]:
    """Each group's per-rater reliability stepped up to a panel of ``size`` raters (the human panel's)."""
    out = []
    for r in [r for r in rows if r["measure"] == PER_RATER]:
        out.append({**r, "measure": f"reliability_at_panel_size_{size:.1f} (Spearman-Brown from one rater to "
                    "the human panel's mean size)", "estimate": spearman_brown(float(r["estimate"]), size),
                    "ci_low": spearman_brown(float(r["ci_low"]), size),
                    "ci_high": spearman_brown(float(r["ci_high"]), size),
                    "ci_method": f"the per-rater range stepped up to {size:.1f} raters"})
    return out


def rater_reliability(
    ratings: pd.DataFrame,
    human: pd.DataFrame | None = None,
    threshold: float = 4.0,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    n_splits: int = 200,
    seed: int = 0,
    items: Sequence[str] | None = None,
    per_eval: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Agreement among human raters and among LLM judges, measured the same way (columns
    :data:`RELIABILITY_COLUMNS`). ``items``: restrict both groups to these associations (e.g. those rated by
    both, for a like-for-like comparison); default: every association each group rated.

    ``per_eval`` (:func:`~stereoprobe.stereotales.judge.alignment.evaluator_ratings`): adds the agreement of the
    judges' own harmful/benign labels (median of each judge's repetitions >= threshold), the labels the pairwise
    agreement table compares, as Krippendorff's alpha (nominal) among the LLM judges."""
    llm = single_llm_ratings(ratings)
    groups = [(LLM_GROUP, llm)]
    if human is not None:
        groups.insert(0, (HUMAN_GROUP, human_long(human)))
    rows = []
    human_size = math.nan
    for name, long in groups:
        if items is not None:
            long = long[long["item"].isin(set(items))]
        rows.extend(_rows(name, long, threshold, confidence, n_resamples, n_splits, seed))
        if name == HUMAN_GROUP:
            human_size = panel_size(long)
    if not math.isnan(human_size) and human_size >= 1:
        rows.extend(_common_size_rows(rows, human_size))
    if per_eval is not None:
        lab = per_eval.dropna(subset=["median_harm"])
        long = pd.DataFrame({"rater": lab["evaluator"].astype(str), "item": lab["association_id"].astype(str),
                             "value": lab["harmful"].astype(bool).astype(float)})
        if items is not None:
            long = long[long["item"].isin(set(items))]
        est, lo, hi = alpha_with_ci(long, "nominal", confidence, n_resamples, seed)
        rows.append({"group": LLM_GROUP, "measure": "krippendorff_alpha_nominal (per-judge labels: median of its "
                     f"repetitions >= {threshold:g})", "estimate": est, "ci_low": lo, "ci_high": hi,
                     "ci_method": f"percentile bootstrap over associations ({n_resamples} resamples)",
                     "n_items": int(long.groupby("item").size().ge(2).sum()) if len(long) else 0,
                     "n_raters": int(long["rater"].nunique()), "n_ratings": len(long)})
    return pd.DataFrame(rows, columns=RELIABILITY_COLUMNS)
