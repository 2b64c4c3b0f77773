"""DBB's leaderboard figures (Pan et al., Findings of EMNLP 2025), from the ``summary`` and ``instances``
tables of ``stereoprobe dbb`` (names: :mod:`stereoprobe.dbb.contract`); the functions the DBB descriptor
(:mod:`stereoprobe.dbb.probe`) gives the leaderboard.

Headline: ``count_s_ge_20``, ``mean_s_biased`` and ``refusal_rate`` of the ``ALL`` row as ``stereoprobe dbb``
wrote them (cluster bootstrap over templates; Wilson); per category ``count_s_ge_20_<category>`` and
``mean_s_biased_<category>`` as the summary's category totals (descriptor type ``ALL``) give them (a summary
without them: recomputed from the instances with the same cluster bootstrap over templates), so the report,
``summary.csv``, the leaderboard and the index show one interval per figure (the count's:
:func:`stereoprobe.stats.counts.count_interval`).
Board ``dbb`` is the multiple choice, ``dbb_sg`` the sentence generation variant (their numbers are not
comparable, paper). Paired: per test instance present for both models, ``mean_s`` (and ``mean_s_<category>``):
mean of ``S_A − S_B``; ``share_s_ge_20``: difference of the shares of instances with S ≥ 20; each with a
cluster-robust t interval over question templates and its t-test (one procedure,
:mod:`stereoprobe.leaderboard.pairwise`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from stereoprobe.dbb.contract import LM_EVAL_TASKS, TASK_SG
from stereoprobe.leaderboard.headline import NAN, metric_row
from stereoprobe.leaderboard.pairwise import compare_binary, compare_continuous, model_pairs, pair_row, paired_items
from stereoprobe.leaderboard.sources import Sources
from stereoprobe.stats.bootstrap import cluster_bootstrap

__all__ = ["check_dbb_variants", "dbb_lm_eval_tables", "dbb_metrics", "dbb_pairwise", "dbb_probe"]


def dbb_probe(variant: str) -> str:
    """Leaderboard probe name of a DBB variant: ``dbb_sg`` for sentence generation, ``dbb`` for the MCQ."""
    return TASK_SG if str(variant) == "sg" else "dbb"


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
            rows.append(metric_row(model, probe, "count_s_ge_20", r["count_s_ge_20"], (r["count_ci_low"], r["count_ci_high"]),
                             n=r["n"], method="instances with S >= 20; cluster bootstrap over templates",
                             count=True, level=level))
            rows.append(metric_row(model, probe, "mean_s_biased", r["mean_s_biased"], (r["mean_s_ci_low"], r["mean_s_ci_high"]),
                             n=r["count_s_ge_20"], method="mean S of the biased instances; cluster bootstrap"))
            if "refusal_rate" in r.index:
                rows.append(metric_row(model, probe, "refusal_rate", r["refusal_rate"],
                                 (r.get("refusal_ci_low", NAN), r.get("refusal_ci_high", NAN)),
                                 n=r.get("n_responses", NAN), method="invalid responses / responses; Wilson"))
        written = s[(s["category"] != "ALL") & (s["descriptor_type"] == "ALL")] if "descriptor_type" in s else s.iloc[0:0]
        if len(written):  # the category totals as `stereoprobe dbb` wrote them: one interval per figure
            rows += _category_rows(model, probe, written, level)
            continue
        mi = inst[(inst["model"].astype(str) == model) & (inst["variant"] == variant)]
        for cat, ci in mi.groupby("category", sort=True):
            d = ci[ci["s"].notna()]
            biased = d[d["s"].astype(float) >= threshold - 1e-9]
            templates = sorted(d["template_id"].astype(str).unique())
            cnt = biased.groupby(biased["template_id"].astype(str)).size().reindex(templates, fill_value=0).to_numpy(float)
            sm = biased.groupby(biased["template_id"].astype(str))["s"].sum().reindex(templates, fill_value=0.0).to_numpy(float)
            rows.append(metric_row(model, probe, f"count_s_ge_20_{cat}", len(biased),
                             cluster_bootstrap(cnt, None, n_boot, level, seed).confidence_interval, n=len(d),
                             method="cluster bootstrap over templates", count=True, level=level))
            rows.append(metric_row(model, probe, f"mean_s_biased_{cat}", biased["s"].mean() if len(biased) else NAN,
                             cluster_bootstrap(sm, cnt, n_boot, level, seed).confidence_interval, n=len(biased),
                             method="cluster bootstrap over templates"))
    return rows


def _category_rows(model: str, probe: str, written: pd.DataFrame, level: float) -> list[dict]:
    """``count_s_ge_20_<category>`` and ``mean_s_biased_<category>`` of one model and variant from the category
    totals of the summary table (descriptor_type ``ALL``), with the intervals written there."""
    rows: list[dict] = []
    for r in written.sort_values("category").to_dict("records"):
        cat = r["category"]
        rows.append(metric_row(model, probe, f"count_s_ge_20_{cat}", r["count_s_ge_20"],
                               (r["count_ci_low"], r["count_ci_high"]), n=r["n"],
                               method="cluster bootstrap over templates", count=True, level=level))
        rows.append(metric_row(model, probe, f"mean_s_biased_{cat}", r["mean_s_biased"],
                               (r["mean_s_ci_low"], r["mean_s_ci_high"]), n=r["count_s_ge_20"],
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


def dbb_pairwise(src: Sources, threshold: float = 20.0, n_boot: int = 2000, seed: int = 0,
                 level: float = 0.95) -> list[dict]:
    inst = src.get("dbb", "instances")
    if inst is None:
        return []
    rows: list[dict] = []
    inst = inst.assign(probe=inst["variant"].map(dbb_probe))
    for probe, pi in inst.groupby("probe", sort=True):
        for a, b in model_pairs(pi["model"].unique()):
            m = paired_items(pi, ["instance_id"], a, b)
            m = m[m["s_a"].notna() & m["s_b"].notna()]
            if m.empty:
                continue
            cl = m["template_id_a"].astype(str).to_numpy()
            sa, sb = m["s_a"].to_numpy(float), m["s_b"].to_numpy(float)
            est, ci, p = compare_continuous(sa, sb, cl, n_boot, seed, level)
            rows.append(pair_row(probe, "mean_s", a, b, est, ci, p, len(m), "cluster-robust t over templates (interval and p)"))
            est, ci, p = compare_binary(sa >= threshold - 1e-9, sb >= threshold - 1e-9, cl, n_boot, seed, level)
            rows.append(pair_row(probe, "share_s_ge_20", a, b, est, ci, p, len(m), "cluster-robust t over templates (interval and p)"))
            for cat, mc in m.groupby("category_a", sort=True):
                c2 = mc["template_id_a"].astype(str).to_numpy()
                est, ci, p = compare_continuous(mc["s_a"].to_numpy(float), mc["s_b"].to_numpy(float), c2, n_boot, seed,
                                                level)
                rows.append(pair_row(probe, f"mean_s_{cat}", a, b, est, ci, p, len(mc),
                                 "cluster-robust t over templates (interval and p)"))
    return rows


def dbb_lm_eval_tables(files: Sequence[Path], threshold: float = 20.0, n_boot: int = 2000,
                       seed: int = 0) -> dict[str, pd.DataFrame]:
    """The ``summary`` and ``instances`` tables of ``stereoprobe dbb`` from lm-eval samples ``files`` of
    ``dbb_mc`` / ``dbb_sg``: the per-document ``p_a`` values become DBB responses
    (:func:`stereoprobe.dbb.lm_eval.response`), then :func:`stereoprobe.dbb.results.compute_tables`
    (the descriptor's ``lm_eval`` reader)."""
    from stereoprobe.dbb.lm_eval import RESPONSE_COLUMNS, response
    from stereoprobe.dbb.results import compute_tables
    from stereoprobe.inputs import iter_lm_eval_samples

    rows = [response({"doc": r.doc, "doc_id": r.doc_id, "p_a": r.metrics.get("p_a")}, r.task, r.model)
            for r in iter_lm_eval_samples(files, tuple(LM_EVAL_TASKS))]
    t = compute_tables(pd.DataFrame(rows, columns=RESPONSE_COLUMNS), threshold=threshold, n_boot=n_boot, seed=seed)
    return {"summary": t["summary"], "instances": t["instances"]}
