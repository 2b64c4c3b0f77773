"""Output tables of ``stereoprobe associations``: pure functions from the stories frame and the mining engine's
test tables to the published tables. No I/O here; the CLI writes them with ``write_table``.

Tables (one function each):

- :func:`associations_table` — the associations passing the paper's filter, :data:`ASSOCIATION_COLUMNS`
  first.
- :func:`explorer_table` — per model, the global associations with the paper's association-explorer columns
  (percentage, lift, models count "k/N").
- :func:`attribute_distributions` — extracted attribute values per model and language;
  :func:`attribute_distributions_by_scenario` — the same per model and scenario (languages pooled).
- :func:`refusal_rates` / :func:`unknown_rates` — refusals, errored samples and unknown/other answers per
  model, language and attribute (upstream ``step_02_compute_associations.py`` reports none of them).
- :func:`pick_examples` — a few story ids per association, to link each association to stories that show it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

# the association id is shared with the harm judge, so association tables, judge ratings and harm labels join on it
from stereoprobe.stereotales.contract import ALL_SLICE, KEY_COLUMNS, OTHER, UNKNOWN, association_id
from stereoprobe.stereotales.mining.examples import pick_examples  # noqa: F401  (one columnar pass, :mod:`.examples`)

ASSOCIATION_COLUMNS = [
    "model",
    "slice",
    "base_attribute",
    "base_value",
    "compared_attribute",
    "compared_value",
    "n",
    "fraction",
    "lift",
    "lift_ci_low",
    "lift_ci_high",
    "p_by",
    "cramers_v",
    "effect",
]
GLOBAL_SLICE = ALL_SLICE


def with_association_id(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out["association_id"] = [association_id(*k) for k in out[KEY_COLUMNS].astype(str).itertuples(index=False)]
    return out


def associations_table(value_tests: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``value_tests`` that pass the filter, :data:`ASSOCIATION_COLUMNS` first, then every other column."""
    missing = [c for c in ASSOCIATION_COLUMNS + ["passes"] if c not in value_tests.columns]
    if missing:
        raise ValueError(f"value_tests lacks column(s) {missing}")
    kept = value_tests[value_tests["passes"].astype(bool)].drop(columns=["passes"])
    kept = with_association_id(kept)
    extra = [c for c in kept.columns if c not in ASSOCIATION_COLUMNS]
    kept = kept[ASSOCIATION_COLUMNS + extra]
    kept = kept.sort_values(["model", "slice", "base_attribute", "base_value", "lift"], ascending=[True, True, True, True, False])
    return kept.reset_index(drop=True)


def explorer_table(associations: pd.DataFrame, n_models: int) -> pd.DataFrame:
    """Per model, the global associations with the paper's explorer columns.

    ``percentage`` = 100 × fraction (1 decimal), ``lift`` (3 decimals), ``models_count`` = number of models in
    whose global run the same association (A, a, B, b) passes, shown as ``models`` = "k/N".
    """
    g = associations[associations["slice"] == GLOBAL_SLICE].copy()
    counts = g.groupby(KEY_COLUMNS)["model"].nunique().rename("models_count").reset_index()
    g = g.merge(counts, on=KEY_COLUMNS, how="left")
    g["models_total"] = n_models
    g["models"] = g["models_count"].astype(int).astype(str) + f"/{n_models}"
    g["percentage"] = (100 * g["fraction"]).round(1)
    cols = ["model", *KEY_COLUMNS, "percentage", "lift", "lift_ci_low", "lift_ci_high", "p_by", "cramers_v", "effect",
            "models_count", "models_total", "models", "n"]
    for extra in ("stability", "association_id"):
        if extra in g.columns:
            cols.append(extra)
    g = g[cols].sort_values(["model", "models_count", "lift"], ascending=[True, False, False])
    return g.reset_index(drop=True)


def _extracted(frame: pd.DataFrame) -> pd.DataFrame:
    """Stories with an extracted profile: not refused and not an extraction failure."""
    keep = ~frame["refused"].astype(bool)
    if "extraction_failed" in frame.columns:
        keep &= ~frame["extraction_failed"].fillna(False).astype(bool)
    return frame[keep]


def group_sizes(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``df.groupby(keys, observed=True).size().rename("count").reset_index()``, the same frame, by one
    ``np.bincount`` over the keys' codes when every key is categorical (the stories frame's are): rows are
    the combinations present, in code order, the key columns keep their dtype."""
    cols = [df[k] for k in keys]
    if not all(isinstance(c.dtype, pd.CategoricalDtype) for c in cols) or df.empty:
        return df.groupby(list(keys), observed=True).size().rename("count").reset_index()
    codes = [c.cat.codes.to_numpy() for c in cols]
    dims = [len(c.cat.categories) for c in cols]
    present = np.logical_and.reduce([k >= 0 for k in codes])  # groupby drops a missing key
    flat = np.ravel_multi_index([k[present] for k in codes], dims) if present.any() else np.zeros(0, np.int64)
    counts = np.bincount(flat, minlength=int(np.prod(dims)))
    cells = np.flatnonzero(counts)
    out = {k: pd.Categorical.from_codes(u, dtype=c.dtype) for k, c, u in zip(keys, cols, np.unravel_index(cells, dims))}
    return pd.DataFrame({**out, "count": counts[cells].astype("int64")})


def attribute_distributions(frame: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """Extracted values per (model, language, attribute), languages pooled as ``language = "all"``.

    Counted over extracted stories (not refused, extraction not failed) NOT prompted with that attribute (for
    those the value is the prompt, not a model choice). ``share`` is over all such stories (unknown included),
    ``share_known`` over stories whose value is neither unknown nor other.
    """
    complied = _extracted(frame)
    parts = []
    for a in attributes:
        sub = complied.loc[complied["target_attribute"] != a, ["model", "language", a]]
        if sub.empty:
            continue
        for lang_level in (True, False):
            keys = ["model", "language", a] if lang_level else ["model", a]
            c = group_sizes(sub, keys)
            if not lang_level:
                c.insert(1, "language", GLOBAL_SLICE)
            c = c.rename(columns={a: "value"})
            c.insert(2, "attribute", a)
            parts.append(c)
    if not parts:
        return pd.DataFrame(columns=["model", "language", "attribute", "value", "count", "share", "share_known"])
    out = pd.concat(parts, ignore_index=True)
    grp = ["model", "language", "attribute"]
    out["share"] = out["count"] / out.groupby(grp)["count"].transform("sum")
    known = out["count"].where(~out["value"].isin([UNKNOWN, OTHER]), 0)
    denom = known.groupby([out[k] for k in grp]).transform("sum")
    out["share_known"] = (known / denom.where(denom > 0)).where(known > 0)
    return out.sort_values(grp + ["count"], ascending=[True, True, True, False]).reset_index(drop=True)


def attribute_distributions_by_scenario(frame: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """Extracted values per (model, scenario, attribute), languages pooled: the paper's attribute
    distributions by scenario.

    Same stories as :func:`attribute_distributions` (extracted, not prompted with the attribute). Columns
    ``model, scenario_group, scenario_key, attribute, value, count, share`` (over all such stories of the
    scenario, unknown included), ``share_known`` (over those whose value is neither unknown nor other; empty
    for unknown/other rows).
    """
    cols = ["model", "scenario_group", "scenario_key", "attribute", "value", "count", "share", "share_known"]
    complied = _extracted(frame)
    # no group = "" (every key is written as text below; as a categorical, its values sort as the texts do)
    groups = complied["scenario_group"].astype(object).fillna("")
    complied = complied.assign(scenario_group=groups.astype("category") if isinstance(
        complied["scenario_key"].dtype, pd.CategoricalDtype) else groups)
    parts = []
    for a in attributes:
        sub = complied.loc[complied["target_attribute"] != a, ["model", "scenario_group", "scenario_key", a]]
        if sub.empty:
            continue
        c = group_sizes(sub, ["model", "scenario_group", "scenario_key", a])
        c = c[c["count"] > 0].reset_index(drop=True).rename(columns={a: "value"})
        c.insert(3, "attribute", a)
        parts.append(c)
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat(parts, ignore_index=True)
    for col in ("model", "scenario_group", "scenario_key", "attribute", "value"):
        out[col] = out[col].astype(str)
    grp = ["model", "scenario_group", "scenario_key", "attribute"]
    out["share"] = out["count"] / out.groupby(grp)["count"].transform("sum")
    known = out["count"].where(~out["value"].isin([UNKNOWN, OTHER]), 0)
    denom = known.groupby([out[k] for k in grp]).transform("sum")
    out["share_known"] = (known / denom.where(denom > 0)).where(known > 0)
    return out.sort_values(grp + ["count"], ascending=[True, True, True, True, False])[cols].reset_index(drop=True)


def _with_rollups(df: pd.DataFrame, dims: Sequence[str], agg: dict) -> pd.DataFrame:
    """Aggregate over ``dims`` and over every pooling of the dims after the first (pooled dims read "all")."""
    parts = []
    for mask in _masks(len(dims)):
        keys = [d for d, keep in zip(dims, mask) if keep]
        g = df.groupby(keys, observed=True).agg(**agg).reset_index()
        for d, keep in zip(dims, mask):
            if not keep:
                g[d] = GLOBAL_SLICE
        parts.append(g[list(dims) + list(agg)])
    return pd.concat(parts, ignore_index=True)


def _masks(k: int) -> list[tuple[bool, ...]]:
    # model is always kept; the other dimensions are each either kept or pooled
    out = []
    for bits in range(2 ** (k - 1)):
        out.append((True, *[not (bits >> i) & 1 for i in range(k - 1)]))
    return out


def refusal_rates(frame: pd.DataFrame, issues: pd.DataFrame) -> pd.DataFrame:
    """Stories, refusals and errored samples per model × language × prompted attribute (with "all" pools).

    ``refusal_rate`` = refused / stories (stories = usable samples, refusals included);
    ``extraction_failed`` = complied stories whose extractors missed the quorum (all-unknown profile); ``error_rate`` =
    errored / (stories + errored) — errored samples have no story and never reach the statistics.
    """
    st = frame[["model", "language", "target_attribute", "refused"]].copy()
    st["refused"] = st["refused"].astype(int)
    failed = frame["extraction_failed"] if "extraction_failed" in frame.columns else pd.Series(False, index=frame.index)
    st["extraction_failed"] = failed.fillna(False).astype(bool).astype(int)
    st["stories"] = 1
    st["errored"] = 0
    st["no_profile"] = 0
    parts = [st]
    if len(issues):
        iss = issues[issues["kind"].isin(["error", "no_profile"])].copy()
        if len(iss):
            # the target attribute of an errored sample is the 2nd field of the stereotales sample id
            iss["target_attribute"] = iss["sample_id"].astype(str).str.split(":").str[1].fillna("?")
            iss["refused"] = 0
            iss["extraction_failed"] = 0
            iss["stories"] = 0
            iss["errored"] = (iss["kind"] == "error").astype(int)
            iss["no_profile"] = (iss["kind"] == "no_profile").astype(int)
            parts.append(iss[st.columns])
    df = pd.concat(parts, ignore_index=True)
    out = _with_rollups(
        df,
        ["model", "language", "target_attribute"],
        {"stories": ("stories", "sum"), "refused": ("refused", "sum"),
         "extraction_failed": ("extraction_failed", "sum"), "errored": ("errored", "sum"),
         "no_profile": ("no_profile", "sum")},
    )
    for c in ("stories", "refused", "extraction_failed", "errored", "no_profile"):
        out[c] = out[c].astype("int64")
    out["refusal_rate"] = out["refused"] / out["stories"].where(out["stories"] > 0)
    out["extraction_failure_rate"] = out["extraction_failed"] / (out["stories"] - out["refused"]).where(
        (out["stories"] - out["refused"]) > 0
    )
    out["error_rate"] = out["errored"] / (out["stories"] + out["errored"] + out["no_profile"]).where(
        (out["stories"] + out["errored"] + out["no_profile"]) > 0
    )
    return out.sort_values(["model", "language", "target_attribute"]).reset_index(drop=True)


def unknown_rates(frame: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """Share of "unknown" and "other" per model × language × extracted attribute (languages pooled as "all").

    Over extracted stories not prompted with the attribute; refused stories and extraction failures are
    all-unknown by construction and are reported in :func:`refusal_rates` instead.
    """
    complied = _extracted(frame)
    rows = []
    for a in attributes:
        sub = complied.loc[complied["target_attribute"] != a, ["model", "language", a]]
        if sub.empty:
            continue
        if sub[a].isna().any():  # one row per story
            flags = pd.DataFrame(
                {"model": sub["model"], "language": sub["language"], "n": 1,
                 "unknown": (sub[a] == UNKNOWN).astype(int), "other": (sub[a] == OTHER).astype(int)}
            )
        else:  # one row per (model, language, value), weighted by its stories: the same sums
            c = group_sizes(sub, ["model", "language", a])
            n = c["count"].to_numpy()
            flags = pd.DataFrame({"model": c["model"], "language": c["language"], "n": n,
                                  "unknown": n * (c[a] == UNKNOWN).to_numpy(), "other": n * (c[a] == OTHER).to_numpy()})
        r = _with_rollups(flags, ["model", "language"], {"n": ("n", "sum"), "unknown": ("unknown", "sum"),
                                                         "other": ("other", "sum")})
        r.insert(2, "attribute", a)
        rows.append(r)
    if not rows:
        return pd.DataFrame(columns=["model", "language", "attribute", "n", "unknown", "other", "unknown_rate", "other_rate"])
    out = pd.concat(rows, ignore_index=True)
    out["unknown_rate"] = out["unknown"] / out["n"]
    out["other_rate"] = out["other"] / out["n"]
    return out.sort_values(["model", "language", "attribute"]).reset_index(drop=True)
