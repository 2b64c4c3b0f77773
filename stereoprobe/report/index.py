"""The landing page ``DIR/index.html``: every probe report under DIR with its models, date, settings and tables.

``make demo`` ends with ``stereoprobe index results/demo``. Per report folder the page reads the
``run_info.json`` its post-processing command wrote (:mod:`stereoprobe.report.run_info`); where there is
none, the probe is the registered probe whose marker tables the folder holds (:mod:`stereoprobe.probes`), the
models come from a ``model`` column of the folder's tables and the date from the report file. Reports are
listed probe by probe, in the registered probes' display order (unknown folders last).
"""

from __future__ import annotations

import datetime as _dt
import html
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.probes import ProbeDescriptor, registered
from stereoprobe.report.html import MISSING, Section, empty_note, write_report
from stereoprobe.report.run_info import read_run_info

TABLE_SUFFIXES = (".csv", ".parquet")
_MAX_SETTINGS = 12


def collect_reports(root: Path) -> list[tuple[Path, list[Path]]]:
    """Every ``*.html`` report under ``root`` (except the index itself) with the table files beside it."""
    out: list[tuple[Path, list[Path]]] = []
    for report in sorted(root.rglob("*.html")):
        if report == root / "index.html":
            continue
        tables = sorted(p for p in report.parent.iterdir() if p.suffix in TABLE_SUFFIXES and p.is_file())
        out.append((report, tables))
    return out


def _models_from_tables(tables: list[Path]) -> list[str]:
    """Distinct values of a ``model`` column in the folder's CSV tables (header read first, cheaply)."""
    models: set[str] = set()
    for t in tables:
        if t.suffix != ".csv":
            continue
        try:
            if "model" not in pd.read_csv(t, nrows=0).columns:
                continue
            models.update(str(m) for m in pd.read_csv(t, usecols=["model"])["model"].dropna().unique())
        except (OSError, ValueError, pd.errors.ParserError):
            continue
        if models:
            break
    return sorted(models)


def probe_of(name: object, tables: list[Path]) -> ProbeDescriptor | None:
    """The registered probe a report folder belongs to: the one named ``name`` (its ``run_info.json``), else
    the one whose marker tables the folder holds; None when neither."""
    probes = registered()
    for d in probes:
        if name and name in (d.name, d.written_as):
            return d
    stems = {t.stem for t in tables}
    for d in probes:
        if d.tables and set(d.marker_tables) <= stems:
            return d
    return None


def report_info(report: Path, tables: list[Path]) -> dict[str, object]:
    """Probe, models, date and settings of one report (``run_info.json`` first, then the tables); ``order``
    sorts the reports probe by probe."""
    info = read_run_info(report.parent)
    models = info["models"] or _models_from_tables(tables)
    created = info["created"]
    if not created:
        created = _dt.datetime.fromtimestamp(report.stat().st_mtime, _dt.timezone.utc).replace(microsecond=0).isoformat()
    probe = probe_of(info["probe"], tables)
    return {"probe": probe.title if probe else (info["probe"] or report.parent.name), "models": models,
            "created": created, "settings": info["settings"], "order": probe.order if probe else 10**6}


def _settings_html(settings: dict[str, object]) -> str:
    if not settings:
        return MISSING
    items = list(settings.items())
    shown = "; ".join(f"{html.escape(str(k))}={html.escape(str(v))}" for k, v in items[:_MAX_SETTINGS])
    more = f"; … ({len(items) - _MAX_SETTINGS} more in run_info.json)" if len(items) > _MAX_SETTINGS else ""
    return shown + more


def _breakable(text: str) -> str:
    """Escaped ``text`` that may wrap after ``/`` and ``_`` (long folder and table names in narrow columns)."""
    return html.escape(text).replace("/", "/<wbr>").replace("_", "_<wbr>")


def _tables_html(tables: list[Path], root: Path) -> str:
    """One entry per table, its formats as links: ``summary (csv, parquet)``; :data:`MISSING` when none."""
    by_stem: dict[str, list[Path]] = {}
    for t in tables:
        by_stem.setdefault(t.stem, []).append(t)
    items = []
    for stem, paths in by_stem.items():
        links = ", ".join(
            f'<a href="{html.escape(p.relative_to(root).as_posix(), quote=True)}">{html.escape(p.suffix[1:])}</a>'
            for p in paths
        )
        items.append(f"{_breakable(stem)} ({links})")
    return "<br>".join(items) if items else MISSING


def build_index(root: Path) -> Path:
    """Write ``root/index.html`` linking every report and table file under ``root``; return its path."""
    root = Path(root)
    reports = collect_reports(root)
    if not reports:
        raise InputError(f"index: no HTML report found under {root}; run the probes' post-processing first")
    section = Section("Reports", anchor="reports")
    rows = []
    infos = [(report, tables, report_info(report, tables)) for report, tables in reports]
    infos.sort(key=lambda x: (x[2]["order"], x[0].relative_to(root).as_posix()))  # type: ignore[operator]
    for report, tables, info in infos:
        rel = report.relative_to(root).as_posix()
        models = info["models"]
        assert isinstance(models, list)
        settings = info["settings"]
        assert isinstance(settings, dict)
        rows.append(
            "<tr>"
            f'<td><a href="{html.escape(rel, quote=True)}">{_breakable(rel)}</a></td>'
            f"<td>{html.escape(str(info['probe']))}</td>"
            f"<td>{html.escape(', '.join(models)) if models else MISSING}</td>"
            f"<td>{html.escape(str(info['created']))}</td>"
            f"<td>{_settings_html(settings)}</td>"
            f"<td>{_tables_html(tables, root)}</td>"
            "</tr>"
        )
    head = "".join(f'<th class="sortkey">{h}</th>' for h in ("report", "probe", "models", "date (UTC)", "settings", "tables"))
    section.raw(
        '<div class="table-wrap" style="max-height:none">'  # the landing table is not capped to a scroll box
        f'<table id="index-reports" class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>"
    )
    if not any(t for _, t in reports):
        section.raw(empty_note("No table files (CSV or Parquet) sit beside these reports."))
    return write_report(root / "index.html", f"stereoprobe results — {root.name}", [section])
