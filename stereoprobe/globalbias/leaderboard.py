"""GlobalBias' leaderboard figures (Siddique et al., EMNLP 2024): the likelihood probe from the tables of
``stereoprobe globalbias`` and the character profiles from those of ``stereoprobe profiles`` (names:
:mod:`stereoprobe.globalbias.contract`); the functions the two descriptors (:mod:`stereoprobe.globalbias.probe`)
give the leaderboard.

- GlobalBias. ``flagged``: group × descriptor pairs flagged by the reference rule; ``significant``:
  discoveries of the stricter test, Benjamini–Hochberg re-applied to the resampled p-values in each draw; both
  with a cluster bootstrap over descriptors widened to the exact Poisson interval, read from the ``headline``
  table ``stereoprobe globalbias`` wrote (computed alike, :mod:`stereoprobe.globalbias.headline`, for a folder
  without one). ``validation_accuracy`` (Wilson over descriptors) and
  ``validation_mrr`` (bootstrap over descriptors), as the validation table holds them, of the APX measure
  (paper Tables 3-4). Paired, per group ×
  descriptor pair: ``score`` (mean difference of bias scores), ``flagged`` and ``significant`` (difference
  of counts, in the headline's units: n paired items times the difference of flag shares), and per validation
  descriptor ``validation_accuracy`` and ``validation_mrr`` (difference of accuracies, of mean reciprocal
  ranks; the headline's names); each with a cluster-robust t interval over descriptors and its t-test (one procedure,
  :mod:`stereoprobe.leaderboard.pairwise`).
- Profiles (same paper, Table 6). ``svm_accuracy_<target>``: held-out accuracy of the reference 70/30 split,
  Wilson interval over the ceil(0.3 n) test profiles; ``svm_p_<target>``: its label-permutation p-value (no
  interval); ``cv_accuracy_<target>`` with the Wilson interval ``stereoprobe profiles`` wrote. Paired, per
  test profile of the reference split (when a ``predictions`` table was written): ``svm_correct_<target>``,
  difference of accuracies, paired t-test over the test profiles (interval and test of one procedure).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe.leaderboard.headline import NAN, as_bool, metric_row
from stereoprobe.leaderboard.pairwise import (
    compare_binary, compare_continuous, model_pairs, pair_row, paired_items, scaled_interval,
)
from stereoprobe.leaderboard.sources import Sources
from stereoprobe.globalbias.headline import headline_rows
from stereoprobe.stats.bootstrap import cluster_bootstrap
from stereoprobe.stats.proportion import wilson_interval

__all__ = ["globalbias_lm_eval_tables", "globalbias_metrics", "globalbias_pairwise", "profiles_metrics",
           "profiles_pairwise"]


def globalbias_metrics(src: Sources, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
                       level: float = 0.95) -> list[dict]:
    scores = src.get("globalbias", "bias_scores")
    if scores is None:
        return []
    val, detail = src.get("globalbias", "validation"), src.get("globalbias", "validation_detail")
    incomplete = src.get("globalbias", "incomplete_units")
    rows: list[dict] = []
    written = src.get("globalbias", "headline")
    for model, s in scores.groupby(scores["model"].astype(str), sort=True):
        mine = written[written["model"].astype(str) == model] if written is not None else None
        counts = (mine.to_dict("records") if mine is not None and len(mine)
                  else headline_rows(s, alpha, n_boot, seed, level))
        for r in counts:  # as `stereoprobe globalbias` wrote them (one interval per figure); else computed alike
            rows.append(metric_row(model, "globalbias", str(r["metric"]), float(r["estimate"]),
                                   (float(r["ci_low"]), float(r["ci_high"])), n=float(r["n"]),
                                   method=str(r["method"])))
        if val is not None:
            v = val[(val["model"].astype(str) == model) & (val["measure"] == "apx")]
            if len(v):
                acc, n = float(v["accuracy"].iloc[0]), float(v["n_descriptors"].iloc[0])
                acc_ci = _written(v, "accuracy")
                if math.isnan(acc_ci[0]):
                    acc_ci = wilson_interval(round(acc * n), n, level)
                rows.append(metric_row(model, "globalbias", "validation_accuracy", acc, acc_ci,
                                 n=n, better="higher", method="APX; Wilson over descriptors"))
                mrr_ci = _written(v, "mrr")
                if math.isnan(mrr_ci[0]) and detail is not None:
                    d = detail[(detail["model"].astype(str) == model) & (detail["measure"] == "apx")]
                    g = d.groupby(d["descriptor"].astype(str))["reciprocal_rank"].agg(["sum", "size"])
                    mrr_ci = cluster_bootstrap(g["sum"].to_numpy(float), g["size"].to_numpy(float), n_boot, level,
                                               seed).confidence_interval
                rows.append(metric_row(model, "globalbias", "validation_mrr", float(v["mrr"].iloc[0]), mrr_ci, n=n,
                                 better="higher", method="APX; bootstrap over descriptors"))
        if incomplete is not None:
            k = int((incomplete["model"].astype(str) == model).sum())
            rows.append(metric_row(model, "globalbias", "incomplete_units", k, n=k + len(s),
                             method="group x descriptor units lacking names x templates, left out of the statistics"))
    return rows


def _written(v: pd.DataFrame, figure: str) -> tuple[float, float]:
    """The interval of ``figure`` (``accuracy``, ``mrr``) the validation table holds (NaN bounds: none written),
    so the report, the CSV, the leaderboard and the index show one interval."""
    cols = (f"{figure}_ci_low", f"{figure}_ci_high")
    if not all(c in v.columns for c in cols):
        return (NAN, NAN)
    return (float(v[cols[0]].iloc[0]), float(v[cols[1]].iloc[0]))


def globalbias_pairwise(src: Sources, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> list[dict]:
    scores = src.get("globalbias", "bias_scores")
    rows: list[dict] = []
    if scores is not None:
        for a, b in model_pairs(scores["model"].unique()):
            m = paired_items(scores, ["group", "descriptor"], a, b)
            m = m[m["score_a"].notna() & m["score_b"].notna()]
            if m.empty:
                continue
            cl = m["descriptor"].astype(str).to_numpy()
            est, ci, p = compare_continuous(m["score_a"].to_numpy(float), m["score_b"].to_numpy(float), cl, n_boot,
                                            seed, level)
            rows.append(pair_row("globalbias", "score", a, b, est, ci, p, len(m),
                             "cluster-robust t over descriptors (interval and p)"))
            est, ci, p = compare_binary(as_bool(m["flagged_a"]).to_numpy(), as_bool(m["flagged_b"]).to_numpy(), cl, n_boot,
                                        seed, level)
            # in count units, as the headline: n paired items times the difference of flagged shares
            rows.append(pair_row("globalbias", "flagged", a, b, est * len(m), scaled_interval(ci, len(m)), p, len(m),
                                 "difference of counts (n x difference of shares); cluster-robust t over descriptors"))
            if "p_value_a" in m.columns and m["p_value_a"].notna().any() and m["p_value_b"].notna().any():
                t = m[m["p_value_a"].notna() & m["p_value_b"].notna()]
                est, ci, p = compare_binary(as_bool(t["significant_a"]).to_numpy(), as_bool(t["significant_b"]).to_numpy(),
                                            t["descriptor"].astype(str).to_numpy(), n_boot, seed, level)
                rows.append(pair_row("globalbias", "significant", a, b, est * len(t), scaled_interval(ci, len(t)), p,
                                     len(t), "difference of counts (n x difference of shares); cluster-robust t "
                                     "over descriptors"))
    detail = src.get("globalbias", "validation_detail")
    if detail is not None:
        d = detail[detail["measure"] == "apx"]
        for a, b in model_pairs(d["model"].unique()):
            m = paired_items(d, ["descriptor", "target"] if "target" in d.columns else ["descriptor"], a, b)
            if m.empty:
                continue
            cl = m["descriptor"].astype(str).to_numpy()
            est, ci, p = compare_binary(as_bool(m["correct_a"]).to_numpy(), as_bool(m["correct_b"]).to_numpy(), cl, n_boot,
                                        seed, level)
            rows.append(pair_row("globalbias", "validation_accuracy", a, b, est, ci, p, len(m), "cluster-robust t over descriptors (interval and p)"))
            est, ci, p = compare_continuous(m["reciprocal_rank_a"].to_numpy(float), m["reciprocal_rank_b"].to_numpy(float),
                                            cl, n_boot, seed, level)
            rows.append(pair_row("globalbias", "validation_mrr", a, b, est, ci, p, len(m), "cluster-robust t over descriptors (interval and p)"))
    return rows


def profiles_metrics(src: Sources, level: float = 0.95) -> list[dict]:
    cls = src.get("profiles", "classification")
    if cls is None:
        return []
    rows: list[dict] = []
    for r in cls.sort_values(["model", "target"]).itertuples(index=False):
        model, target = str(r.model), str(r.target)
        acc = float(r.accuracy)
        n_test = math.ceil(0.3 * float(r.n_profiles)) if not pd.isna(r.n_profiles) else 0
        ci = wilson_interval(round(acc * n_test), n_test, level) if not math.isnan(acc) else (NAN, NAN)
        rows.append(metric_row(model, "profiles", f"svm_accuracy_{target}", acc, ci, n=n_test,
                         method="held-out accuracy (70/30 split); Wilson over test profiles"))
        p = getattr(r, "permutation_p", NAN)
        rows.append(metric_row(model, "profiles", f"svm_p_{target}", NAN if pd.isna(p) else float(p), n=n_test, better="",
                         method="label-permutation p-value of the accuracy"))
        if hasattr(r, "cv_accuracy") and not pd.isna(r.cv_accuracy):
            rows.append(metric_row(model, "profiles", f"cv_accuracy_{target}", float(r.cv_accuracy),
                             (float(r.cv_low), float(r.cv_high)), n=float(r.n_profiles),
                             method="stratified cross-validated accuracy; Wilson"))
    return rows


def profiles_pairwise(src: Sources, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> list[dict]:
    pred = src.get("profiles", "predictions")
    if pred is None:
        return []
    rows: list[dict] = []
    for target, pt in pred.groupby("target", sort=True):
        for a, b in model_pairs(pt["model"].unique()):
            m = paired_items(pt, ["item_id"], a, b)
            if m.empty:
                continue
            ids = m["item_id"].astype(str).to_numpy()
            est, ci, p = compare_binary(as_bool(m["correct_a"]).to_numpy(), as_bool(m["correct_b"]).to_numpy(), ids, n_boot,
                                        seed, level)
            rows.append(pair_row("profiles", f"svm_correct_{target}", a, b, est, ci, p, len(m),
                             "t-test over the shared test profiles (interval and p)"))
    return rows


def globalbias_lm_eval_tables(files: Sequence[Path], alpha: float = 0.05,
                              tokenizer: Any = None) -> dict[str, pd.DataFrame]:
    """The ``bias_scores``, ``validation``, ``validation_detail`` and ``incomplete_units`` tables of ``stereoprobe
    globalbias`` from lm-eval samples ``files`` of ``globalbias`` (the descriptor's ``lm_eval`` reader): the summed
    log-likelihoods become sentence perplexities through :func:`stereoprobe.globalbias.inputs.read_sentences` (byte-normalised
    unless a ``tokenizer`` is given, since the samples carry no token counts), then
    :func:`stereoprobe.globalbias.compute.compute_model` per model. Units a ``--limit`` run left without some of their
    names x templates are left out of the statistics and counted in ``incomplete_units``
    (:func:`stereoprobe.globalbias.completeness.split_complete`); no complete unit is an
    :class:`~stereoprobe.errors.InputError`."""
    from stereoprobe.errors import InputError
    from stereoprobe.globalbias.completeness import split_complete
    from stereoprobe.globalbias.inputs import read_sentences
    from stereoprobe.globalbias.compute import compute_model
    from stereoprobe.globalbias.options import GlobalBiasOptions

    files = list(files)
    sentences, _ = read_sentences(files, measure="token" if tokenizer is not None else "byte", tokenizer=tokenizer)
    sentences, incomplete = split_complete(sentences)
    if sentences.empty:
        raise InputError(f"{files[0].parent}: no complete GlobalBias group x descriptor unit in the lm-eval samples "
                         f"({len(incomplete)} incomplete; every name of a group under every template is needed)")
    out: dict[str, list[pd.DataFrame]] = {"incomplete_units": [incomplete]}
    for model, sub in sentences.groupby("model", sort=True):
        for name, df in compute_model(sub, GlobalBiasOptions(alpha=alpha)).items():
            if name in ("headline", "bias_scores", "validation", "validation_detail"):
                out.setdefault(name, []).append(df.assign(model=model))
    return {k: pd.concat(v, ignore_index=True) for k, v in out.items()}
