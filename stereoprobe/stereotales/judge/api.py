"""The Python API of ``stereoprobe judge-report``: judge logs (+ human ratings, association rows) in, the judge's
tables and report out.

    from stereoprobe.stereotales.judge import JudgeOptions, analyze, write
    report = analyze(["logs/judge"], JudgeOptions(threshold=4.0), out="results/st", human_csv="ratings.csv")
    report.tables["harm_labels"]       # DataFrame per table name (judge.contract.TABLES); nothing written yet
    write(report, "results/st")         # tables + the judge sections in results/st/report.html

:func:`analyze` reads every input (:func:`~stereoprobe.stereotales.judge.ratings.read_judge_ratings`,
:func:`~stereoprobe.stereotales.judge.report.load_judge_inputs`) and computes the tables
(:func:`~stereoprobe.stereotales.judge.report.compute_judge_tables`, no I/O); :func:`write` writes them
(:func:`~stereoprobe.stereotales.judge.report.write_judge_report`) into a temporary folder that replaces the
results in ``out`` at the end, all at once (the judge merges its sections into the associations report of
``out`` when there is one, so it needs ``out`` itself rather than a fresh folder).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stereoprobe.stereotales.judge.ratings import read_judge_ratings
from stereoprobe.stereotales.judge.report import (
    JudgeResult,
    JudgeOptions,
    Step,
    compute_judge_tables,
    load_judge_inputs,
    write_judge_report,
)

__all__ = ["JudgeResult", "JudgeOptions", "analyze", "write"]


def analyze(logs: Sequence[str | Path], options: JudgeOptions = JudgeOptions(), *,
            out: str | Path | None = None, human_csv: str | Path | None = None,
            associations: str | Path | None = None, language_groups: str | Path | None = None,
            upstream_dir: str | Path | None = None, step: Step | None = None,
            progress: Callable[[Any], Any] | None = None) -> JudgeResult:
    """Read judge logs (files or folders, ``inspect eval-set`` folders too) and every other input, validate
    them, and compute the tables (nothing is written). ``human_csv``: human ratings; ``associations``:
    association file (default ``out/associations.csv`` when present); ``language_groups``: marked/unmarked
    groups YAML (default: bundled). ``step(description)`` is called before each long step and
    ``progress(iterable)`` wraps the log reading (both optional). Warnings are in ``report.warnings``."""
    read = read_judge_ratings(logs, progress)
    inputs = load_judge_inputs(read.table, out, human_csv, associations, language_groups, upstream_dir,
                               read.errors)
    report = compute_judge_tables(inputs, options, step)
    report.facts["read"] = {"files": read.files, "superseded": read.superseded, "errors": read.errors,
                            "summary": read.summary}
    return report


def write(report: JudgeResult, out: str | Path, *, step: Step | None = None) -> Path:
    """Write the tables and the report into ``out`` (built beside it, moved into place at the end); return the
    report's path (``out/report.html`` when ``out`` holds an associations table, else
    ``out/judge_report.html``)."""
    from stereoprobe.outputs import atomic_output_dir

    with atomic_output_dir(out) as work:
        if step is not None:
            step("writing tables and report")
        write_judge_report(report, work, out)
    assert report.path is not None
    return Path(report.path)
