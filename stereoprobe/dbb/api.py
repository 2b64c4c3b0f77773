"""The Python API of ``stereoprobe dbb``: eval logs in, DBB's tables (and report) out.

    from stereoprobe.dbb import DBBOptions, analyze, write
    result = analyze(["logs/dbb"], DBBOptions(threshold=20))   # read + compute, nothing written
    result.tables["summary"]                                    # DataFrame per table name (dbb.contract.TABLES)
    write(result, "results/dbb")                                # CSV + Parquet, report.html, run_info.json

The steps: :func:`read` (eval logs and lm-eval samples through :mod:`stereoprobe.inputs`, optional
term-based runs), :func:`compute` (pure: the tables of :func:`stereoprobe.dbb.results.compute_tables` and the
console lines) and :func:`write` (the only step that touches the output folder).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from stereoprobe.dbb import contract as C
from stereoprobe.dbb import stats as ST
from stereoprobe.dbb.results import Progress, compute_tables, read_responses, run_table, summary_lines
from stereoprobe.errors import InputError

__all__ = ["DBBInputs", "DBBOptions", "DBBResult", "analyze", "compute", "read", "write"]


@dataclass(frozen=True)
class DBBOptions:
    """Settings of the statistics: ``threshold`` on S of a biased instance (paper: 20), bootstrap draws and
    seed of the intervals, ``top`` associations per category."""

    threshold: float = ST.THRESHOLD
    n_boot: int = 2000
    seed: int = 0
    top: int = 5

    def __post_init__(self) -> None:
        if not 0 <= self.threshold <= 100:
            raise InputError(f"threshold must lie in [0, 100], got {self.threshold}")
        if self.n_boot < 1 or self.top < 0:
            raise InputError(f"n_boot must be >= 1 and top >= 0, got n_boot={self.n_boot}, top={self.top}")


@dataclass
class DBBInputs:
    """What :func:`read` read: one row per scored response, one row per run, the input layer's summary line
    and the term-based comparison table (None unless asked)."""

    responses: pd.DataFrame
    runs: pd.DataFrame
    read_summary: str = ""
    sources: list[str] = field(default_factory=list)
    term_based: pd.DataFrame | None = None
    partial: list[str] = field(default_factory=list)  # a console line per partial run (ReadStats.partial_lines)


@dataclass
class DBBResult:
    """Output of :func:`compute`: ``tables`` (``responses``, ``runs``, ``questions``, ``instances``,
    ``incomplete``, ``summary``, ``top_associations``, and ``term_based`` when given), the console ``lines``,
    and what :func:`write` records in ``run_info.json`` and the report."""

    tables: dict[str, pd.DataFrame]
    lines: list[str]
    options: DBBOptions = DBBOptions()
    read_summary: str = ""
    sources: list[str] = field(default_factory=list)


def read(inputs: Sequence[str | Path], *, term_based: Sequence[str | Path] | None = None,
         progress: Progress | None = None) -> DBBInputs:
    """Read dbb/dbb_sg logs (and lm-eval samples of dbb_mc / dbb_sg); ``term_based``: lm-eval results files or
    inspect logs of BBQ / CrowS-Pairs / StereoSet runs, shown next to DBB's figures (paper Tables 1 and 6;
    :mod:`stereoprobe.dbb.term_based`). Bad input raises :class:`~stereoprobe.errors.InputError`."""
    from stereoprobe.inputs import ReadStats

    stats = ReadStats()
    term = None
    if term_based:
        from stereoprobe.dbb.term_based import read_term_based

        term = read_term_based(term_based)
    resp, runs = read_responses(inputs, stats, progress)
    if resp.empty and runs.empty:
        raise InputError(f"no scored dbb/dbb_sg samples in {', '.join(map(str, inputs))}")
    return DBBInputs(resp, runs, stats.summary(), [str(x) for x in inputs], term, stats.partial_lines())


def compute(data: DBBInputs, options: DBBOptions = DBBOptions(), *, progress: Progress | None = None) -> DBBResult:
    """Every table and the console lines from what :func:`read` returned (no I/O)."""
    tables = compute_tables(data.responses, options.threshold, options.n_boot, options.seed, options.top,
                            runs=data.runs, progress=progress)
    runs = run_table(data.runs, tables)
    if data.term_based is not None:
        tables["term_based"] = data.term_based
    lines = summary_lines(tables, runs, options.threshold) + list(data.partial)
    return DBBResult({"responses": data.responses, "runs": runs, **tables}, lines, options, data.read_summary,
                     list(data.sources))


def analyze(inputs: Sequence[str | Path], options: DBBOptions = DBBOptions(), *,
            term_based: Sequence[str | Path] | None = None, progress: Progress | None = None) -> DBBResult:
    """:func:`read` then :func:`compute`: what ``stereoprobe dbb`` calls before :func:`write`."""
    return compute(read(inputs, term_based=term_based, progress=progress), options, progress=progress)


def write(result: DBBResult, out: str | Path) -> Path:
    """Write the tables (CSV + Parquet), ``report.html`` and ``run_info.json`` into ``out`` (created; the
    command line passes the temporary folder of ``atomic_output_dir``); return ``out``."""
    from stereoprobe.dbb.report import write_dbb_report
    from stereoprobe.report.run_info import write_run_info
    from stereoprobe.tables import write_table

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = dict(result.tables)
    responses, runs = tables.pop("responses"), tables.pop("runs")
    write_table(responses.drop(columns=["expected_epochs"], errors="ignore"), out, "responses")
    write_table(runs, out, "runs")
    for name, df in tables.items():
        write_table(df, out, name)
    warnings = [f"{r.model} [{r.variant}]: {r.protocol}" for r in runs.itertuples(index=False)
                if getattr(r, "protocol", "")]  # runs departing from the paper's protocol (results.read_responses)
    write_run_info(out, probe=C.TASK_MCQ, models=sorted(set(runs["model"])),
                   settings={**asdict(result.options), "warnings": warnings}, inputs=result.sources)
    # after run_info.json: the page reads from it whether it was built from demo settings (DEMO banner)
    write_dbb_report(out / "report.html", runs, tables, result.options.threshold, read_summary=result.read_summary)
    return out
