"""The StereoTales association report: one offline HTML file rebuilt from the tables of an output folder.

:func:`write_associations_report` reads only what ``stereoprobe associations`` wrote into ``out_dir`` (the
table names are in :data:`stereoprobe.stereotales.contract.TABLES`), plus an optional ``harm_labels.csv`` (columns ``base_attribute,
base_value, compared_attribute, compared_value, harmful, source``) written by the harm judge, and appends
the caller's extra sections. So the judge step can add its sections to the same report without re-running
the statistics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.report.html import Section, plot_is_empty, write_report
from stereoprobe.report.plot_text import TITLE_WIDTH, plot_label
from stereoprobe.report.run_info import RUN_INFO
from stereoprobe.stereotales.contract import ALL_SLICE, KEY_COLUMNS, TABLES

REPORT_NAME = "report.html"
HARM_LABELS = "harm_labels.csv"

P_METHOD_NOTE = (
    "Step-1 p-values: each attribute-pair test records how its p-value was computed (pair_tests.p_method; "
    "value tables carry it as pair_p_method). reference-mc is upstream's Monte Carlo estimate itself (500,000 "
    "resamples, seed 42); exact is the exact Fisher-Freeman-Halton p-value the Monte Carlo estimates; asymptotic "
    "is the chi-square approximation, used only where a certified upper bound of the exact p-value already "
    "decides the test; sequential-mc is a prefix of upstream's own random stream, stopped once the decision is "
    "certain. BH decisions equal upstream's, but the p-values differ from upstream's estimates except in "
    "reference-mc rows; --p-method reference-mc reproduces upstream's p-values everywhere."
)

EXAMPLES_IN_REPORT = 2000  # associations whose example stories are embedded (the CSV has all)


def read_output_table(out_dir: str | Path, name: str) -> pd.DataFrame | None:
    """Read ``out_dir/name.parquet`` (or ``.csv``); None when the table was not written (the one reader of
    output tables, :func:`stereoprobe.tables.read_table`: an unreadable table is one line naming it)."""
    from stereoprobe.tables import read_table

    return read_table(out_dir, name)


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


def _files(name: str) -> list[str]:
    """The CSV and Parquet files of a table, relative to the report's folder."""
    return [f"{name}.csv", f"{name}.parquet"]


def _linked_table(section: Section, df: pd.DataFrame, caption: str, name: str) -> None:
    """A sortable table whose ``examples`` column links to the example stories of the association."""
    links = ["examples"] if "examples" in df.columns else None
    section.table(df, caption=caption, links=links, files=_files(name))


def _table(section: Section, df: pd.DataFrame, caption: str, name: str) -> None:
    section.table(df, caption=caption, files=_files(name))


def _examples_link(df: pd.DataFrame, linked: set[str]) -> pd.DataFrame:
    if "association_id" not in df.columns:
        return df
    out = df.copy()
    out.insert(0, "examples", [("stories", f"#ex-{a}") if a in linked else None for a in out["association_id"]])
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
    # positions, not the model names: matplotlib parses string data as categories/dates, for minutes on a
    # megabyte-long name; the names are drawn as shortened tick labels
    y = np.arange(len(counts))
    left = np.zeros(len(counts))
    for c in order:
        ax.barh(y, counts[c].to_numpy(), left=left, color=colors[c], label=c)
        left = left + counts[c].to_numpy()
    ax.set_yticks(y, [plot_label(m) for m in counts.index])
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
    ax.set_xticks(range(len(jac.columns)), [plot_label(c) for c in jac.columns])
    ax.set_yticks(range(len(jac.index)), [plot_label(i) for i in jac.index])
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] == m[i, j]:
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if m[i, j] < 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="Jaccard")
    return fig


#: type size of the attribute small multiples' legends and ticks (readable at the page's width)
LEGEND_PT = 9


def _stacked_bars(ax, y: np.ndarray, widths: np.ndarray, colors: list) -> None:
    """Horizontal stacked bars (height 0.8, centred on ``y``; column ``k`` of ``widths`` in ``colors[k]``), as
    ``barh`` draws them but one collection for the panel: a figure of 19 panels × 23 models × 10 values is
    thousands of bars, each its own artist in every layout pass of ``barh``."""
    from matplotlib.collections import PolyCollection

    left = np.zeros_like(widths)
    left[:, 1:] = np.cumsum(widths, axis=1)[:, :-1]  # as barh's left = left + width, one value at a time
    right = left + widths
    lo, hi = y - 0.4, y + 0.4
    verts = [[(l, a), (r, a), (r, b), (l, b)] for k in range(widths.shape[1])
             for l, r, a, b in zip(left[:, k], right[:, k], lo, hi)]
    face = [c for c in colors for _ in y]
    ax.add_collection(PolyCollection(verts, facecolors=face, edgecolors="none"), autolim=True)
    ax.autoscale_view()


def _plot_distributions(dist: pd.DataFrame, max_attributes: int = 19):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    d = dist[dist["language"] == "all"]
    attrs = list(dict.fromkeys(d["attribute"]))[:max_attributes]
    models = sorted(d["model"].unique())
    ncol = 3
    nrow = (len(attrs) + ncol - 1) // ncol
    # legends in 9-pt type below each panel, three entries a row: room for the longest one
    legend_rows = max((-(-d.loc[d["attribute"] == a, "value"].nunique() // 3) for a in attrs), default=1)
    fig, axes = plt.subplots(nrow, ncol, figsize=(15, nrow * (0.3 * len(models) + 1.5 + 0.2 * legend_rows)),
                             squeeze=False, sharey="row")  # model names once a row: every panel lists them alike
    cmap = plt.get_cmap("tab20")
    for k, (ax, a) in enumerate(zip(axes.ravel(), attrs)):
        sub = d[d["attribute"] == a].pivot_table(index="model", columns="value", values="share", aggfunc="sum").fillna(0)
        sub = sub.reindex(models).fillna(0)
        cols = [c for c in sub.columns if c not in ("unknown", "other")] + [c for c in ("other", "unknown") if c in sub.columns]
        y = np.arange(len(sub))  # positions and shortened tick labels, never model names as category data
        colors = ["#dddddd" if c == "unknown" else ("#aaaaaa" if c == "other" else cmap(k % 20))
                  for k, c in enumerate(cols)]
        _stacked_bars(ax, y, sub[cols].to_numpy(dtype=float), colors)
        ax.legend(handles=[Patch(facecolor=col, label=plot_label(c, 28, 1)) for c, col in zip(cols, colors)],
                  fontsize=LEGEND_PT, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, frameon=False)
        if k % ncol == 0:  # the row's panels share this axis (its ticks and names)
            ax.set_yticks(y, [plot_label(m) for m in sub.index])
        ax.set_title(plot_label(a, TITLE_WIDTH), fontsize=10)
        ax.set_xlim(0, 1)
        ax.tick_params(labelsize=9)
    for ax in axes.ravel()[len(attrs):]:
        ax.axis("off")
    fig.tight_layout(w_pad=4)  # the legends of neighbouring panels apart (no model names between them)
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
    ax.set_xticks(range(u.shape[1]), [plot_label(c) for c in u.columns], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(u.shape[0]), [plot_label(i) for i in u.index], fontsize=7)
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
    """One anchored block per association (``id="ex-<association id>"``, template
    :data:`stereoprobe.report.pages.EXAMPLES`); excerpts are model output, escaped."""
    from stereoprobe.report.pages import EXAMPLES, render_page

    blocks = []
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
            items.append((str(e.model), str(e.slice), str(e.language), str(e.sample_id), int(e.epoch), excerpt))
        blocks.append((aid, title, items))
    return render_page(EXAMPLES, examples=blocks)


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
        if info.get("read"):
            s.text(f"Logs read: {info['read']}.")
        cfg = info.get("config") or {}
        if cfg:
            s.table(pd.DataFrame({"setting": list(cfg), "value": [str(v) for v in cfg.values()]}), caption="mining settings")
        if info.get("p_methods"):
            s.text(P_METHOD_NOTE)
            s.table(pd.DataFrame({"p-value method": list(info["p_methods"]), "tests": list(info["p_methods"].values())}),
                    caption="how the step-1 p-values were computed")
    if refusals is not None and len(refusals):
        overall = refusals[(refusals["language"] == ALL_SLICE) & (refusals["target_attribute"] == ALL_SLICE)]
        s.table(overall.drop(columns=["language", "target_attribute"]), caption="refusals and errored samples per model")
    if issues is not None and len(issues):
        counts = issues.groupby(["model", "kind"]).size().rename("samples").reset_index()
        s.table(counts, caption="samples not analysed, by reason (input_issues.csv lists them)")
    return s


@dataclass
class _Outputs:
    """The tables of an ``associations`` output folder (None: not written by that run)."""

    dir: Path
    info: dict
    assoc: pd.DataFrame
    labels: pd.DataFrame | None
    across: pd.DataFrame | None
    explorer: pd.DataFrame | None
    by_lang: pd.DataFrame | None
    jac: pd.DataFrame | None
    specific: pd.DataFrame | None
    pairs: pd.DataFrame | None
    dist: pd.DataFrame | None
    refusals: pd.DataFrame | None
    unknown: pd.DataFrame | None
    examples: pd.DataFrame | None
    issues: pd.DataFrame | None
    by_scenario: pd.DataFrame | None = None


def _read_outputs(d: Path) -> _Outputs:
    assoc = read_output_table(d, "associations")
    if assoc is None:
        raise FileNotFoundError(f"{d}: no associations table (run `stereoprobe associations ... --out {d}` first)")
    info = json.loads((d / RUN_INFO).read_text()) if (d / RUN_INFO).is_file() else {}
    o = _Outputs(
        d, info, assoc, read_harm_labels(d), *(read_output_table(d, n) for n in (
            "associations_across_models", "explorer_global", "associations_by_language", "language_jaccard",
            "language_specific", "pair_tests", "attribute_distributions", "refusal_rates", "unknown_rates",
            "association_examples", "input_issues"))
    )
    o.by_scenario = read_output_table(d, "attribute_distributions_by_scenario")
    if o.labels is not None:
        o.assoc = o.assoc.assign(harm=_harm_label(o.assoc, o.labels).to_numpy())
        if o.across is not None and set(KEY_COLUMNS) <= set(o.across.columns):
            o.across = o.across.assign(harm=_harm_label(o.across, o.labels).to_numpy())
    return o


def _linked_ids(o: _Outputs) -> list[str]:
    """Associations that get an embedded example block: the first rows of the shown tables."""
    linked: list[str] = []
    if o.examples is not None and len(o.examples):
        have = set(o.examples["association_id"])
        for df in (o.across, o.explorer, o.assoc):
            if df is not None and "association_id" in df.columns:
                linked += [a for a in df["association_id"].head(EXAMPLES_IN_REPORT) if a in have]
        linked = list(dict.fromkeys(linked))[:EXAMPLES_IN_REPORT]
    return linked


def _per_model_section(o: _Outputs) -> Section:
    glob = o.assoc[o.assoc["slice"] == ALL_SLICE]
    s = Section("Associations per model", anchor="per-model")
    s.text(
        "An association A = a → B = b reads: in the generated stories, when A is a, B is b more often than for "
        "other A groups. Kept when the attribute pair is significant (BH), its effect is medium or large, the "
        "cell's BY-adjusted one-sided Fisher p < 0.05 and lift ≥ 2 (the paper's filter)."
    )
    shown = glob if len(glob) else o.assoc
    if len(shown):
        cap = "global run (languages pooled)" if len(glob) else "per-language run"
        if o.labels is not None:
            cap += "; colour = harm label from harm_labels.csv"
        s.figure(_plot_per_model(shown, o.labels), caption=f"associations per model, {cap}")
    else:
        s.empty("No association passes the filter in these runs.")
    return s


def _association_sections(o: _Outputs, linked: set[str]) -> list[Section]:
    out = []
    if o.across is not None:
        s = Section("Associations across models", anchor="across-models")
        _linked_table(s, _examples_link(o.across, linked), "associations_across_models.csv", "associations_across_models")
        out.append(s)
    if o.explorer is not None and len(o.explorer):
        s = Section("Association explorer (global, per model)", anchor="explorer")
        _linked_table(s, _examples_link(o.explorer, linked), "explorer_global.csv", "explorer_global")
        out.append(s)
    s = Section("All associations (every slice)", anchor="associations")
    _linked_table(s, _examples_link(o.assoc, linked), "associations.csv", "associations")
    out.append(s)
    return out


def _language_section(o: _Outputs, linked: set[str]) -> Section | None:
    if o.by_lang is None and o.jac is None:
        return None
    s = Section("Languages", anchor="languages")
    j = o.jac.set_index(o.jac.columns[0]) if o.jac is not None and len(o.jac) else None
    if j is None or len(j) < 2 or not j.notna().to_numpy().any():
        s.empty("Jaccard heatmap: fewer than two languages with associations.")
    else:
        s.figure(_plot_jaccard(j), caption="Jaccard similarity between the languages' association sets (English keys)")
    if o.by_lang is not None:
        _linked_table(s, _examples_link(o.by_lang, linked), "associations_by_language.csv (languages count)",
                      "associations_by_language")
    if o.specific is not None and len(o.specific):
        _linked_table(s, _examples_link(o.specific, linked), "language_specific.csv", "language_specific")
    return s


def _distribution_section(o: _Outputs) -> Section | None:
    dist = o.dist
    if (dist is None or not len(dist)) and o.by_scenario is None:
        return None
    s = Section("Attribute distributions", anchor="distributions")
    if dist is None or not len(dist):
        s.empty("No extracted story outside its prompted attribute: no distribution to show.")
    else:
        s.figure(_plot_distributions(dist), caption="extracted values per model (languages pooled; stories prompted "
                                                   "with the attribute excluded; grey = other/unknown)")
        s.table(dist[dist["language"] == ALL_SLICE],
                caption="attribute_distributions.csv (languages pooled; the CSV has each language)",
                files=_files("attribute_distributions"))
    if o.by_scenario is not None:
        s.text("By scenario (the paper's attribute distributions per scenario): the extracted values of each "
               "attribute in the stories of each scenario, per model, languages pooled.")
        s.table(o.by_scenario, caption="attribute_distributions_by_scenario.csv",
                files=_files("attribute_distributions_by_scenario"))
    return s


def _rates_section(o: _Outputs) -> Section | None:
    refusals, unknown = o.refusals, o.unknown
    has_ref = refusals is not None and len(refusals) > 0
    has_unk = unknown is not None and len(unknown) > 0
    if not (has_ref or has_unk):
        return None
    s = Section("Refusals and unknown answers", anchor="rates")
    if has_ref:
        r = refusals[(refusals["target_attribute"] == ALL_SLICE) & (refusals["language"] != ALL_SLICE)]
        if plot_is_empty(r["refusal_rate"] if len(r) else []):
            s.empty("No story was refused in these runs: no refusal plot.")
        else:
            s.figure(_plot_rates(r, "language", "refusal_rate", "refusal rate"),
                     caption="share of refused stories per model and prompt language")
    if has_unk:
        u = unknown[unknown["language"] == ALL_SLICE]
        if plot_is_empty(u["unknown_rate"] if len(u) else []):
            s.empty("No extracted attribute was 'unknown' in these runs: no unknown-rate plot.")
        else:
            s.figure(_plot_rates(u, "attribute", "unknown_rate", "unknown rate"),
                     caption="share of 'unknown' per model and attribute (extracted stories, languages pooled)")
        s.table(unknown[unknown["language"] == ALL_SLICE], caption="unknown_rates.csv (languages pooled)",
                files=_files("unknown_rates"))
    if has_ref:
        s.table(refusals, caption="refusal_rates.csv", files=_files("refusal_rates"))
    return s


def _pairs_section(o: _Outputs) -> Section | None:
    if o.pairs is None:
        return None
    s = Section("Attribute-pair tests (step 1)", anchor="pair-tests")
    shown = o.pairs.drop(columns=[c for c in ("table", "row_values", "col_values") if c in o.pairs.columns])
    _table(s, shown, "pair_tests.csv (the CSV also holds each contingency table and its labels)", "pair_tests")
    return s


def _examples_section(o: _Outputs, linked: list[str]) -> Section | None:
    if not linked:
        return None
    s = Section("Example stories", anchor="examples")
    s.note("A few stories per association (prompted with A = a, extracted B = b); excerpts are model output.")
    s.raw(_examples_html(o.examples, linked))
    return s


def _files_section(d: Path) -> Section:
    names = [f for f in TABLES if (d / f"{f}.csv").is_file()]
    s = Section("Files", anchor="files")
    s.files([d / f for n in names for f in _files(n)], base=d, descriptions=TABLES)
    return s


def write_associations_report(out_dir: str | Path, extra_sections: Sequence[Section] = ()) -> Path:
    """Rebuild ``out_dir/report.html`` from the tables in ``out_dir`` alone, appending ``extra_sections``."""
    d = Path(out_dir)
    o = _read_outputs(d)
    linked = _linked_ids(o)
    linked_set = set(linked)
    sections: list[Section | None] = [
        _summary_section(d, o.info, o.refusals, o.issues),
        _per_model_section(o),
        *_association_sections(o, linked_set),
        _language_section(o, linked_set),
        _distribution_section(o),
        _rates_section(o),
        _pairs_section(o),
        _examples_section(o, linked),
        _files_section(d),
        *extra_sections,
    ]
    subtitle = o.info.get("subtitle") or "StereoTales association mining"
    return write_report(d / REPORT_NAME, "StereoTales associations", [x for x in sections if x is not None],
                        subtitle=subtitle)
