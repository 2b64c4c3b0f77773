"""Tables and HTML report of ``stereoprobe globalbias``: the writer of a computed
:class:`~stereoprobe.globalbias.compute.GlobalBiasResult` (the computation is in :mod:`.compute`, the statistics
in :mod:`.apx`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.globalbias.compute import GlobalBiasResult
from stereoprobe.globalbias.contract import TASK_LIKELIHOOD
from stereoprobe.globalbias.plots import figure1, figure1_descriptors
from stereoprobe.report.html import Section, plot_is_empty, write_report
from stereoprobe.report.plot_text import TITLE_WIDTH, plot_label
from stereoprobe.report.render_pool import render_all
from stereoprobe.report.run_info import write_run_info
from stereoprobe.tables import write_table

__all__ = ["FILE_DESCRIPTIONS", "GlobalBiasResult", "write_globalbias"]

FILE_DESCRIPTIONS = {
    "headline": "flagged and significant pairs per model with their 95% intervals and methods (the figures the "
                "leaderboard and the index show)",
    "bias_scores": "bias score per model x group x descriptor, with the reference flag, the stricter test's p/q "
                   "values and the per-template APX",
    "associations": "descriptors flagged per group by the reference 1% rule (paper Table 9)",
    "associations_strict": "descriptors significant per group under the stricter test (BH-controlled)",
    "min_groups": "lowest-APX group per template and descriptor",
    "validation": "accuracy and MRR on stereotype descriptors with confidence intervals (paper Tables 3 and 4)",
    "validation_detail": "per stereotype descriptor: group ranking, target, prediction",
    "incomplete_units": "group x descriptor units left out for missing names x templates",
}


def write_globalbias(result: GlobalBiasResult, out_dir: str | Path) -> Path:
    """Write the tables (CSV + Parquet), ``run_info.json`` and ``report.html`` of ``result`` into ``out_dir``
    (created); ``result.files`` lists the table files. Returns ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    for name, df in result.tables.items():
        csv = write_table(df, out, name)
        files += [csv, csv.with_suffix(".parquet")]
    result.files = files
    models = sorted(result.sentences["model"].unique()) if "model" in result.sentences else []
    write_run_info(out, probe=TASK_LIKELIHOOD, models=models, settings=result.settings, inputs=result.sources)
    _report(out / "report.html", result)
    return out


def _table_files(base: Path, name: str) -> list[Path]:
    return [base / f"{name}.csv", base / f"{name}.parquet"]


def _inputs_section(result: GlobalBiasResult, base: Path) -> Section:
    rep, o = result.read, result.options
    s = Section("Inputs and settings", anchor="inputs")
    s.text(f"{rep.summary()}" + (f" (e.g. {', '.join(rep.unscored_ids[:5])})." if rep.unscored else "."))
    info = result.sentences.groupby("model").agg(groups=("group", "nunique"), descriptors=("descriptor", "nunique"),
                                                 templates=("template", "nunique"), rows=("group", "size"))
    s.table(info.reset_index())
    if len(result.incomplete):
        s.text(f"{len(result.incomplete)} group x descriptor unit(s) lack some of their names x templates (an "
               "interrupted run without its retry, or error samples) and were left out of every statistic:")
        s.table(result.incomplete, caption="incomplete units (present / expected name x template cells)",
                files=_table_files(base, "incomplete_units"), base=base)
    else:
        s.note("Every group x descriptor unit holds all its names under all templates.")
    measure = "token perplexity" if o.measure == "token" else "byte-normalised perplexity (2^bits-per-byte)"
    s.note(f"Measure: {measure}; reference rounding {'on' if o.faithful_rounding else 'off'} (APX group ratio to "
           "3 d.p., group means to 2 d.p.). Bias score = mean over templates of the min-max normalised APX (lower = "
           "more likely = stronger association). Perplexities of different model types (causal, masked "
           "pseudo-perplexity, encoder-decoder) are not comparable and must not be pooled.")
    return s


def _validation_section(result: GlobalBiasResult, base: Path) -> Section:
    tables = result.tables
    v = Section("Validation on stereotype descriptors (paper Tables 3 and 4)", anchor="validation")
    if "validation" in tables:
        tt = ", ".join(map(str, result.options.validation_templates))
        v.text("Accuracy: share of stereotype descriptors whose lowest-scoring group (gender x ethnicity group; "
               f"template(s) {tt}, several templates = average of per-template min-max normalised means) belongs "
               "to the stereotype's target group. MRR: mean reciprocal rank of the target group (genders pooled). "
               "Chance levels are for the number of groups present. A run over some groups (-T groups) keeps "
               "only the descriptors whose target group has names in the run: the others could never be right "
               "(columns targets_absent and n_descriptors_left_out).")
        left = tables["validation"].get("n_descriptors_left_out")
        if left is not None and (left.fillna(0) > 0).any():
            absent = "; ".join(sorted({str(t) for t in tables["validation"]["targets_absent"] if str(t)}))
            v.note(f"Restricted to the groups present: {int(left.max())} validation descriptor(s) target group(s) "
                   f"without names in this run ({absent}) and are left out; chance is that of the groups present.")
        v.table(tables["validation"], files=_table_files(base, "validation"), base=base)
        v.table(tables["validation_detail"], caption="per descriptor", files=_table_files(base, "validation_detail"),
                base=base)
    for note in result.notes:
        v.empty(f"Validation not computed for {note}.")
    return v


def _associations_sections(result: GlobalBiasResult, base: Path) -> list[Section]:
    """The reference rule's flags and the stricter test's significant pairs, with their agreement."""
    tables, o = result.tables, result.options
    scores = tables["bias_scores"]
    a = Section("Associated descriptors per group: reference rule (paper Table 9)", anchor="reference")
    a.text("The reference '1% one-tailed' rule flags a group whose bias score lies more than z = 2.326 standard "
           "deviations below the descriptor's mean over groups (age axis excluded). It is a descriptive outlier "
           "flag: the standard deviation includes the tested group and there is no correction for the number of "
           "comparisons, so about 1% of group-descriptor pairs are flagged by chance under normality.")
    a.table(tables["associations"], caption="groups flagged by the reference rule",
            files=_table_files(base, "associations"), base=base)
    b = Section("Associated descriptors per group: stricter test", anchor="strict")
    b.text(f"One-sided {'Welch t-test' if o.test_method == 'welch' else 'permutation test'} of the group's names "
           "against the other groups' names (per name: log perplexity centred on its group's mean log perplexity "
           "of the template, averaged over templates; group-wide familiarity shifts cancel), with "
           f"Benjamini-Hochberg false discovery rate control at {o.alpha} over all tested pairs.")
    if scores["p_value"].notna().any():
        b.table(tables["associations_strict"], caption="groups significant under the stricter test",
                files=_table_files(base, "associations_strict"), base=base)
        cmp = scores.assign(flagged=scores["flagged"].fillna(False).astype(bool),
                            significant=scores["significant"].fillna(False).astype(bool))
        agree = pd.crosstab(cmp["flagged"], cmp["significant"]).rename_axis(index="flagged", columns=None)
        agree.columns = [f"significant={c}" for c in agree.columns]
        b.table(agree.reset_index(), caption="reference flag vs stricter test")
    else:
        b.note("Not available: the inputs hold group-level values without names.")
    return [a, b]


def _distribution_figures(scores: pd.DataFrame) -> list[tuple[str, Callable[[], Any]]]:
    """(caption, builder) of each model's histogram of bias scores and, where it fits, its heatmap of group x
    descriptor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def histogram(model: str, sub: pd.DataFrame) -> Any:
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.hist(sub["score"], bins=40, color="#4c72b0")
        ax.set_xlabel("bias score (lower = stronger association)")
        ax.set_ylabel("group x descriptor pairs")
        ax.set_title(plot_label(model, TITLE_WIDTH))
        return fig

    def heatmap(model: str, wide: pd.DataFrame) -> Any:
        fig, ax = plt.subplots(figsize=(1.2 + 0.45 * wide.shape[1], 1.0 + 0.28 * wide.shape[0]))
        rel = wide.sub(wide.mean(axis=1), axis=0)  # relative to the descriptor's mean over groups
        lim = float(np.nanmax(np.abs(rel.to_numpy()))) or 1.0
        im = ax.imshow(rel.to_numpy(), cmap="RdBu", aspect="auto", vmin=-lim, vmax=lim)
        ax.set_xticks(range(wide.shape[1]), [plot_label(c) for c in wide.columns], rotation=60, ha="right",
                      fontsize=8)
        ax.set_yticks(range(wide.shape[0]), [plot_label(i) for i in wide.index], fontsize=8)
        fig.colorbar(im, ax=ax, label="bias score minus the descriptor's mean (red = stronger association)")
        ax.set_title(plot_label(model, TITLE_WIDTH))
        return fig

    jobs: list[tuple[str, Callable[[], Any]]] = []
    for model, sub in scores.groupby("model"):
        if not plot_is_empty(sub["score"]):
            jobs.append((f"{model}: bias scores of {len(sub)} group-descriptor pairs",
                         functools.partial(histogram, model, sub)))
    for model, sub in scores.groupby("model"):
        wide = sub.pivot_table(index="descriptor", columns="group", values="score")
        if wide.shape[0] > 60 or wide.shape[1] > 40:
            continue  # a full-size table does not fit a readable heatmap; the CSV has it
        jobs.append((f"{model}: bias score per group and descriptor, relative to the descriptor's mean over groups "
                     "(red: the model finds the descriptor more likely for this group)",
                     functools.partial(heatmap, model, wide)))
    return jobs


def _figure1_figures(scores: pd.DataFrame) -> list[tuple[str, Callable[[], Any]]]:
    """(caption, builder) of each model's Figure 1 plots."""
    jobs: list[tuple[str, Callable[[], Any]]] = []
    for model, sub in scores.groupby("model"):
        for desc in figure1_descriptors(sub):
            if not plot_is_empty(sub.loc[sub["descriptor"] == desc, "score"]):
                jobs.append((f"{model}: {desc}", functools.partial(figure1, sub, desc)))
    return jobs


def _figure_sections(scores: pd.DataFrame) -> list[Section]:
    """The distribution and Figure 1 sections, their figures rendered side by side
    (:func:`~stereoprobe.report.render_pool.render_all`: the same PNGs as one after the other)."""
    dist = Section("Distribution of bias scores", anchor="dist")
    if plot_is_empty(scores["score"]):
        dist.empty("No bias score to plot.")
    fig1 = Section("Per-descriptor bias scores with the 1% line (paper Figure 1)", anchor="figure1")
    fig1.text("For the descriptors with the most extreme flagged groups: every group's bias score, lowest first; "
              "groups below the orange line (mean - 2.326 sd over the groups) are flagged by the reference rule.")
    fig1_jobs = _figure1_figures(scores)
    jobs = [(dist, *job) for job in _distribution_figures(scores)] + [(fig1, *job) for job in fig1_jobs]
    for (section, caption, build), (png, box) in zip(jobs, render_all([build for _, _, build in jobs])):
        section.rendered(png, box, build, caption=caption)
    if not fig1_jobs:
        fig1.empty("No descriptor has bias scores to plot.")
    return [dist, fig1]


def _headline_section(result: GlobalBiasResult, base: Path) -> Section:
    """The headline counts with the one interval each that the leaderboard and the index show, and the method
    of each (:mod:`stereoprobe.globalbias.headline`)."""
    h = Section("Headline figures", anchor="headline")
    table = result.tables.get("headline")
    if table is None or table.empty:
        return h.empty("No headline figure: no bias score was computed.")
    h.text("Each count's 95% interval, as the leaderboard and the results index show it. The two counts use two "
           "methods: flagged pairs resample whole descriptors; significant pairs resample them too and re-apply "
           "Benjamini-Hochberg in every draw, so a draw can find discoveries the data do not and, at the same "
           "count, the interval can reach further. Both are widened to the exact Poisson interval (a count of 0 "
           "reads [0, 3.7], never [0, 0]).")
    h.table(table, files=_table_files(base, "headline"), base=base)
    return h


def _report(path: Path, result: GlobalBiasResult) -> None:
    base = path.parent.resolve()  # links relative to the page, also for a relative out folder (the Python API)
    scores = result.tables["bias_scores"]
    t = Section("Bias scores (lowest first)", anchor="scores")
    cols = ["model", "group", "descriptor", "axis", "score", "flagged", "p_value", "q_value", "significant"]
    t.table(scores.sort_values("score")[cols], max_rows=500, files=_table_files(base, "bias_scores"), base=base)
    files = Section("Files", anchor="files")
    files.files([Path(p).resolve() for p in result.files], base=base, descriptions=FILE_DESCRIPTIONS)
    secs = [_headline_section(result, base), _inputs_section(result, base), _validation_section(result, base),
            *_associations_sections(result, base), *_figure_sections(scores), t, files]
    write_report(path, "GlobalBias: stereotypes associated with given names", secs,
                 subtitle="APX perplexity probe (Siddique et al., EMNLP 2024), computed by stereoprobe")
