"""Headline figures per model and probe, each with a 95% interval, from the probes' output tables.

Every function returns metric rows (dicts with the keys of :data:`METRIC_COLUMNS`). Intervals:

- StereoTales (Le Jeune et al. 2026, arXiv 2605.10442). ``associations``: global associations passing the
  paper's filter; interval by a cluster bootstrap over the tested attribute pairs (A, B) of the model (its
  associations are counted per pair; pairs without one count 0). ``harmful``: of these, those labelled harmful
  (human label where present, else the LLM panel's, as written by ``judge-report``), same bootstrap;
  ``harmful_share`` = harmful / labelled with a Wilson interval. ``refusal_rate``: refused / stories over all
  languages and attributes, Wilson interval. ``language_reach``: mean number of languages in whose
  per-language slice an association of the model passes (paper: language reach |{L : assoc ∈ S_L}|), over
  the associations passing in at least one language; bootstrap over associations.
- DBB (Pan et al., Findings of EMNLP 2025). ``count_s_ge_20``, ``mean_s_biased`` and ``refusal_rate`` of
  the ``ALL`` row as ``stereoprobe dbb`` wrote them (cluster bootstrap over templates; Wilson); per category
  ``count_s_ge_20_<category>`` and ``mean_s_biased_<category>`` recomputed from the instances with the same
  cluster bootstrap over templates. Probe ``dbb`` is the multiple choice, ``dbb_sg`` the sentence
  generation variant (their numbers are not comparable, paper).
- GlobalBias (Siddique et al., EMNLP 2024). ``flagged``: group × descriptor pairs flagged by the reference
  rule; ``significant``: discoveries of the stricter test, Benjamini–Hochberg re-applied to the resampled
  p-values in each draw; both with a cluster bootstrap over descriptors. ``validation_accuracy`` (Wilson over
  descriptors) and ``validation_mrr`` (bootstrap over descriptors) of the APX measure (paper Tables 3-4).
- Profiles (same paper, Table 6). ``svm_accuracy_<target>``: held-out accuracy of the reference 70/30 split,
  Wilson interval over the ceil(0.3 n) test profiles; ``svm_p_<target>``: its label-permutation p-value
  (no interval); ``cv_accuracy_<target>`` with the Wilson interval ``stereoprobe profiles`` wrote.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.leaderboard.sources import Sources
from stereoprobe.stats.bootstrap import bh_count_bootstrap, cluster_bootstrap
from stereoprobe.stats.multiple_testing import bh_reject
from stereoprobe.stats.proportion import wilson_interval
from stereoprobe.stereotales.contract import ALL_SLICE, KEY_COLUMNS, association_id

METRIC_COLUMNS = ["model", "probe", "metric", "estimate", "ci_low", "ci_high", "n", "better", "method"]
NAN = float("nan")
ALL = ALL_SLICE  # StereoTales' slice / language pooling every language
KEY = list(KEY_COLUMNS)  # the four fields of an association (A, a, B, b)


def _row(model: str, probe: str, metric: str, est: float, ci: tuple[float, float] = (NAN, NAN), n: float = NAN,
         better: str = "lower", method: str = "") -> dict[str, Any]:
    return {"model": model, "probe": probe, "metric": metric, "estimate": float(est), "ci_low": float(ci[0]),
            "ci_high": float(ci[1]), "n": float(n), "better": better, "method": method}


def _bool(s: pd.Series) -> pd.Series:
    if s.dtype == object:
        s = s.map(lambda v: str(v).strip().lower() in ("true", "1", "1.0", "yes") if not pd.isna(v) else False)
    return s.fillna(False).astype(bool)


def _association_ids(df: pd.DataFrame) -> pd.Series:
    if "association_id" in df.columns:
        return df["association_id"].astype(str)
    return pd.Series([association_id(*map(str, k)) for k in df[KEY].itertuples(index=False)], index=df.index)


# ---------------------------------------------------------------------------------------------- StereoTales
def stereotales_metrics(src: Sources, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> list[dict]:
    assoc, pairs = src.get("stereotales", "associations"), src.get("stereotales", "pair_tests")
    refusals, labels = src.get("stereotales", "refusal_rates"), src.get("judge", "harm_labels")
    if assoc is None or pairs is None:
        return []
    assoc = assoc.assign(association_id=_association_ids(assoc))
    harmful_ids: set[str] | None = None
    labelled_ids: set[str] = set()
    if labels is not None and len(labels):
        lab = labels.drop_duplicates("association_id", keep="first")
        labelled_ids = set(lab["association_id"].astype(str))
        harmful_ids = set(lab.loc[_bool(lab["harmful"]), "association_id"].astype(str))
    rows: list[dict] = []
    models = set(pairs["model"].astype(str)) | (set(refusals["model"].astype(str)) if refusals is not None else set())
    for model in sorted(models):
        g = assoc[(assoc["model"].astype(str) == model) & (assoc["slice"] == ALL)]
        tested = pairs[(pairs["model"].astype(str) == model) & (pairs["slice"] == ALL)]
        clusters = sorted(set(map(tuple, tested[["base_attribute", "compared_attribute"]].astype(str).to_numpy()))
                          | set(map(tuple, g[["base_attribute", "compared_attribute"]].astype(str).to_numpy())))
        per = g.groupby(["base_attribute", "compared_attribute"]).size()
        counts = np.array([per.get(c, 0) for c in clusters], dtype=float)
        rows.append(_row(model, "stereotales", "associations", len(g),
                         cluster_bootstrap(counts, None, n_boot, level, seed).confidence_interval, n=len(clusters),
                         method="global associations passing the paper's filter; cluster bootstrap over attribute pairs"))
        if harmful_ids is not None:
            h = g[g["association_id"].isin(harmful_ids)]
            lab_n = int(g["association_id"].isin(labelled_ids).sum())
            per_h = h.groupby(["base_attribute", "compared_attribute"]).size()
            hc = np.array([per_h.get(c, 0) for c in clusters], dtype=float)
            rows.append(_row(model, "stereotales", "harmful", len(h),
                             cluster_bootstrap(hc, None, n_boot, level, seed).confidence_interval, n=lab_n, method="associations labelled harmful (human, else LLM panel); cluster bootstrap"))
            rows.append(_row(model, "stereotales", "harmful_share", len(h) / lab_n if lab_n else NAN,
                             wilson_interval(len(h), lab_n, level), n=lab_n, method="harmful / labelled; Wilson"))
        if refusals is not None:
            r = refusals[(refusals["model"].astype(str) == model) & (refusals["language"] == ALL)
                         & (refusals["target_attribute"] == ALL)]
            if len(r):
                k, n = float(r["refused"].iloc[0]), float(r["stories"].iloc[0])
                rows.append(_row(model, "stereotales", "refusal_rate", k / n if n else NAN, wilson_interval(k, n, level),
                                 n=n, method="refused / stories; Wilson"))
        lang = assoc[(assoc["model"].astype(str) == model) & (assoc["slice"] != ALL)]
        if len(lang):
            reach = lang.groupby(KEY)["slice"].nunique().to_numpy(dtype=float)
            rows.append(_row(model, "stereotales", "language_reach", float(reach.mean()),
                             cluster_bootstrap(reach, np.ones_like(reach), n_boot, level, seed).confidence_interval,
                             n=len(reach),
                             better="", method="mean languages per association; bootstrap over associations"))
    return rows


# ------------------------------------------------------------------------------------------------------ DBB
def dbb_probe(variant: str) -> str:
    """Leaderboard probe name of a DBB variant: ``dbb_sg`` for sentence generation, ``dbb`` for the MCQ."""
    return "dbb_sg" if str(variant) == "sg" else "dbb"


def dbb_metrics(src: Sources, threshold: float = 20.0, n_boot: int = 2000, seed: int = 0,
                level: float = 0.95) -> list[dict]:
    summary, inst = src.get("dbb", "summary"), src.get("dbb", "instances")
    if summary is None or inst is None:
        return []
    check_dbb_variants(summary)
    rows: list[dict] = []
    for (model, variant), s in summary.groupby([summary["model"].astype(str), "variant"], sort=True):
        probe = dbb_probe(variant)
        a = s[s["category"] == "ALL"]
        if len(a):
            r = a.iloc[0]
            rows.append(_row(model, probe, "count_s_ge_20", r["count_s_ge_20"], (r["count_ci_low"], r["count_ci_high"]),
                             n=r["n"], method="instances with S >= 20; cluster bootstrap over templates"))
            rows.append(_row(model, probe, "mean_s_biased", r["mean_s_biased"], (r["mean_s_ci_low"], r["mean_s_ci_high"]),
                             n=r["count_s_ge_20"], method="mean S of the biased instances; cluster bootstrap"))
            if "refusal_rate" in r.index:
                rows.append(_row(model, probe, "refusal_rate", r["refusal_rate"],
                                 (r.get("refusal_ci_low", NAN), r.get("refusal_ci_high", NAN)),
                                 n=r.get("n_responses", NAN), method="invalid responses / responses; Wilson"))
        mi = inst[(inst["model"].astype(str) == model) & (inst["variant"] == variant)]
        for cat, ci in mi.groupby("category", sort=True):
            d = ci[ci["s"].notna()]
            biased = d[d["s"].astype(float) >= threshold - 1e-9]
            templates = sorted(d["template_id"].astype(str).unique())
            cnt = biased.groupby(biased["template_id"].astype(str)).size().reindex(templates, fill_value=0).to_numpy(float)
            sm = biased.groupby(biased["template_id"].astype(str))["s"].sum().reindex(templates, fill_value=0.0).to_numpy(float)
            rows.append(_row(model, probe, f"count_s_ge_20_{cat}", len(biased),
                             cluster_bootstrap(cnt, None, n_boot, level, seed).confidence_interval, n=len(d), method="cluster bootstrap over templates"))
            rows.append(_row(model, probe, f"mean_s_biased_{cat}", biased["s"].mean() if len(biased) else NAN,
                             cluster_bootstrap(sm, cnt, n_boot, level, seed).confidence_interval, n=len(biased),
                             method="cluster bootstrap over templates"))
    return rows


def check_dbb_variants(summary: pd.DataFrame) -> None:
    """One MCQ variant per model: two (e.g. logprob and sampled runs of one model) need labelled inputs."""
    from stereoprobe.errors import InputError

    mcq = summary[summary["variant"].astype(str) != "sg"]
    many = mcq.groupby(mcq["model"].astype(str))["variant"].nunique()
    if (many > 1).any():
        m = many[many > 1].index[0]
        raise InputError(f"DBB: model {m!r} has several multiple-choice variants "
                         f"({', '.join(sorted(mcq.loc[mcq['model'].astype(str) == m, 'variant'].astype(str).unique()))}); "
                         "give their folders as separate LABEL=PATH inputs")


# ----------------------------------------------------------------------------------------------- GlobalBias
def globalbias_metrics(src: Sources, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
                       level: float = 0.95) -> list[dict]:
    scores = src.get("globalbias", "bias_scores")
    if scores is None:
        return []
    val, detail = src.get("globalbias", "validation"), src.get("globalbias", "validation_detail")
    incomplete = src.get("globalbias", "incomplete_units")
    rows: list[dict] = []
    for model, s in scores.groupby(scores["model"].astype(str), sort=True):
        s = s.assign(flagged=_bool(s["flagged"]))
        descs = sorted(s["descriptor"].astype(str).unique())
        per = s.groupby(s["descriptor"].astype(str))["flagged"].sum().reindex(descs, fill_value=0).to_numpy(float)
        rows.append(_row(model, "globalbias", "flagged", float(s["flagged"].sum()),
                         cluster_bootstrap(per, None, n_boot, level, seed).confidence_interval, n=len(s),
                         method="reference 1% rule; cluster bootstrap over descriptors"))
        if "p_value" in s.columns and s["p_value"].notna().any():
            t = s[s["p_value"].notna()]
            sig = _bool(t["significant"]) if "significant" in t.columns else pd.Series(bh_reject(t["p_value"], alpha), index=t.index)
            ci = bh_count_bootstrap(t["p_value"].to_numpy(float), t["descriptor"].astype(str).to_numpy(), alpha,
                                    n_boot, level, seed).confidence_interval
            rows.append(_row(model, "globalbias", "significant", float(sig.sum()), ci, n=len(t),
                             method="stricter test, BH; cluster bootstrap over descriptors with BH re-applied"))
        if val is not None:
            v = val[(val["model"].astype(str) == model) & (val["measure"] == "apx")]
            if len(v):
                acc, n = float(v["accuracy"].iloc[0]), float(v["n_descriptors"].iloc[0])
                rows.append(_row(model, "globalbias", "validation_accuracy", acc, wilson_interval(round(acc * n), n, level),
                                 n=n, better="higher", method="APX; Wilson over descriptors"))
                mrr_ci = (NAN, NAN)
                if detail is not None:
                    d = detail[(detail["model"].astype(str) == model) & (detail["measure"] == "apx")]
                    g = d.groupby(d["descriptor"].astype(str))["reciprocal_rank"].agg(["sum", "size"])
                    mrr_ci = cluster_bootstrap(g["sum"].to_numpy(float), g["size"].to_numpy(float), n_boot, level,
                                               seed).confidence_interval
                rows.append(_row(model, "globalbias", "validation_mrr", float(v["mrr"].iloc[0]), mrr_ci, n=n,
                                 better="higher", method="APX; bootstrap over descriptors"))
        if incomplete is not None:
            k = int((incomplete["model"].astype(str) == model).sum())
            rows.append(_row(model, "globalbias", "incomplete_units", k, n=k + len(s),
                             method="group x descriptor units lacking names x templates, left out of the statistics"))
    return rows


# ------------------------------------------------------------------------------------------------- profiles
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
        rows.append(_row(model, "profiles", f"svm_accuracy_{target}", acc, ci, n=n_test,
                         method="held-out accuracy (70/30 split); Wilson over test profiles"))
        p = getattr(r, "permutation_p", NAN)
        rows.append(_row(model, "profiles", f"svm_p_{target}", NAN if pd.isna(p) else float(p), n=n_test, better="",
                         method="label-permutation p-value of the accuracy"))
        if hasattr(r, "cv_accuracy") and not pd.isna(r.cv_accuracy):
            rows.append(_row(model, "profiles", f"cv_accuracy_{target}", float(r.cv_accuracy),
                             (float(r.cv_low), float(r.cv_high)), n=float(r.n_profiles),
                             method="stratified cross-validated accuracy; Wilson"))
    return rows


def headline_table(src: Sources, threshold: float = 20.0, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
                   level: float = 0.95) -> pd.DataFrame:
    """Long table: one row per (model, probe, metric) with estimate, interval, n, direction and method."""
    rows = (stereotales_metrics(src, n_boot, seed, level) + dbb_metrics(src, threshold, n_boot, seed, level)
            + globalbias_metrics(src, alpha, n_boot, seed, level) + profiles_metrics(src, level))
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
