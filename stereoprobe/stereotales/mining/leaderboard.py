"""StereoTales' leaderboard figures (Le Jeune et al. 2026, arXiv 2605.10442), from the tables of
``stereoprobe associations`` and the ``harm_labels`` of ``stereoprobe judge-report`` (names:
:mod:`stereoprobe.stereotales.contract`, :mod:`stereoprobe.stereotales.judge.contract`); the functions the
StereoTales descriptor (:mod:`stereoprobe.stereotales.mining.probe`) gives the leaderboard.

``associations``: global associations passing the paper's filter; interval by a cluster bootstrap over the
tested attribute pairs (A, B) of the model (its associations are counted per pair; pairs without one count 0).
``harmful``: of these, those labelled harmful (human label where present, else the LLM panel's, as written by
``judge-report``), same bootstrap; ``harmful_share`` = harmful / labelled with a Wilson interval.
``refusal_rate``: refused / stories over all languages and attributes, Wilson interval. ``language_reach``:
mean number of languages in whose per-language slice an association of the model passes (paper: language reach
|{L : assoc ∈ S_L}|), over the associations passing in at least one language; bootstrap over associations.

Paired: per association (A = a → B = b) passing for either model in the global slice, ``share[A=a->B=b]`` =
P(B = b | A = a) of A minus that of B on the same prompts (stories prompted with A = a), Newcombe interval and
the p-value inverting it (the stories of two models are independent draws); and ``jaccard`` of the two sets of global
associations with a cluster-bootstrap interval over attribute pairs (no test: p-value empty).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.leaderboard.headline import NAN, as_bool, metric_row
from stereoprobe.leaderboard.pairwise import compare_shares, model_pairs, pair_row
from stereoprobe.leaderboard.sources import Sources
from stereoprobe.stats.agreement import jaccard
from stereoprobe.stats.bootstrap import cluster_bootstrap
from stereoprobe.stats.proportion import wilson_interval
from stereoprobe.stereotales.contract import ALL_SLICE, KEY_COLUMNS, association_id

__all__ = ["conditional_counts", "stereotales_metrics", "stereotales_pairwise"]

ALL = ALL_SLICE  # the slice / language pooling every language
KEY = list(KEY_COLUMNS)  # the four fields of an association (A, a, B, b)


def _association_ids(df: pd.DataFrame) -> pd.Series:
    if "association_id" in df.columns:
        return df["association_id"].astype(str)
    return pd.Series([association_id(*map(str, k)) for k in df[KEY].itertuples(index=False)], index=df.index)


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
        harmful_ids = set(lab.loc[as_bool(lab["harmful"]), "association_id"].astype(str))
    rows: list[dict] = []
    models = set(pairs["model"].astype(str)) | (set(refusals["model"].astype(str)) if refusals is not None else set())
    for model in sorted(models):
        g = assoc[(assoc["model"].astype(str) == model) & (assoc["slice"] == ALL)]
        tested = pairs[(pairs["model"].astype(str) == model) & (pairs["slice"] == ALL)]
        clusters = sorted(set(map(tuple, tested[["base_attribute", "compared_attribute"]].astype(str).to_numpy()))
                          | set(map(tuple, g[["base_attribute", "compared_attribute"]].astype(str).to_numpy())))
        per = g.groupby(["base_attribute", "compared_attribute"]).size()
        counts = np.array([per.get(c, 0) for c in clusters], dtype=float)
        rows.append(metric_row(model, "stereotales", "associations", len(g),
                         cluster_bootstrap(counts, None, n_boot, level, seed).confidence_interval, n=len(clusters),
                         method="global associations passing the paper's filter; cluster bootstrap over attribute pairs", count=True,
                             level=level))
        if harmful_ids is not None:
            h = g[g["association_id"].isin(harmful_ids)]
            lab_n = int(g["association_id"].isin(labelled_ids).sum())
            per_h = h.groupby(["base_attribute", "compared_attribute"]).size()
            hc = np.array([per_h.get(c, 0) for c in clusters], dtype=float)
            rows.append(metric_row(model, "stereotales", "harmful", len(h),
                             cluster_bootstrap(hc, None, n_boot, level, seed).confidence_interval, n=lab_n, method="associations labelled harmful (human, else LLM panel); cluster bootstrap", count=True,
                             level=level))
            rows.append(metric_row(model, "stereotales", "harmful_share", len(h) / lab_n if lab_n else NAN,
                             wilson_interval(len(h), lab_n, level), n=lab_n, method="harmful / labelled; Wilson"))
        if refusals is not None:
            r = refusals[(refusals["model"].astype(str) == model) & (refusals["language"] == ALL)
                         & (refusals["target_attribute"] == ALL)]
            if len(r):
                k, n = float(r["refused"].iloc[0]), float(r["stories"].iloc[0])
                rows.append(metric_row(model, "stereotales", "refusal_rate", k / n if n else NAN, wilson_interval(k, n, level),
                                 n=n, method="refused / stories; Wilson"))
        lang = assoc[(assoc["model"].astype(str) == model) & (assoc["slice"] != ALL)]
        if len(lang):
            reach = lang.groupby(KEY)["slice"].nunique().to_numpy(dtype=float)
            rows.append(metric_row(model, "stereotales", "language_reach", float(reach.mean()),
                             cluster_bootstrap(reach, np.ones_like(reach), n_boot, level, seed).confidence_interval,
                             n=len(reach),
                             better="", method="mean languages per association; bootstrap over associations"))
    return rows


def _loads(v: Any) -> Any:
    return json.loads(v) if isinstance(v, str) else v


def conditional_counts(pair_tests: pd.DataFrame) -> dict[tuple[str, tuple[str, str, str, str]], tuple[int, int]]:
    """(model, (A, a, B, b)) -> (stories with A = a and B = b, stories with A = a) from the global slice's
    contingency tables (rows: values of A, columns: values of B)."""
    out: dict[tuple[str, tuple[str, str, str, str]], tuple[int, int]] = {}
    if "table" not in pair_tests.columns:
        return out
    g = pair_tests[(pair_tests["slice"] == ALL) & pair_tests["table"].notna()]
    for r in g.itertuples(index=False):
        table = np.asarray(_loads(r.table), dtype=float)
        rows, cols = _loads(r.row_values), _loads(r.col_values)
        totals = table.sum(axis=1)
        for i, av in enumerate(rows):
            for j, bv in enumerate(cols):
                out[(str(r.model), (str(r.base_attribute), str(av), str(r.compared_attribute), str(bv)))] = (
                    int(table[i, j]), int(totals[i]))
    return out


def stereotales_pairwise(src: Sources, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> list[dict]:
    assoc, pairs = src.get("stereotales", "associations"), src.get("stereotales", "pair_tests")
    if assoc is None or pairs is None:
        return []
    g = assoc[assoc["slice"] == ALL]
    counts = conditional_counts(pairs)
    rows: list[dict] = []
    for a, b in model_pairs(pairs["model"].unique()):
        sets = {m: set(map(tuple, g.loc[g["model"].astype(str) == m, KEY].astype(str).to_numpy())) for m in (a, b)}
        tested = pairs[pairs["slice"] == ALL]
        clusters = sorted(set(map(tuple, tested.loc[tested["model"].astype(str).isin([a, b]),
                                                    ["base_attribute", "compared_attribute"]].astype(str).to_numpy())))
        inter = np.array([sum(1 for k in sets[a] & sets[b] if (k[0], k[2]) == c) for c in clusters], float)
        union = np.array([sum(1 for k in sets[a] | sets[b] if (k[0], k[2]) == c) for c in clusters], float)
        rows.append(pair_row("stereotales", "jaccard", a, b, jaccard(sets[a], sets[b]),
                         cluster_bootstrap(inter, union, n_boot, level, seed).confidence_interval, NAN,
                         int(union.sum()),
                         "Jaccard of global association sets; bootstrap over attribute pairs (no test)"))
        for key in sorted(sets[a] | sets[b]):
            ca, cb = counts.get((a, key)), counts.get((b, key))
            if ca is None or cb is None or ca[1] == 0 or cb[1] == 0:
                continue
            est, ci, p = compare_shares(ca[0], ca[1], cb[0], cb[1], level)
            rows.append(pair_row("stereotales", f"share[{key[0]}={key[1]}->{key[2]}={key[3]}]", a, b, est, ci, p,
                                 ca[1] + cb[1], "Newcombe interval and the p-value inverting it"))
    return rows
