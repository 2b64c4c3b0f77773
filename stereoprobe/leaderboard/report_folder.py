"""How the index page reads the headline figures of a leaderboard folder (models compared, paired differences
below the pairwise alpha) and of a probe's output folder (the boards' headline metrics per model, as the
leaderboard computes them from that folder's tables alone, without bootstrap draws) and of a harm judge's
folder (harmful share and mean harm per judging model): three :class:`stereoprobe.probes.ReportFolder` kinds,
found by this module's file name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stereoprobe.probes import ReportFolder, register_report_folder, registered
from stereoprobe.report.headlines import MAX_MODELS, figure_text, folder_table, number_text

__all__ = ["judge_headline", "leaderboard_headline", "probe_headline"]


def leaderboard_headline(folder: Path) -> str | None:
    """Models compared and paired differences with q below the pairwise alpha; None when ``folder`` holds no
    ``leaderboard`` (with a ``model`` column) and ``pairwise`` tables."""
    from stereoprobe.leaderboard.pairwise import ALPHA

    wide, pairwise = folder_table(folder, "leaderboard"), folder_table(folder, "pairwise")
    if wide is None or pairwise is None or "model" not in wide.columns:
        return None
    tested = pairwise[pairwise["p_value"].notna()] if "p_value" in pairwise.columns else pairwise.iloc[0:0]
    sig = int((tested["q_value"] < ALPHA).sum()) if "q_value" in tested.columns else 0
    return (f"{wide['model'].nunique()} models compared; {sig} of {len(tested)} paired differences with "
            f"q < {ALPHA:g}")


def _probe_metrics(folder: Path) -> pd.DataFrame | None:
    """The headline figures of the probe tables in ``folder`` itself (no subfolder, no link out of it), with
    the settings of its ``run_info.json`` (DBB's threshold, GlobalBias' alpha), without bootstrap draws; None
    when ``folder`` holds no probe's tables."""
    from stereoprobe.leaderboard.headline import headline_table
    from stereoprobe.leaderboard.sources import TABLES, Sources, probes_in, read_table
    from stereoprobe.probes import LeaderboardOptions
    from stereoprobe.report.run_info import read_run_info

    probes = probes_in(folder)
    if not probes:
        return None
    src = Sources()
    for probe in probes:
        src.tables[probe] = {n: df for n in TABLES[probe] if (df := read_table(folder, probe, n)) is not None}
        src.folders.append((probe, str(folder)))
    recorded = read_run_info(folder)["settings"]
    settings = {k: float(recorded[k]) if isinstance(recorded.get(k), (int, float)) else v
                for d in registered() for k, v in d.setting_defaults.items()}
    return headline_table(src, LeaderboardOptions(n_boot=0, settings=settings))


def probe_headline(folder: Path) -> str | None:
    """Per model (the first :data:`~stereoprobe.report.headlines.MAX_MODELS`), each board's headline metrics
    with their intervals; None when ``folder`` holds no probe's tables."""
    metrics = _probe_metrics(folder)
    if metrics is None:
        return None
    titles = {(b.name, m.name): f"{b.title.split(':')[0].strip()} {m.title}"
              for d in registered() for b in d.boards for m in b.headline}
    shown = metrics.loc[[(p, m) in titles for p, m in zip(metrics["probe"], metrics["metric"])]]
    if shown.empty and folder_table(folder, "judge_summary") is not None:
        return None  # a judge-only folder (no board of its own): judge_headline reads it
    parts = []
    models = sorted(shown["model"].astype(str).unique())
    for model in models[:MAX_MODELS]:
        cells = []
        for r in shown[shown["model"].astype(str) == model].itertuples(index=False):
            est = figure_text(r.estimate, r.metric)
            low, high = figure_text(r.ci_low, r.metric, True), figure_text(r.ci_high, r.metric, True)
            if est == "–":
                continue
            ci = f" [{low}, {high}]" if low != "–" and high != "–" else ""
            cells.append(f"{titles[(r.probe, r.metric)]} {est}{ci}")
        if cells:
            parts.append(f"{model}: " + "; ".join(cells))
    if len(models) > MAX_MODELS:
        parts.append(f"… and {len(models) - MAX_MODELS} more models")
    return " | ".join(parts) if parts else "no headline figure defined for these runs"


def judge_headline(folder: Path) -> str | None:
    """Per judging model (the first :data:`~stereoprobe.report.headlines.MAX_MODELS`) of a ``judge-report``
    folder: its ``headline`` as the ``judge_summary`` table holds it (the share of associations it labelled
    harmful and its mean harm rating (1-5), or "not established" when too few answers parsed), else those two
    columns; None when ``folder`` holds no such table."""
    summary = folder_table(folder, "judge_summary")
    if summary is None or "evaluator" not in summary.columns:
        return None
    parts = []
    for r in summary.head(MAX_MODELS).to_dict("records"):
        if isinstance(r.get("headline"), str) and r["headline"]:  # the judge report's own headline (its rule)
            parts.append(f"{r['evaluator']}: {r['headline']}")
            continue
        cells = [f"{label} {number_text(r.get(col))}" for col, label in
                 (("harmful_share", "harmful share"), ("mean_harm", "mean harm (1-5)")) if col in r]
        n = r.get("associations")
        rated = f" of {int(n)} associations" if isinstance(n, (int, float)) and n == n else ""
        parts.append(f"{r['evaluator']}: " + "; ".join(cells) + rated)
    if len(summary) > MAX_MODELS:
        parts.append(f"… and {len(summary) - MAX_MODELS} more models")
    return " | ".join(parts) if parts else "no judged association"


register_report_folder(ReportFolder("leaderboard", leaderboard_headline, order=20))
register_report_folder(ReportFolder("probes", probe_headline, order=90))
register_report_folder(ReportFolder("judge", judge_headline, order=95))
