"""The StereoTales association report: one offline HTML file rebuilt from the tables of an output folder.

:func:`write_associations_report` reads only what ``stereoprobe associations`` wrote into ``out_dir`` (the
table names are in :data:`TABLES`), plus an optional ``harm_labels.csv`` (columns ``base_attribute,
base_value, compared_attribute, compared_value, harmful, source``) written by the harm judge, and appends
the caller's extra sections. So the judge step can add its sections to the same report without re-running
the statistics.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from stereoprobe.report.html import Section, table_html, write_report

KEY_COLUMNS = ["base_attribute", "base_value", "compared_attribute", "compared_value"]
REPORT_NAME = "report.html"
HARM_LABELS = "harm_labels.csv"
RUN_INFO = "run_info.json"

# table name -> what it holds (CSV + Parquet each)
TABLES: dict[str, str] = {
    "associations": "associations passing the filter, one row per model × slice × (A=a → B=b)",
    "associations_across_models": "per slice and association: models count, mean percentage, mean lift",
    "explorer_global": "per model, the global associations with the association-explorer columns",
    "associations_by_language": "per association: languages count in the per-language run",
    "language_jaccard": "language × language Jaccard similarity of the association sets",
    "language_specific": "associations found in exactly one language",
    "pair_tests": "step 1: every attribute-pair test (p-value method, BH, Cramér's V)",
    "value_tests": "step 2: every value-pair test of the significant pairs (BY, fraction, lift, CI)",
    "attribute_distributions": "extracted attribute values per model and language",
    "refusal_rates": "stories, refusals and errored samples per model, language, prompted attribute",
    "unknown_rates": "unknown/other answers per model, language, attribute",
    "association_examples": "a few stories (ids + excerpt) per association",
    "input_issues": "samples that are not stories of the analysis (errored, no profile, extra set)",
    "input_sources": "input files read",
}

EXAMPLES_IN_REPORT = 2000  # associations whose example stories are embedded (the CSV has all)


def read_output_table(out_dir: str | Path, name: str) -> pd.DataFrame | None:
    """Read ``out_dir/name.parquet`` (or ``.csv``); None when the table was not written."""
    d = Path(out_dir)
    if (d / f"{name}.parquet").is_file():
        return pd.read_parquet(d / f"{name}.parquet")
    if (d / f"{name}.csv").is_file():
        return pd.read_csv(d / f"{name}.csv")
    return None


def read_harm_labels(out_dir: str | Path) -> pd.DataFrame | None:
    path = Path(out_dir) / HARM_LABELS
    if not path.is_file():
        return None
    df = pd.read_csv(path)
    missing = [c for c in KEY_COLUMNS + ["harmful"] if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}")

    def as_bool(v: object) -> bool | None:
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in ("true", "1", "1.0", "yes", "harmful"):
            return True
        if s in ("false", "0", "0.0", "no", "benign"):
            return False
        return None

    df["harmful"] = df["harmful"].map(as_bool)
    return df.drop_duplicates(KEY_COLUMNS, keep="last")


def _harm_label(df: pd.DataFrame, labels: pd.DataFrame | None) -> pd.Series:
    if labels is None:
        return pd.Series(["unlabelled"] * len(df), index=df.index)
    m = df[KEY_COLUMNS].merge(labels[KEY_COLUMNS + ["harmful"]], on=KEY_COLUMNS, how="left")
    lab = m["harmful"].map({True: "harmful", False: "benign"}).fillna("unlabelled")
    lab.index = df.index
    return lab


_LINK_TEXT = re.compile(r'(<a href="#ex-[^"]+">)#ex-[^<]+(</a>)')


def _linked_table(section: Section, df: pd.DataFrame, caption: str) -> None:
    """A sortable table whose ``examples`` links read "stories" instead of the anchor name."""
    if df.empty:
        section.note(f"{caption}: no rows.")
        return
    section.raw(_LINK_TEXT.sub(r"\1stories\2", table_html(df, caption=caption)))


def _table(section: Section, df: pd.DataFrame, caption: str) -> None:
    if df.empty:
        section.note(f"{caption}: no rows.")
    else:
        section.table(df, caption=caption)


def _examples_link(df: pd.DataFrame, linked: set[str]) -> pd.DataFrame:
    if "association_id" not in df.columns:
        return df
    out = df.copy()
    out.insert(0, "examples", [f"#ex-{a}" if a in linked else "" for a in out["association_id"]])
    return out.drop(columns=["association_id"])


# ----------------------------------------------------------------------------------------------- plots


def _plot_per_model(assoc: pd.DataFrame, labels: pd.DataFrame | None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = assoc.copy()
    df["harm"] = _harm_label(df, labels)
    counts = df.groupby(["model", "harm"]).size().unstack(fill_value=0)
    order = [c for c in ("harmful", "benign", "unlabelled") if c in counts.columns]
    counts = counts[order]
    counts = counts.loc[counts.sum(axis=1).sort_values().index]
    colors = {"harmful": "#c0392b", "benign": "#7f8c8d", "unlabelled": "#2e86c1"}
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(counts) + 1.4))
    left = pd.Series(0, index=counts.index)
    for c in order:
        ax.barh(counts.index, counts[c], left=left, color=colors[c], label=c)
        left = left + counts[c]
    ax.set_xlabel("associations passing the filter")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if len(order) > 1 or labels is not None:
        ax.legend(loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _plot_jaccard(jac: pd.DataFrame):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = jac.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(0.55 * len(jac) + 2.2, 0.5 * len(jac) + 1.6))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(jac.columns)), [str(c) for c in jac.columns])
    ax.set_yticks(range(len(jac.index)), [str(i) for i in jac.index])
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] == m[i, j]:
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if m[i, j] < 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="Jaccard")
    return fig


def _plot_distributions(dist: pd.DataFrame, max_attributes: int = 19):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = dist[dist["language"] == "all"]
    attrs = list(dict.fromkeys(d["attribute"]))[:max_attributes]
    models = sorted(d["model"].unique())
    ncol = 3
    nrow = (len(attrs) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(15, nrow * (0.3 * len(models) + 1.5)), squeeze=False)
    cmap = plt.get_cmap("tab20")
    for ax, a in zip(axes.ravel(), attrs):
        sub = d[d["attribute"] == a].pivot_table(index="model", columns="value", values="share", aggfunc="sum").fillna(0)
        sub = sub.reindex(models).fillna(0)
        cols = [c for c in sub.columns if c not in ("unknown", "other")] + [c for c in ("other", "unknown") if c in sub.columns]
        left = pd.Series(0.0, index=sub.index)
        for k, c in enumerate(cols):
            color = "#dddddd" if c == "unknown" else ("#aaaaaa" if c == "other" else cmap(k % 20))
            ax.barh(sub.index, sub[c], left=left, color=color, label=str(c)[:28])
            left = left + sub[c]
        ax.set_title(a, fontsize=9)
        ax.set_xlim(0, 1)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, frameon=False)
    for ax in axes.ravel()[len(attrs):]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def _plot_rates(rates: pd.DataFrame, columns: str, value: str, label: str):
    """Heatmap of a rate (0–1) per model (rows) and ``columns``, with the value written in each cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    u = rates.pivot_table(index="model", columns=columns, values=value, observed=True)
    fig, ax = plt.subplots(figsize=(0.5 * u.shape[1] + 3.5, 0.35 * u.shape[0] + 2))
    m = u.to_numpy(dtype=float)
    im = ax.imshow(m, vmin=0, vmax=1, cmap="Greys", aspect="auto")
    ax.set_xticks(range(u.shape[1]), [str(c) for c in u.columns], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(u.shape[0]), [str(i) for i in u.index], fontsize=7)
    if m.size <= 600:
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                if m[i, j] == m[i, j]:
                    ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if m[i, j] > 0.5 else "black")
    fig.colorbar(im, ax=ax, label=label)
    return fig


# --------------------------------------------------------------------------------------------- examples


def _examples_html(examples: pd.DataFrame, ids: Sequence[str]) -> str:
    """One anchored block per association (``id="ex-<association id>"``); excerpts are model output, escaped."""
    parts = []
    by_id = {k: g for k, g in examples.groupby("association_id", sort=False)}
    for aid in ids:
        g = by_id.get(aid)
        if g is None:
            continue
        r = g.iloc[0]
        title = f"{r.base_attribute} = {r.base_value} → {r.compared_attribute} = {r.compared_value}"
        items = []
        for e in g.itertuples(index=False):
            excerpt = getattr(e, "excerpt", "")
            excerpt = "" if excerpt is None or excerpt != excerpt else str(excerpt)
            items.append(
                f"<li><span class='meta'>{html.escape(str(e.model))} · slice {html.escape(str(e.slice))} · "
                f"{html.escape(str(e.language))} · sample {html.escape(str(e.sample_id))} (epoch {int(e.epoch)})"
                f"</span><br>{html.escape(excerpt)}</li>"
            )
        parts.append(f"<div class='example' id='ex-{html.escape(aid)}'><h3>{html.escape(title)}</h3><ul>{''.join(items)}</ul></div>")
    return "\n".join(parts)


# ----------------------------------------------------------------------------------------------- report


def _summary_section(out_dir: Path, info: dict, refusals: pd.DataFrame | None, issues: pd.DataFrame | None) -> Section:
    s = Section("Run", anchor="run")
    if info:
        s.text(
            f"{info.get('stories', '?')} stories from {len(info.get('models', []))} model(s) and "
            f"{len(info.get('languages', []))} language(s); {info.get('refused', '?')} refused stories and "
            f"{info.get('extraction_failed', 0)} extraction failures kept as all-unknown rows; "
            f"{info.get('issues', {}).get('error', 0)} errored samples and "
            f"{info.get('issues', {}).get('no_profile', 0)} samples without a profile not analysed."
        )
        cfg = info.get("config") or {}
        if cfg:
            s.table(pd.DataFrame({"setting": list(cfg), "value": [str(v) for v in cfg.values()]}), caption="mining settings")
        if info.get("p_methods"):
            s.table(pd.DataFrame({"p-value method": list(info["p_methods"]), "tests": list(info["p_methods"].values())}),
                    caption="how the step-1 p-values were computed")
    if refusals is not None and len(refusals):
        overall = refusals[(refusals["language"] == "all") & (refusals["target_attribute"] == "all")]
        s.table(overall.drop(columns=["language", "target_attribute"]), caption="refusals and errored samples per model")
    if issues is not None and len(issues):
        counts = issues.groupby(["model", "kind"]).size().rename("samples").reset_index()
        s.table(counts, caption="samples not analysed, by reason (input_issues.csv lists them)")
    return s


def write_associations_report(out_dir: str | Path, extra_sections: Sequence[Section] = ()) -> Path:
    """Rebuild ``out_dir/report.html`` from the tables in ``out_dir`` alone, appending ``extra_sections``."""
    d = Path(out_dir)
    assoc = read_output_table(d, "associations")
    if assoc is None:
        raise FileNotFoundError(f"{d}: no associations table (run `stereoprobe associations ... --out {d}` first)")
    info = json.loads((d / RUN_INFO).read_text()) if (d / RUN_INFO).is_file() else {}
    labels = read_harm_labels(d)
    across = read_output_table(d, "associations_across_models")
    explorer = read_output_table(d, "explorer_global")
    by_lang = read_output_table(d, "associations_by_language")
    jac = read_output_table(d, "language_jaccard")
    specific = read_output_table(d, "language_specific")
    pairs = read_output_table(d, "pair_tests")
    dist = read_output_table(d, "attribute_distributions")
    refusals = read_output_table(d, "refusal_rates")
    unknown = read_output_table(d, "unknown_rates")
    examples = read_output_table(d, "association_examples")
    issues = read_output_table(d, "input_issues")

    if labels is not None:
        assoc = assoc.assign(harm=_harm_label(assoc, labels).to_numpy())
        if across is not None and set(KEY_COLUMNS) <= set(across.columns):
            across = across.assign(harm=_harm_label(across, labels).to_numpy())

    # which associations get an embedded example block (the first rows of the shown tables)
    linked: list[str] = []
    if examples is not None and len(examples):
        have = set(examples["association_id"])
        for df in (across, explorer, assoc):
            if df is not None and "association_id" in df.columns:
                linked += [a for a in df["association_id"].head(EXAMPLES_IN_REPORT) if a in have]
        linked = list(dict.fromkeys(linked))[:EXAMPLES_IN_REPORT]
    linked_set = set(linked)

    sections = [_summary_section(d, info, refusals, issues)]

    glob = assoc[assoc["slice"] == "all"]
    s = Section("Associations per model", anchor="per-model")
    s.text(
        "An association A = a → B = b reads: in the generated stories, when A is a, B is b more often than for "
        "other A groups. Kept when the attribute pair is significant (BH), its effect is medium or large, the "
        "cell's BY-adjusted one-sided Fisher p < 0.05 and lift ≥ 2 (spec §5.8)."
    )
    shown = glob if len(glob) else assoc
    if len(shown):
        cap = "global run (languages pooled)" if len(glob) else "per-language run"
        if labels is not None:
            cap += "; colour = harm label from harm_labels.csv"
        s.figure(_plot_per_model(shown, labels), caption=f"associations per model, {cap}")
    else:
        s.note("No association passes the filter.")
    sections.append(s)

    if across is not None:
        s = Section("Associations across models", anchor="across-models")
        _linked_table(s, _examples_link(across, linked_set), caption="associations_across_models.csv")
        sections.append(s)
    if explorer is not None and len(explorer):
        s = Section("Association explorer (global, per model)", anchor="explorer")
        _linked_table(s, _examples_link(explorer, linked_set), caption="explorer_global.csv")
        sections.append(s)
    s = Section("All associations (every slice)", anchor="associations")
    _linked_table(s, _examples_link(assoc, linked_set), caption="associations.csv")
    sections.append(s)

    if by_lang is not None or jac is not None:
        s = Section("Languages", anchor="languages")
        j = jac.set_index(jac.columns[0]) if jac is not None and len(jac) else None
        if j is None or len(j) < 2 or not j.notna().to_numpy().any():
            s.note("Jaccard heatmap: fewer than two languages with associations.")
        else:
            s.figure(_plot_jaccard(j), caption="Jaccard similarity between the languages' association sets (English keys)")
        if by_lang is not None:
            _linked_table(s, _examples_link(by_lang, linked_set), caption="associations_by_language.csv (languages count)")
        if specific is not None and len(specific):
            _linked_table(s, _examples_link(specific, linked_set), caption="language_specific.csv")
        sections.append(s)

    if dist is not None and len(dist):
        s = Section("Attribute distributions", anchor="distributions")
        s.figure(_plot_distributions(dist), caption="extracted values per model (languages pooled; stories prompted "
                                                   "with the attribute excluded; grey = other/unknown)")
        s.table(dist[dist["language"] == "all"], caption="attribute_distributions.csv (languages pooled; the CSV has each language)")
        sections.append(s)

    if unknown is not None and len(unknown) or refusals is not None and len(refusals):
        s = Section("Refusals and unknown answers", anchor="rates")
        if refusals is not None and len(refusals):
            r = refusals[(refusals["target_attribute"] == "all") & (refusals["language"] != "all")]
            if len(r):
                s.figure(_plot_rates(r, "language", "refusal_rate", "refusal rate"),
                         caption="share of refused stories per model and prompt language")
        if unknown is not None and len(unknown):
            s.figure(_plot_rates(unknown[unknown["language"] == "all"], "attribute", "unknown_rate", "unknown rate"),
                     caption="share of 'unknown' per model and attribute (extracted stories, languages pooled)")
            s.table(unknown[unknown["language"] == "all"], caption="unknown_rates.csv (languages pooled)")
        if refusals is not None and len(refusals):
            s.table(refusals, caption="refusal_rates.csv")
        sections.append(s)

    if pairs is not None:
        s = Section("Attribute-pair tests (step 1)", anchor="pair-tests")
        shown = pairs.drop(columns=[c for c in ("table", "row_values", "col_values") if c in pairs.columns])
        _table(s, shown, caption="pair_tests.csv (the CSV also holds each contingency table and its labels)")
        sections.append(s)

    if linked:
        s = Section("Example stories", anchor="examples")
        s.note("A few stories per association (prompted with A = a, extracted B = b); excerpts are model output.")
        s.raw(_examples_html(examples, linked))
        sections.append(s)

    files = [f for f in TABLES if (d / f"{f}.csv").is_file()]
    s = Section("Files", anchor="files")
    s.raw(table_html(pd.DataFrame({"table": [f"{f}.csv" for f in files], "content": [TABLES[f] for f in files]})))
    sections.append(s)

    sections += list(extra_sections)
    subtitle = info.get("subtitle") or "StereoTales association mining"
    return write_report(d / REPORT_NAME, "StereoTales associations", sections, subtitle=subtitle)
