"""The reference run's "paper vs stereoprobe" page: ``OUT/paper_vs_stereoprobe/report.html`` with
``comparison.csv``/``.parquet`` (one row per printed item, :mod:`stereoprobe.reference.compare`),
``verdicts.csv``/``.parquet`` (counts per figure) and ``run_info.json``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from stereoprobe import upstream
from stereoprobe.reference.compare import compare_globalbias, verdict_counts
from stereoprobe.reference.figures import paper_figures
from stereoprobe.reference.options import ReferenceOptions
from stereoprobe.report.html import Section, write_report
from stereoprobe.report.run_info import write_run_info
from stereoprobe.tables import write_table

__all__ = ["NO_OUTPUTS", "write_comparison"]

# What the other probes' upstream repositories publish of model outputs (shown on the page and in the docs).
NO_OUTPUTS = {
    "dbb": (
        "Not reproduced. The DBB repository (JP-25/Description-based-Bias-Benchmark @ a43f17fdc691) publishes its "
        "model outputs only as GPT-4o-results.zip (pinned in stereoprobe/upstream_sources.yaml by its git blob id); "
        "the file could not be read when the sources were pinned, so stereoprobe has no reader for its layout and "
        "no test of the paper's tables. Needed: the zip's per-question GPT-4o answers (or the paper's other "
        "models' answers) in a readable layout, mapped to the dbb command's results table."),
    "stereotales": (
        "Not reproduced. The StereoTales repositories (Giskard-AI/stereotales-pipeline, Giskard-AI/flare) publish "
        "the generation seeds, prompts and configurations but no model outputs; the stories themselves are the "
        "Hugging Face dataset giskardai/StereoTales (882 MB, not pinned here). Needed: that dataset's stories and "
        "extracted attributes, pinned and read by the associations command, to reproduce the paper's association "
        "tables."),
}


def _files_table(files: Mapping[str, Path]) -> pd.DataFrame:
    src = upstream.sources()["GlobalBias"]
    figs = paper_figures()
    names = {**figs.apx_models, **figs.profile_models}
    return pd.DataFrame([{"model (as the paper names it)": names[p], "upstream file": p,
                          "repository @ commit": f"{src.repository} @ {src.commit[:12]}", "checksum": src.files[p]}
                         for p in files])


def write_comparison(root: Path, folder: Path, models: Mapping[str, str], files: Mapping[str, Path],
                     options: ReferenceOptions, command: str | None) -> pd.DataFrame:
    """Compare the figures of ``root/globalbias`` and ``root/globalbias_profiles`` with the paper and write the
    page to ``folder``; return the comparison rows."""
    figs = paper_figures()
    apx_model = next(iter(figs.apx_models.values())).replace(" ", "-")
    rows = compare_globalbias(root / "globalbias", root / "globalbias_profiles", apx_model=apx_model,
                              profile_models=models)
    counts = verdict_counts(rows)
    write_table(rows, folder, "comparison")
    write_table(counts, folder, "verdicts")
    total = counts.drop(columns="figure").sum()
    summary = Section("Summary", anchor="summary")
    summary.text(f"{len(rows)} printed items of {figs.paper}: {total.iloc[0]} reproduced exactly, "
                 f"{total.iloc[1]} within the stated tolerance, {total.iloc[2]} differ (the reason column says why), "
                 f"{total.iloc[3]} not run.")
    summary.raw('<p>Reports: <a href="../globalbias/report.html">GlobalBias APX, Llama 3 8B</a> · '
                '<a href="../globalbias_profiles/report.html">character profiles, four models</a> · '
                '<a href="../leaderboard/leaderboard.html">leaderboard</a></p>')
    summary.table(counts, caption="rows per figure and verdict")
    sections = [summary]
    for fig in figs.figures:
        part = rows[rows["figure"] == fig.label].drop(columns="figure")
        s = Section(f"{fig.label}: paper vs stereoprobe", anchor=fig.id)
        s.text(f"{fig.title}. Reproduced from {fig.output}. "
               + ("Compared exactly (at the printed precision)." if fig.tolerance == 0 else
                  f"Tolerance {fig.tolerance:g}: {fig.tolerance_reason}."))
        s.table(part, search=len(part) > 15)
        sections.append(s)
    for probe, text in NO_OUTPUTS.items():
        sections.append(Section(f"{'DBB' if probe == 'dbb' else 'StereoTales'}: no upstream model outputs",
                                anchor=probe).text(text))
    sections.append(Section("Upstream files", anchor="files").table(_files_table(files)).text(
        "Each file was verified against its checksum in stereoprobe/upstream_sources.yaml and copied under "
        "upstream/, named by the model, before the steps ran."))
    write_report(folder / "report.html", "Reference: the GlobalBias paper vs stereoprobe", sections,
                 subtitle="every figure the paper prints, next to stereoprobe's value from the published outputs")
    extra = {"command": command} if command else {}
    write_run_info(folder, "reference", models=[apx_model, *models.values()], settings=options.settings(),
                   inputs=[str(p) for p in files.values()], **extra)
    return rows
