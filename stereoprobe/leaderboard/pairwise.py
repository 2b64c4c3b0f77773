"""Paired model-vs-model comparisons on the same items -> the rows of ``pairwise.csv``.

For every unordered pair of models (``model_a`` < ``model_b`` alphabetically) that share items of a probe,
``estimate`` is A − B (a positive value: A shows more of the measured bias), with an interval and a
two-sided p-value; ``q_value`` is the Benjamini–Hochberg adjustment over every row of the table that has a
p-value (:func:`add_q_values`). Items and tests (formulas in :mod:`stereoprobe.stats`):

- DBB / DBB-SG, per test instance present for both models: ``mean_s`` (and ``mean_s_<category>``): mean of
  ``S_A − S_B``, Wilcoxon signed-rank p, cluster-bootstrap interval over question templates;
  ``share_s_ge_20``: difference of the shares of instances with S ≥ 20, exact McNemar p on the discordant
  instances, same bootstrap.
- GlobalBias, per group × descriptor pair: ``score`` (mean difference of bias scores, Wilcoxon, bootstrap
  over descriptors), ``flagged`` and ``significant`` (difference of flag shares, McNemar), and per
  validation descriptor ``validation_correct`` (McNemar) and ``validation_rr`` (Wilcoxon on reciprocal ranks).
- Profiles, per test profile of the reference split (when ``stereoprobe profiles`` wrote a ``predictions``
  table): ``svm_correct_<target>``, difference of accuracies, McNemar.
- StereoTales: per association (A = a → B = b) passing for either model in the global slice,
  ``share[A=a->B=b]`` = P(B = b | A = a) of A minus that of B on the same prompts (stories prompted with
  A = a), Newcombe interval and pooled z-test (the stories of two models are independent draws); and
  ``jaccard`` of the two sets of global associations with a cluster-bootstrap interval over attribute pairs
  (no test: p-value empty).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.leaderboard.headline import ALL, KEY, _bool, dbb_probe
from stereoprobe.leaderboard.sources import Sources
from stereoprobe.stats.agreement import jaccard
from stereoprobe.stats.bootstrap import cluster_bootstrap
from stereoprobe.stats.multiple_testing import adjust_bh
from stereoprobe.stats.paired import mcnemar_exact, wilcoxon_signed_rank
from stereoprobe.stats.proportion import newcombe_interval, two_proportion_ztest

PAIRWISE_COLUMNS = ["probe", "metric", "model_a", "model_b", "estimate", "ci_low", "ci_high", "p_value", "q_value",
                    "n", "test"]
NAN = float("nan")


def _row(probe: str, metric: str, a: str, b: str, est: float, ci: tuple[float, float], p: float, n: int,
         test: str) -> dict[str, Any]:
    return {"probe": probe, "metric": metric, "model_a": a, "model_b": b, "estimate": float(est),
            "ci_low": float(ci[0]), "ci_high": float(ci[1]), "p_value": float(p), "q_value": NAN, "n": int(n),
            "test": test}


def _pairs(models) -> list[tuple[str, str]]:
    return list(itertools.combinations(sorted(set(map(str, models))), 2))


def compare_continuous(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int,
                       level: float) -> tuple[float, tuple[float, float], float]:
    """Paired continuous values: (mean of x − y, cluster-bootstrap CI, Wilcoxon p)."""
    d = np.asarray(x, float) - np.asarray(y, float)
    frame = pd.DataFrame({"d": d, "c": clusters})
    g = frame.groupby("c")["d"].agg(["sum", "size"])
    ci = cluster_bootstrap(g["sum"].to_numpy(float), g["size"].to_numpy(float), n_boot, level, seed).confidence_interval
    return float(d.mean()), ci, wilcoxon_signed_rank(d).pvalue


def compare_binary(x: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int,
                   level: float) -> tuple[float, tuple[float, float], float]:
    """Paired binary outcomes: (share_x − share_y, cluster-bootstrap CI, exact McNemar p)."""
    xa, ya = np.asarray(x, bool), np.asarray(y, bool)
    b, c = int(np.sum(xa & ~ya)), int(np.sum(~xa & ya))
    d = xa.astype(float) - ya.astype(float)
    frame = pd.DataFrame({"d": d, "c": clusters})
    g = frame.groupby("c")["d"].agg(["sum", "size"])
    ci = cluster_bootstrap(g["sum"].to_numpy(float), g["size"].to_numpy(float), n_boot, level, seed).confidence_interval
    return float(d.mean()), ci, mcnemar_exact(b, c).pvalue


def _paired(df: pd.DataFrame, key: list[str], a: str, b: str) -> pd.DataFrame:
    """Rows of models a and b side by side on ``key`` (suffixes _a, _b), items present for both only."""
    left = df[df["model"].astype(str) == a]
    right = df[df["model"].astype(str) == b]
    return left.merge(right, on=key, suffixes=("_a", "_b"), how="inner")


# ------------------------------------------------------------------------------------------------------ DBB
def dbb_pairwise(src: Sources, threshold: float = 20.0, n_boot: int = 2000, seed: int = 0,
                 level: float = 0.95) -> list[dict]:
    inst = src.get("dbb", "instances")
    if inst is None:
        return []
    rows: list[dict] = []
    inst = inst.assign(probe=inst["variant"].map(dbb_probe))
    for probe, pi in inst.groupby("probe", sort=True):
        for a, b in _pairs(pi["model"].unique()):
            m = _paired(pi, ["instance_id"], a, b)
            m = m[m["s_a"].notna() & m["s_b"].notna()]
            if m.empty:
                continue
            cl = m["template_id_a"].astype(str).to_numpy()
            sa, sb = m["s_a"].to_numpy(float), m["s_b"].to_numpy(float)
            est, ci, p = compare_continuous(sa, sb, cl, n_boot, seed, level)
            rows.append(_row(probe, "mean_s", a, b, est, ci, p, len(m), "Wilcoxon signed-rank; bootstrap over templates"))
            est, ci, p = compare_binary(sa >= threshold - 1e-9, sb >= threshold - 1e-9, cl, n_boot, seed, level)
            rows.append(_row(probe, "share_s_ge_20", a, b, est, ci, p, len(m), "McNemar exact; bootstrap over templates"))
            for cat, mc in m.groupby("category_a", sort=True):
                c2 = mc["template_id_a"].astype(str).to_numpy()
                est, ci, p = compare_continuous(mc["s_a"].to_numpy(float), mc["s_b"].to_numpy(float), c2, n_boot, seed,
                                                level)
                rows.append(_row(probe, f"mean_s_{cat}", a, b, est, ci, p, len(mc),
                                 "Wilcoxon signed-rank; bootstrap over templates"))
    return rows


# ----------------------------------------------------------------------------------------------- GlobalBias
def globalbias_pairwise(src: Sources, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> list[dict]:
    scores = src.get("globalbias", "bias_scores")
    rows: list[dict] = []
    if scores is not None:
        for a, b in _pairs(scores["model"].unique()):
            m = _paired(scores, ["group", "descriptor"], a, b)
            m = m[m["score_a"].notna() & m["score_b"].notna()]
            if m.empty:
                continue
            cl = m["descriptor"].astype(str).to_numpy()
            est, ci, p = compare_continuous(m["score_a"].to_numpy(float), m["score_b"].to_numpy(float), cl, n_boot,
                                            seed, level)
            rows.append(_row("globalbias", "score", a, b, est, ci, p, len(m),
                             "Wilcoxon signed-rank; bootstrap over descriptors"))
            est, ci, p = compare_binary(_bool(m["flagged_a"]).to_numpy(), _bool(m["flagged_b"]).to_numpy(), cl, n_boot,
                                        seed, level)
            rows.append(_row("globalbias", "flagged", a, b, est, ci, p, len(m), "McNemar exact; bootstrap over descriptors"))
            if "p_value_a" in m.columns and m["p_value_a"].notna().any() and m["p_value_b"].notna().any():
                t = m[m["p_value_a"].notna() & m["p_value_b"].notna()]
                est, ci, p = compare_binary(_bool(t["significant_a"]).to_numpy(), _bool(t["significant_b"]).to_numpy(),
                                            t["descriptor"].astype(str).to_numpy(), n_boot, seed, level)
                rows.append(_row("globalbias", "significant", a, b, est, ci, p, len(t),
                                 "McNemar exact; bootstrap over descriptors"))
    detail = src.get("globalbias", "validation_detail")
    if detail is not None:
        d = detail[detail["measure"] == "apx"]
        for a, b in _pairs(d["model"].unique()):
            m = _paired(d, ["descriptor", "target"] if "target" in d.columns else ["descriptor"], a, b)
            if m.empty:
                continue
            cl = m["descriptor"].astype(str).to_numpy()
            est, ci, p = compare_binary(_bool(m["correct_a"]).to_numpy(), _bool(m["correct_b"]).to_numpy(), cl, n_boot,
                                        seed, level)
            rows.append(_row("globalbias", "validation_correct", a, b, est, ci, p, len(m), "McNemar exact"))
            est, ci, p = compare_continuous(m["reciprocal_rank_a"].to_numpy(float), m["reciprocal_rank_b"].to_numpy(float),
                                            cl, n_boot, seed, level)
            rows.append(_row("globalbias", "validation_rr", a, b, est, ci, p, len(m), "Wilcoxon signed-rank"))
    return rows


# ------------------------------------------------------------------------------------------------- profiles
def profiles_pairwise(src: Sources, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> list[dict]:
    pred = src.get("profiles", "predictions")
    if pred is None:
        return []
    rows: list[dict] = []
    for target, pt in pred.groupby("target", sort=True):
        for a, b in _pairs(pt["model"].unique()):
            m = _paired(pt, ["item_id"], a, b)
            if m.empty:
                continue
            ids = m["item_id"].astype(str).to_numpy()
            est, ci, p = compare_binary(_bool(m["correct_a"]).to_numpy(), _bool(m["correct_b"]).to_numpy(), ids, n_boot,
                                        seed, level)
            rows.append(_row("profiles", f"svm_correct_{target}", a, b, est, ci, p, len(m),
                             "McNemar exact on the same test profiles"))
    return rows


# ---------------------------------------------------------------------------------------------- StereoTales
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
    for a, b in _pairs(pairs["model"].unique()):
        sets = {m: set(map(tuple, g.loc[g["model"].astype(str) == m, KEY].astype(str).to_numpy())) for m in (a, b)}
        tested = pairs[pairs["slice"] == ALL]
        clusters = sorted(set(map(tuple, tested.loc[tested["model"].astype(str).isin([a, b]),
                                                    ["base_attribute", "compared_attribute"]].astype(str).to_numpy())))
        inter = np.array([sum(1 for k in sets[a] & sets[b] if (k[0], k[2]) == c) for c in clusters], float)
        union = np.array([sum(1 for k in sets[a] | sets[b] if (k[0], k[2]) == c) for c in clusters], float)
        rows.append(_row("stereotales", "jaccard", a, b, jaccard(sets[a], sets[b]),
                         cluster_bootstrap(inter, union, n_boot, level, seed).confidence_interval, NAN,
                         int(union.sum()),
                         "Jaccard of global association sets; bootstrap over attribute pairs (no test)"))
        for key in sorted(sets[a] | sets[b]):
            ca, cb = counts.get((a, key)), counts.get((b, key))
            if ca is None or cb is None or ca[1] == 0 or cb[1] == 0:
                continue
            est = ca[0] / ca[1] - cb[0] / cb[1]
            rows.append(_row("stereotales", f"share[{key[0]}={key[1]}->{key[2]}={key[3]}]", a, b, est,
                             newcombe_interval(ca[0], ca[1], cb[0], cb[1], level),
                             two_proportion_ztest(ca[0], ca[1], cb[0], cb[1]).pvalue, ca[1] + cb[1],
                             "pooled two-proportion z-test; Newcombe interval"))
    return rows


def add_q_values(df: pd.DataFrame) -> pd.DataFrame:
    """Benjamini–Hochberg q-values over every row with a p-value (rows without one keep an empty q)."""
    out = df.copy()
    ok = out["p_value"].notna()
    out["q_value"] = np.nan
    if ok.any():
        out.loc[ok, "q_value"] = adjust_bh(out.loc[ok, "p_value"].to_numpy(float))
    return out


def pairwise_table(src: Sources, threshold: float = 20.0, n_boot: int = 2000, seed: int = 0,
                   level: float = 0.95) -> pd.DataFrame:
    """Every paired comparison of every probe, with BH q-values across the whole table."""
    rows = (stereotales_pairwise(src, n_boot, seed, level) + dbb_pairwise(src, threshold, n_boot, seed, level)
            + globalbias_pairwise(src, n_boot, seed, level) + profiles_pairwise(src, n_boot, seed, level))
    return add_q_values(pd.DataFrame(rows, columns=PAIRWISE_COLUMNS))
