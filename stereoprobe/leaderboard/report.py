"""``leaderboard.html``: per-probe rankings with intervals and model-vs-model matrices (single offline file)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.leaderboard.pairwise import ALPHA, significant
from stereoprobe.probes import RegistryView, registered
from stereoprobe.report.html import Section, files_html, plot_is_empty, write_report

#: board (the metrics table's ``probe``) -> section title, from the registered probes' descriptors
PROBE_TITLES: Mapping[str, str] = RegistryView(lambda: {b.name: b.title for d in registered() for b in d.boards})
#: board -> its headline metrics in display order (the forest plots)
MAIN_METRICS: Mapping[str, list[str]] = RegistryView(
    lambda: {b.name: b.metric_names for d in registered() for b in d.boards})


def ranking(metrics: pd.DataFrame, probe: str, metric: str) -> pd.DataFrame:
    """Models ordered by the estimate (the least biased first where lower is better), with the interval; tied
    estimates share the best rank."""
    g = metrics[(metrics["probe"] == probe) & (metrics["metric"] == metric)].copy()
    asc = (g["better"].iloc[0] != "higher") if len(g) else True
    g = g.sort_values("estimate", ascending=asc, na_position="last")
    g.insert(0, "rank", g["estimate"].rank(method="min", ascending=asc))  # ties share a rank; undefined: empty
    return g[["rank", "model", "estimate", "ci_low", "ci_high", "n", "method"]]


TICK_WIDTH, TICK_LINES = 36, 2  # a model name on a forest plot: at most two lines of 36 characters


def tick_label(model: str) -> str:
    """A model name as a forest plot's tick: wrapped on two lines of :data:`TICK_WIDTH` characters, cut with
    "…" beyond (the full name is in the tables below the plot), drawn literally (``$`` is not mathtext)."""
    from stereoprobe.report.plot_text import plot_label

    return plot_label(model, TICK_WIDTH, TICK_LINES)


#: board -> metric -> its label (the comparison table's column title), for the forest plots' panel titles
METRIC_TITLES: Mapping[str, Mapping[str, str]] = RegistryView(
    lambda: {b.name: {m.name: m.title for m in b.headline} for d in registered() for b in d.boards})
FOREST_COLUMNS = 2  # panels per row of a forest plot: each one wide enough to read at the page's width
FOREST_PT = 9  # type size of a forest plot's ticks and titles


def _forest(metrics: pd.DataFrame, probe: str):
    """One panel per headline figure of ``probe`` (at most :data:`FOREST_COLUMNS` a row), titled with the
    figure's label; every panel lists the models in one fixed order (by name, top to bottom)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def shown(m: str) -> bool:  # a panel only where some estimate or interval bound is non-zero
        sel = (metrics["probe"] == probe) & (metrics["metric"] == m)
        return bool(sel.any()) and not plot_is_empty(metrics.loc[sel, ["estimate", "ci_low", "ci_high"]])

    names = [m for m in MAIN_METRICS.get(probe, []) if shown(m)]
    if not names:
        return None
    models = sorted(metrics.loc[metrics["probe"] == probe, "model"].astype(str).unique())
    longest = max((len(tick_label(m)) for m in models), default=0)
    ncol = min(FOREST_COLUMNS, len(names))
    nrow = -(-len(names) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=((4.5 + 0.07 * min(longest, TICK_WIDTH)) * ncol,
                                                  nrow * (1.2 + 0.45 * len(models))), squeeze=False)
    y = np.arange(len(models))[::-1]  # the first model by name at the top of every panel
    titles = METRIC_TITLES.get(probe, {})
    for ax, name in zip(axes.ravel(), names):
        sel = metrics[(metrics["probe"] == probe) & (metrics["metric"] == name)]
        g = sel.set_index(sel["model"].astype(str)).reindex(models)
        est = g["estimate"].to_numpy(float)
        lo = np.clip(est - g["ci_low"].to_numpy(float), 0, None)
        hi = np.clip(g["ci_high"].to_numpy(float) - est, 0, None)
        ax.errorbar(est, y, xerr=[np.nan_to_num(lo), np.nan_to_num(hi)], fmt="o", capsize=3)
        ax.set_yticks(y, [tick_label(m) for m in models], fontsize=FOREST_PT)
        ax.tick_params(axis="x", labelsize=FOREST_PT)
        ax.set_ylim(-0.5, len(models) - 0.5)
        ax.set_title(titles.get(name, name), fontsize=FOREST_PT + 1)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def _shown_interval(r) -> tuple[float, float]:
    """The interval a matrix cell shows: the FCR-adjusted one where the row was tested, else the row's own."""
    fcr_low, fcr_high = getattr(r, "fcr_low", float("nan")), getattr(r, "fcr_high", float("nan"))
    if not pd.isna(r.p_value) and not pd.isna(fcr_low) and not pd.isna(fcr_high):
        return float(fcr_low), float(fcr_high)
    return float(r.ci_low), float(r.ci_high)


def matrix(pairwise: pd.DataFrame, probe: str, metric: str, models: list[str], q: float = ALPHA) -> pd.DataFrame:
    """Square table: row model minus column model, ``estimate [low, high]`` with ``*`` when q < ``q``; the
    interval is the FCR-adjusted one of the same procedure (:mod:`stereoprobe.leaderboard.pairwise`), which
    excludes 0 exactly when the cell has a star."""
    g = pairwise[(pairwise["probe"] == probe) & (pairwise["metric"] == metric)]
    cells = {m: {n: None for n in models} for m in models}
    for r in g.itertuples(index=False):
        star = " *" if significant(r.q_value, q) else ""
        lo, hi = _shown_interval(r)
        cells[r.model_a][r.model_b] = f"{r.estimate:+.3g} [{lo:+.3g}, {hi:+.3g}]{star}"
        # 0.0 - x, not -x: a zero difference reads +0, never -0
        cells[r.model_b][r.model_a] = f"{0.0 - r.estimate:+.3g} [{0.0 - hi:+.3g}, {0.0 - lo:+.3g}]{star}"
    used = [m for m in models if any(v is not None for v in cells[m].values())]
    return pd.DataFrame([{"model (row − column)": m, **{n: cells[m][n] for n in used}} for m in used])


#: what a paired figure measures where its name alone does not say (the matrices' captions)
PAIRED_MEANING = {
    "globalbias.score": "mean difference of GlobalBias bias scores over the group x descriptor pairs both models "
                        "scored (a bias score is the mean over templates of the min-max normalised APX; lower = "
                        "the descriptor is more likely for the group's names)",
    "globalbias.flagged": "difference of the counts of pairs flagged by the reference 1% rule",
    "globalbias.significant": "difference of the counts of pairs significant under the stricter test",
    "dbb.mean_s": "mean difference of S over the multiple-choice test instances both models answered",
    "dbb.share_s_ge_20": "difference of the shares of multiple-choice instances with S >= 20",
    "dbb_sg.mean_s": "mean difference of S over the DBB-SG instances (S from the sentence likelihood share, Eq. 2)",
    "dbb_sg.share_s_ge_20": "difference of the shares of DBB-SG instances with S >= 20",
}


def pairwise_legend(pairwise: pd.DataFrame, level: float) -> str:
    """The line above the matrices: which procedure gives the intervals, the p-values and the stars."""
    fcr = pairwise["fcr_level"].dropna() if "fcr_level" in pairwise.columns else pd.Series(dtype=float)
    fcr_text = f"{100 * float(fcr.iloc[0]):.3g}%" if len(fcr) else "1 − Rα/m"
    return (f"Each matrix cell: row model minus column model, with its false-coverage-rate adjusted interval "
            f"(Benjamini & Yekutieli 2005: level 1 − Rα/m = {fcr_text}, R of the m tested rows having "
            f"q < {ALPHA:g}); * = Benjamini–Hochberg q < {ALPHA:g} over the whole pairwise table. The interval and "
            f"the test are one procedure (a cluster-robust t over the probe's clusters; Newcombe's interval for "
            f"StereoTales shares): an interval excludes 0 exactly when the cell has a star. pairwise.csv also "
            f"holds the unadjusted {round(100 * level)}% interval with its unadjusted p-value (p < "
            f"{1 - level:.2g} exactly when it excludes 0). Positive = the row model shows more of the measured "
            f"quantity.")


def _pairwise_section(metrics: pd.DataFrame, pairwise: pd.DataFrame, level: float) -> Section:
    """The model-vs-model section: a matrix per probe and metric, the StereoTales associations compared per
    pair, and every paired comparison (collapsed)."""
    pw = Section("Model vs model (paired on the same items)", anchor="pairwise")
    models = sorted(metrics["model"].unique())
    if pairwise.empty:
        pw.empty("Fewer than two models share the items of any probe: no paired comparison.")
    else:
        pw.text(pairwise_legend(pairwise, level))
        agg = pairwise[~pairwise["metric"].str.startswith("share[")]
        for (probe, metric), _ in agg.groupby(["probe", "metric"], sort=False):
            what = PAIRED_MEANING.get(f"{probe}.{metric}", "")
            pw.table(matrix(pairwise, probe, metric, models), search=False,
                     caption=f"{probe}.{metric}" + (f": {what}" if what else ""))
        per = pairwise[pairwise["metric"].str.startswith("share[")]
        if len(per):
            cnt = per.assign(significant=per["q_value"] < ALPHA).groupby(["model_a", "model_b"]).agg(
                associations=("metric", "size"), significant=("significant", "sum")).reset_index()
            pw.table(cnt, caption="StereoTales: associations compared per pair of models, and those whose conditional "
                                  "share differs (q < 0.05)", search=False)
        pw.raw("<details><summary>all paired comparisons (table)</summary>")
        pw.table(pairwise.sort_values(["probe", "q_value", "metric"]), caption="all paired comparisons", max_rows=500,
                 files=["pairwise.csv", "pairwise.parquet"])
        pw.raw("</details>")
    return pw


def write_leaderboard_report(path: Path, wide: pd.DataFrame, metrics: pd.DataFrame, pairwise: pd.DataFrame,
                             sources: list[tuple[str, str]], level: float, files: list[Path],
                             runs: pd.DataFrame | None = None, version_note: str | None = None) -> Path:
    """Write ``leaderboard.html``: first the comparison table (models x every probe's headline figures, best
    and worst marked, a plain-language line per model), then a forest plot per probe, the model-vs-model
    matrices, the per-probe ranking tables (collapsed), the inputs and the files. ``version_note``: the user's
    note accepting runs of different task versions, shown above the comparison."""
    from stereoprobe.leaderboard.compare import comparison_html
    from stereoprobe.report.demo import demo_reason_of_folder, demo_reason_of_runs

    out = Path(path).parent
    demo = demo_reason_of_folder(out) or (demo_reason_of_runs(runs.to_dict("records")) if runs is not None else None)
    secs: list[Section] = []
    n_models = wide["model"].nunique() if len(wide) else 0
    top = Section("Models compared", anchor="compare")
    if version_note:  # runs of different task versions, ranked side by side at the user's request
        top.note(version_note)
    top.raw(comparison_html(metrics, level, demo=demo is not None))
    top.raw(files_html(["comparison.csv", "comparison.parquet", "leaderboard.csv", "leaderboard.parquet"]))
    top.note(f"{n_models} model(s) from {len(sources)} probe output folder(s). Which differences are established is "
             "tested in 'Model vs model' below; a probe's figures are comparable only between runs of the same "
             "protocol (its report says which).")
    secs.append(top)
    forest = Section("Headline figures per probe", anchor="forest")
    boards = [p for p in PROBE_TITLES if (metrics["probe"] == p).any()]
    for probe in boards:
        fig = _forest(metrics, probe)
        if fig is not None:
            forest.figure(fig, caption=f"{PROBE_TITLES[probe]}: estimate and {round(100 * level)}% interval per model "
                                       "(figures zero or undefined for every model are left out)")
        else:
            forest.empty(f"{PROBE_TITLES[probe]}: every headline figure is zero or undefined for these models: no plot.")
    secs.append(forest)
    secs.append(_pairwise_section(metrics, pairwise, level))
    for probe in boards:
        sec = Section(f"Details: {PROBE_TITLES[probe]}", anchor=f"rank-{probe}")
        pm = metrics[metrics["probe"] == probe]
        names = list(dict.fromkeys(pm["metric"]))
        sec.raw(f"<details><summary>{len(names)} ranking table(s): every figure of this probe per model</summary>")
        for metric in names:
            sec.table(ranking(metrics, probe, metric), caption=f"{probe}.{metric}", search=False)
        sec.raw("</details>")
        sec.raw(files_html(["metrics.csv", "metrics.parquet", "leaderboard.csv", "leaderboard.parquet"]))
        secs.append(sec)
    s = Section("Models and inputs", anchor="inputs")
    s.text(f"{n_models} model(s) from {len(sources)} probe output folder(s). Every figure has a {round(100 * level)}% "
           "interval; pairwise differences are paired on the items both models share, with Benjamini–Hochberg "
           "q-values over all rows of pairwise.csv and FCR-adjusted intervals that agree with them.")
    s.table(pd.DataFrame(sources, columns=["probe", "folder"]), search=False)
    if runs is not None and len(runs):
        s.text("The runs behind each folder, with the model settings their logs recorded (-M model arguments, "
               "--model-role bindings, generation settings): two rows of one model differ by these, not by "
               "their folder names.")
        s.table(runs[["probe", "folder", "model", "logged_model", "task", "settings"]], search=False)
    secs.append(s)
    f = Section("Files", anchor="files")
    f.files(files, base=out, descriptions={
        "comparison": "the comparison table: one row per model, each headline figure with its interval and mark",
        "leaderboard": "one row per model: <probe>.<metric> with _ci_low and _ci_high",
        "metrics": "long form: model, probe, metric, estimate, interval, n, method",
        "pairwise": "paired model-vs-model comparisons: interval and p of one procedure, BH q-values, FCR intervals",
        "runs": "each input folder's runs with their -M model arguments, model roles and generation settings"})
    secs.append(f)
    return write_report(path, "stereoprobe leaderboard", secs, nav=False, demo=demo or "",
                        subtitle="Bias figures of StereoTales, DBB and GlobalBias side by side, computed by stereoprobe")
