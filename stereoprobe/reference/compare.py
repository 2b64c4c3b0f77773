"""Paper vs stereoprobe: every figure the GlobalBias paper prints beside the value stereoprobe computes from the
upstream model outputs, with a verdict per row.

:func:`compare_globalbias` reads the tables of ``stereoprobe globalbias`` (Llama 3 8B APX) and ``stereoprobe
profiles`` (four models' character profiles, with ``--apx``) and returns one row per printed item: ``figure``
(Table 9, ...), ``item`` (a group, a model x feature, ...), ``paper`` (as printed), ``stereoprobe`` (ours, in the
same form), ``verdict`` (:data:`EXACT`, ``within <x>`` or ``differs``) and ``reason`` (the tolerance's reason or
the known difference, from ``datasets/globalbias/paper_figures.yaml``; empty when the row is exact). A figure
whose input is absent gives one row with verdict :data:`NOT_RUN`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pandas as pd
from scipy import stats

from stereoprobe.globalbias.consistency import group_key
from stereoprobe.reference.figures import PaperFigure, PaperFigures, paper_figures

__all__ = ["COLUMNS", "EXACT", "NOT_RUN", "compare_globalbias", "verdict_counts"]

COLUMNS = ["figure", "item", "paper", "stereoprobe", "verdict", "reason"]
EXACT = "reproduced exactly"
NOT_RUN = "not run"
DIFFERS = "differs"


def _row(fig: PaperFigure, item: str, paper: object, ours: object, verdict: str, reason: str = "") -> dict:
    return {"figure": fig.label, "item": item, "paper": str(paper), "stereoprobe": str(ours), "verdict": verdict,
            "reason": reason}


def _words(items: Iterable[str]) -> str:
    return ", ".join(sorted(items, key=str.lower))


def _set_row(fig: PaperFigure, item: str, printed: set, ours: set, reason: str = "") -> dict:
    if printed == ours:
        return _row(fig, item, _words(printed), _words(ours), EXACT)
    gone, extra = sorted(printed - ours), sorted(ours - printed)
    why = "; ".join(x for x in (f"printed only: {_words(gone)}" if gone else "",
                                f"ours only: {_words(extra)}" if extra else "") if x)
    return _row(fig, item, _words(printed), _words(ours), DIFFERS, reason or why)


def _flagged(scores: pd.DataFrame) -> pd.DataFrame:
    return scores[scores["flagged"].fillna(False).astype(bool)]


# ------------------------------------------------------------------------------------------------ APX figures

def _section_5_1(fig: PaperFigure, scores: pd.DataFrame) -> list[dict]:
    n_desc = int(scores["descriptor"].nunique())
    n_flag = int(_flagged(scores)["descriptor"].nunique())
    v = fig.values
    share = round(100 * n_flag / n_desc, 1) if n_desc else float("nan")
    return [_row(fig, "descriptors", v["descriptors"], n_desc, EXACT if n_desc == v["descriptors"] else DIFFERS),
            _row(fig, "descriptors with a flagged group", v["flagged_descriptors"], n_flag,
                 EXACT if n_flag == v["flagged_descriptors"] else DIFFERS),
            _row(fig, "share (%)", v["share_pct"], share, EXACT if share == v["share_pct"] else DIFFERS)]


def _associations(assoc: pd.DataFrame) -> dict[str, set[str]]:
    return {str(r.group): set(str(r.descriptors).split(", ")) for r in assoc.itertuples()}


def _table_9(fig: PaperFigure, assoc: pd.DataFrame) -> list[dict]:
    got = _associations(assoc)
    want = {g: set(d.split(", ")) for g, d in fig.values.items()}
    rows = [_set_row(fig, g, want[g], got.get(g, set())) for g in want]
    rows += [_set_row(fig, g, set(), got[g]) for g in sorted(set(got) - set(want))]
    return rows


def _table_5(fig: PaperFigure, assoc: pd.DataFrame) -> list[dict]:
    got = _associations(assoc)
    rows = []
    for g, words in fig.values.items():
        ours = set(words) & got.get(g, set())
        rows.append(_set_row(fig, g, set(words), ours, "" if ours == set(words) else "not flagged by stereoprobe"))
    return rows


def _figure_1(fig: PaperFigure, scores: pd.DataFrame) -> list[dict]:
    desc = fig.values["descriptor"]
    d = scores[scores["descriptor"] == desc]
    line = d["score"].mean() - stats.norm.ppf(0.99) * d["score"].std(ddof=1)
    below = set(d.loc[d["score"] < line, "group"])
    flagged = set(_flagged(d)["group"])
    want = set(fig.values["groups"])
    return [_set_row(fig, f'"{desc}": groups below the 1 % line', want, below),
            _set_row(fig, f'"{desc}": groups flagged', want, flagged)]


# ------------------------------------------------------------------------------------------- profile figures

def _table_8(fig: PaperFigure, rc: pd.DataFrame, model: str) -> list[dict]:
    rc = rc[rc["model"] == model]
    rows = []
    for word, v in fig.values.items():
        r = rc[rc["word"] == word]
        gen = {group_key(g) for g in r["generation_group"]}
        cell = r["apx_flagged_groups"].iloc[0] if len(r) else None
        apx = set(str(cell).split("; ")) if isinstance(cell, str) and cell else set()
        rows.append(_set_row(fig, f"{word}: generation groups", set(v["generation"]), gen))
        rows.append(_set_row(fig, f"{word}: APX groups", set(v["apx"]), apx))
    return rows


def _table_6(fig: PaperFigure, c: pd.DataFrame, models: Mapping[str, str]) -> list[dict]:
    rows = []
    by = c.set_index(["model", "target"])
    for key, printed in fig.values.items():
        for target, want in zip(fig.extra["columns"], printed):
            if (models[key], target) not in by.index:
                rows.append(_row(fig, f"{key} {target}", want, "", DIFFERS, "absent from stereoprobe's table"))
                continue
            acc = by.loc[(models[key], target)]
            ours = round(100 * float(acc["accuracy"]), 1)
            ci = ""
            if "ci_low" in acc and pd.notna(acc["ci_low"]):
                ci = f" [{100 * acc['ci_low']:.1f}, {100 * acc['ci_high']:.1f}]"
            rows.append(_row(fig, f"{key} {target}", want, f"{ours}{ci}", EXACT if ours == want else DIFFERS))
    return rows


def _ablation(fig: PaperFigure, a: pd.DataFrame, models: Mapping[str, str]) -> list[dict]:
    a = a[a["target"] == fig.extra["target"]].set_index(["model", "feature"])
    rows = []
    for feature, printed in fig.values.items():
        for key, want in zip(fig.extra["columns"], printed):
            if (models[key], feature) not in a.index:
                rows.append(_row(fig, f"{key} {feature}", want, "", DIFFERS, "absent from stereoprobe's table"))
                continue
            ours = float(a.loc[(models[key], feature), "delta_pp"])
            if round(ours, 1) == want:
                verdict, reason = EXACT, ""
            elif abs(ours - want) < fig.tolerance + 1e-9:
                verdict, reason = f"within {fig.tolerance:g}", fig.tolerance_reason
            else:
                verdict, reason = DIFFERS, ""
            rows.append(_row(fig, f"{key} {feature}", want, f"{ours:.3f}", verdict, reason))
    return rows


def _entries(top: pd.DataFrame, model: str, feature: str) -> set[tuple[str, str]]:
    t = top[(top["model"] == model) & (top["feature"] == feature)]
    return {(str(w), group_key(g)) for w, g in zip(t["word"], t["group"])}


def _printed(table: Mapping[str, str]) -> set[tuple[str, str]]:
    return {(w, g) for w, groups in table.items() for g in groups.split()}


def _fmt(entries: set[tuple[str, str]]) -> str:
    return "; ".join(f"{w}: {g}" for w, g in sorted(entries))


def _top_words(fig: PaperFigure, top: pd.DataFrame, models: Mapping[str, str]) -> list[dict]:
    model = models[fig.extra["model"]]
    rows = []
    diffs = fig.extra.get("differences", {})
    for feature, table in fig.values.items():
        printed, got = _printed(table), _entries(top, model, feature)
        item = f"{fig.extra['model']} {feature}"
        if got == printed:
            rows.append(_row(fig, item, _fmt(printed), _fmt(got), EXACT))
            continue
        d = diffs.get(feature)
        if d is not None:
            expected = (printed - {tuple(x) for x in d["printed"]}) | {tuple(x) for x in d["file"]}
            if got == expected:
                rows.append(_row(fig, item, _fmt(printed), _fmt(got), DIFFERS, d["reason"]))
                continue
        rows.append(_row(fig, item, _fmt(printed), _fmt(got), DIFFERS,
                         f"printed only: {_fmt(printed - got)}; ours only: {_fmt(got - printed)}"))
    for feature, table in fig.extra.get("partial", {}).items():
        printed, got = _printed(table), _entries(top, model, feature)
        ok = printed <= got
        rows.append(_row(fig, f"{fig.extra['model']} {feature} (legible entries)", _fmt(printed), _fmt(got),
                         EXACT if ok else DIFFERS,
                         "the PDF's row is cut off: its legible entries are all among ours" if ok else
                         f"printed, not ours: {_fmt(printed - got)}"))
    return rows


# ------------------------------------------------------------------------------------------------------ api

def _read(folder: Path | None, name: str) -> pd.DataFrame | None:
    if folder is None:
        return None
    path = Path(folder) / f"{name}.csv"
    return pd.read_csv(path) if path.is_file() else None


def compare_globalbias(apx_dir: Path | None, profiles_dir: Path | None, *, apx_model: str | None = None,
                       profile_models: Mapping[str, str] | None = None,
                       figures: PaperFigures | None = None) -> pd.DataFrame:
    """Rows of :data:`COLUMNS` for every figure of ``figures`` (default: the bundled paper figures).

    ``apx_dir``: output folder of ``stereoprobe globalbias`` on the Llama 3 8B APX results (one model; or
    ``apx_model`` picks one); ``profiles_dir``: output folder of ``stereoprobe profiles`` (with ``--apx``) on the
    four models' profiles; ``profile_models`` maps the paper's model keys (``llama3``, ``gpt3``, ``claude``,
    ``gpt4o``) to the model names in its tables (default: the upstream file stems, ``10a_<key>_full``).
    """
    figs = figures or paper_figures()
    models = dict(profile_models or {k: f"10a_{k}_full" for k in figs.profile_keys})
    scores, assoc = _read(apx_dir, "bias_scores"), _read(apx_dir, "associations")
    if scores is not None and apx_model is not None:
        scores, assoc = scores[scores["model"] == apx_model], assoc[assoc["model"] == apx_model]
    tables = {n: _read(profiles_dir, n) for n in ("classification", "feature_ablation", "top_words",
                                                 "religion_consistency")}
    apx_steps: dict[str, Callable[[PaperFigure], list[dict]]] = {
        "section_5_1": lambda f: _section_5_1(f, scores), "table_9": lambda f: _table_9(f, assoc),
        "table_5": lambda f: _table_5(f, assoc), "figure_1": lambda f: _figure_1(f, scores)}
    profile_steps: dict[str, tuple[str, Callable[[PaperFigure, pd.DataFrame], list[dict]]]] = {
        "table_8": ("religion_consistency", lambda f, t: _table_8(f, t, models["llama3"])),
        "table_6": ("classification", lambda f, t: _table_6(f, t, models)),
        "table_7": ("feature_ablation", lambda f, t: _ablation(f, t, models)),
        "table_10": ("feature_ablation", lambda f, t: _ablation(f, t, models)),
        "table_11": ("feature_ablation", lambda f, t: _ablation(f, t, models)),
        "table_12": ("top_words", lambda f, t: _top_words(f, t, models)),
        "table_13": ("top_words", lambda f, t: _top_words(f, t, models))}
    rows: list[dict] = []
    for fig in figs.figures:
        if fig.id in apx_steps:
            rows += apx_steps[fig.id](fig) if scores is not None and assoc is not None else \
                [_row(fig, "", "", "", NOT_RUN, f"no stereoprobe globalbias output of {fig.output}")]
        elif fig.id in profile_steps:
            name, step = profile_steps[fig.id]
            table = tables[name]
            rows += step(fig, table) if table is not None else \
                [_row(fig, "", "", "", NOT_RUN, f"no {name} table (from {fig.output})")]
        else:
            rows.append(_row(fig, "", "", "", NOT_RUN, "stereoprobe has no comparison for this figure yet"))
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per figure: how many rows were reproduced exactly, within the tolerance, differ, or were not run."""
    kind = rows["verdict"].where(~rows["verdict"].str.startswith("within"), "within tolerance")
    counts = pd.crosstab(rows["figure"], kind).reindex(columns=[EXACT, "within tolerance", DIFFERS, NOT_RUN],
                                                       fill_value=0)
    order = list(dict.fromkeys(rows["figure"]))
    return counts.reindex(order).reset_index()
