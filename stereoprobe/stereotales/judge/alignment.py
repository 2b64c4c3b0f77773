"""Human-LLM alignment of StereoTales harm ratings: correlations, labels, agreement, deltas. Pure functions.

Inputs are tidy DataFrames:

- LLM ratings, one row per judge answer: ``evaluator, association_id, epoch, harm`` (1-5, NaN when the harm
  answer could not be parsed), built from eval logs by :func:`stereoprobe.stereotales.judge.ratings.read_judge_ratings`;
- human ratings, one row per (participant, association): ``participant_id, association_id, harm``
  (:func:`stereoprobe.stereotales.judge.human.load_human_ratings`).

Aggregation rule (the sources do not say how one LLM's repetitions become one rating; this is our default): an
evaluator's rating of an association is the mean over its valid repetitions (for correlations) and its label
is harmful iff the median of those repetitions >= threshold (the human study's rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import pandas as pd

from stereoprobe.stats.correlation import pearson, spearman
from stereoprobe.stats.ttest import one_sample_ttest
from stereoprobe.stereotales.judge.contract import HUMAN, POOLED_LLMS

__all__ = [
    "HUMAN", "POOLED_LLMS", "Correlation", "pearson_ci", "spearman_ci", "evaluator_ratings", "human_evaluator_table",
    "panel_labels", "agreement_rate", "label_matrix", "pairwise_agreement", "agreement_summary",
    "delta_by_dimension", "top_score_use", "generation_vs_delta",
]

# ------------------------------------------------------------------------------------------- correlations


@dataclass(frozen=True)
class Correlation:
    """One row of the ``alignment_correlations`` table: a coefficient with its two-sided p-value and confidence
    interval. The statistics are :func:`stereoprobe.stats.correlation.pearson` and
    :func:`~stereoprobe.stats.correlation.spearman`."""

    method: str
    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    ci_method: str
    confidence: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def pearson_ci(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> Correlation:
    """Pearson r of the pairs without a NaN, t-test p-value and Fisher z interval (needs n ≥ 4), as a row."""
    res = pearson(x, y)
    lo, hi = res.confidence_interval(confidence)
    return Correlation("pearson", res.statistic, lo, hi, res.pvalue, res.n, "fisher-z", confidence)


def spearman_ci(
    x: Sequence[float],
    y: Sequence[float],
    confidence: float = 0.95,
    method: Literal["bonett-wright", "bootstrap"] = "bonett-wright",
    n_resamples: int = 9999,
    seed: int = 0,
) -> Correlation:
    """Spearman ρ with the Bonett–Wright interval (``method="bootstrap"``: percentile interval over
    ``n_resamples`` paired resamples, ``seed``), as a row."""
    res = spearman(x, y)
    lo, hi = res.confidence_interval(confidence, method, n_resamples, seed)
    return Correlation("spearman", res.statistic, lo, hi, res.pvalue, res.n, method, confidence)


# --------------------------------------------------------------------------------------- aggregation


def evaluator_ratings(ratings: pd.DataFrame, threshold: float = 4.0) -> pd.DataFrame:
    """Per (evaluator, association): ``n_valid, mean_harm, median_harm, harmful`` (median ≥ threshold).

    ``ratings``: ``evaluator, association_id, harm`` (NaN harm = unparsed, ignored). Associations whose every
    answer is unparsed keep ``n_valid = 0`` and NaN ratings / label.
    """
    g = ratings.groupby(["evaluator", "association_id"], sort=True)["harm"]
    out = pd.DataFrame({"n_valid": g.count(), "mean_harm": g.mean(), "median_harm": g.median()}).reset_index()
    out["harmful"] = pd.array([None if math.isnan(m) else bool(m >= threshold) for m in out["median_harm"]], dtype="boolean")
    return out


def human_evaluator_table(human_ratings: pd.DataFrame, threshold: float = 4.0) -> pd.DataFrame:
    """Human ratings as one evaluator named ``human`` (same columns as :func:`evaluator_ratings`)."""
    return evaluator_ratings(human_ratings.assign(evaluator=HUMAN), threshold)


def panel_labels(ratings: pd.DataFrame, threshold: float = 4.0) -> pd.DataFrame:
    """Per association over ALL evaluators pooled: ``n_ratings, mean_harm, median_harm, harmful``.

    Every LLM answer counts as one rating (like one human rater): harmful iff the median of all valid ratings of
    the association ≥ threshold. Used for harm labels when no human label exists.
    """
    valid = ratings.dropna(subset=["harm"])
    g = valid.groupby("association_id", sort=True)["harm"]
    out = pd.DataFrame({"n_ratings": g.count(), "mean_harm": g.mean(), "median_harm": g.median()}).reset_index()
    out["harmful"] = out["median_harm"] >= threshold
    return out


# ------------------------------------------------------------------------------------------ agreement


def agreement_rate(a: Sequence[object], b: Sequence[object]) -> tuple[float, int]:
    """Share of items with equal labels among items labelled by both (None/NaN = unlabelled); and that count."""
    pairs = [(x, y) for x, y in zip(a, b) if not _missing(x) and not _missing(y)]
    if not pairs:
        return float("nan"), 0
    return sum(bool(x) == bool(y) for x, y in pairs) / len(pairs), len(pairs)


def _missing(v: object) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def label_matrix(evaluations: pd.DataFrame) -> pd.DataFrame:
    """Wide table association_id × evaluator of harmful labels (object dtype; None = unlabelled)."""
    wide = evaluations.pivot(index="association_id", columns="evaluator", values="harmful")
    return wide.astype(object).where(wide.notna(), None)


def pairwise_agreement(labels: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Agreement rate and number of shared items for every pair of evaluators (columns of ``labels``)."""
    cols = list(labels.columns)
    rate = pd.DataFrame(np.nan, index=cols, columns=cols)
    count = pd.DataFrame(0, index=cols, columns=cols)
    for i, c1 in enumerate(cols):
        for c2 in cols[i:]:
            r, n = agreement_rate(labels[c1].tolist(), labels[c2].tolist())
            rate.loc[c1, c2] = rate.loc[c2, c1] = r
            count.loc[c1, c2] = count.loc[c2, c1] = n
    return rate, count


def agreement_summary(rate: pd.DataFrame, human: str = HUMAN) -> dict[str, float]:
    """Mean human–LLM agreement (over LLMs) and mean inter-LLM agreement (over LLM pairs)."""
    llms = [c for c in rate.columns if c != human]
    hl = [rate.loc[human, m] for m in llms] if human in rate.columns else []
    pairs = [rate.loc[a, b] for i, a in enumerate(llms) for b in llms[i + 1 :]]
    mean = lambda v: float(np.nanmean(v)) if len(v) and not np.all(np.isnan(v)) else float("nan")  # noqa: E731
    return {"human_vs_llm": mean(np.asarray(hl, float)), "inter_llm": mean(np.asarray(pairs, float)), "n_llms": len(llms)}


# ------------------------------------------------------------------------------- deltas and scale use


def delta_by_dimension(
    per_association: pd.DataFrame,
    llm_col: str = "llm_mean",
    human_col: str = "human_mean",
    dimension: Literal["both", "base", "compared"] = "both",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean (LLM − human) rating per attribute dimension with a t interval.

    ``per_association``: one row per association with the key columns and the two mean ratings. An
    association counts for its base attribute, its compared attribute, or both (``dimension``; it never counts
    twice in one dimension since A ≠ B). Interval: mean ± t_{n−1, 1−α/2} s/√n; p: one-sample t-test of
    mean = 0. Rows: ``dimension, n, mean_delta, ci_low, ci_high, p_value, mean_llm, mean_human``, sorted by
    ``mean_delta``; plus a final row ``all`` over all associations once.
    """
    d = per_association.dropna(subset=[llm_col, human_col]).copy()
    d["delta"] = d[llm_col] - d[human_col]
    parts = []
    if dimension in ("both", "base"):
        parts.append(d.assign(dimension=d["base_attribute"]))
    if dimension in ("both", "compared"):
        parts.append(d.assign(dimension=d["compared_attribute"]))
    long = pd.concat(parts, ignore_index=True) if parts else d.assign(dimension=[])
    rows = [_mean_ci(g, str(dim), llm_col, human_col, confidence) for dim, g in long.groupby("dimension", sort=True)]
    out = pd.DataFrame(rows, columns=["dimension", "n", "mean_delta", "ci_low", "ci_high", "p_value", "mean_llm", "mean_human"])
    out = out.sort_values("mean_delta", kind="mergesort").reset_index(drop=True)
    overall = pd.DataFrame([_mean_ci(d, "all", llm_col, human_col, confidence)], columns=out.columns)
    return pd.concat([out, overall], ignore_index=True)


def _mean_ci(g: pd.DataFrame, name: str, llm_col: str, human_col: str, confidence: float) -> list[object]:
    x = g["delta"].to_numpy(float)
    n = len(x)
    res = one_sample_ttest(x)  # mean ± t_{n−1, 1−α/2} s/√n and the two-sided test of mean = 0
    m, p = res.estimate, res.pvalue
    lo, hi = res.confidence_interval(confidence)
    return [name, n, m, lo, hi, p, float(g[llm_col].mean()) if n else float("nan"), float(g[human_col].mean()) if n else float("nan")]


def top_score_use(ratings: pd.DataFrame, top: float = 5.0) -> pd.DataFrame:
    """Per evaluator: ``n_ratings``, ``share_top`` (share of valid ratings equal to ``top``) and, when a
    ``human`` evaluator is present, ``human_to_evaluator_ratio`` = human share / evaluator share. A last row
    ``all LLMs (pooled)`` pools every non-human rating (when there is more than one LLM)."""
    valid = ratings.dropna(subset=["harm"])
    g = valid.groupby("evaluator", sort=True)["harm"]
    out = pd.DataFrame({"n_ratings": g.count(), "share_top": g.apply(lambda s: float((s == top).mean()))}).reset_index()
    llm = valid[valid["evaluator"] != HUMAN]["harm"]
    if llm.size and (out["evaluator"] != HUMAN).sum() > 1:
        pooled = pd.DataFrame([{"evaluator": POOLED_LLMS, "n_ratings": int(llm.size), "share_top": float((llm == top).mean())}])
        out = pd.concat([out, pooled], ignore_index=True)
    if HUMAN in set(out["evaluator"]):
        h = float(out.loc[out.evaluator == HUMAN, "share_top"].iloc[0])
        out["human_to_evaluator_ratio"] = [h / s if s > 0 else float("nan") for s in out["share_top"]]
    return out


def generation_vs_delta(
    delta: pd.DataFrame, rows: pd.DataFrame, dimension: Literal["both", "base", "compared"] = "both", global_slice: str = "all"
) -> tuple[pd.DataFrame, Correlation]:
    """Generative vs discriminative blind spots: per attribute dimension, the number of generated
    association rows (model × association of the global slice; every slice when there is no global one) next
    to the mean LLM − human delta, and the Spearman correlation between the two over dimensions (a negative ρ:
    the dimensions with the most generated associations are those where LLMs most underestimate harm)."""
    r = rows[rows["slice"].astype(str) == global_slice] if (rows["slice"].astype(str) == global_slice).any() else rows
    sides = {"both": ["base_attribute", "compared_attribute"], "base": ["base_attribute"], "compared": ["compared_attribute"]}
    counts = pd.concat([r[c] for c in sides[dimension]]).value_counts().rename("generated_rows")
    d = delta[delta["dimension"] != "all"].set_index("dimension")
    out = d[["n", "mean_delta", "ci_low", "ci_high"]].join(counts, how="left").fillna({"generated_rows": 0})
    out["generated_rows"] = out["generated_rows"].astype(int)
    out = out.reset_index().sort_values("generated_rows", ascending=False, kind="mergesort").reset_index(drop=True)
    return out, spearman_ci(out["generated_rows"], out["mean_delta"])
