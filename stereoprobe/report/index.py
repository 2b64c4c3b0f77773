"""The landing page ``DIR/index.html``: every probe report under DIR with its models, date, settings and a link
to the folder of its tables.

``make demo`` ends with ``stereoprobe index results/demo``. Per report folder the page reads the
``run_info.json`` its post-processing command wrote (:mod:`stereoprobe.report.run_info`); where there is
none, the probe is the registered probe whose marker tables the folder holds (:mod:`stereoprobe.probes`), the
models come from a ``model`` column of the folder's tables and the date from the report file. Reports are
listed probe by probe, in the registered probes' display order (the reference's paper-vs-stereoprobe
comparison first, unknown folders last), each with its headline figures read from the tables it wrote
(:mod:`stereoprobe.report.headlines`); a report built from demo settings is marked DEMO and puts the DEMO
banner on the page (:mod:`stereoprobe.report.demo`).

Only what lies inside DIR is listed: a report or table that is a symbolic link to a file outside DIR (``/``,
``/etc/passwd``), or that sits in a linked folder outside it, is left out. ``DIR/index.html`` is replaced only
when stereoprobe wrote it (its :data:`MARKER`, or the reports table of an earlier version); a page of the
user's own is refused with one line. The page is written beside and renamed over (a failed write leaves the
earlier page).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import os
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.probes import ProbeDescriptor, registered
from stereoprobe.outputs import atomic_output_file
from stereoprobe.report.html import MISSING, Section, empty_note, render_report
from stereoprobe.report.run_info import read_run_info
from stereoprobe.redact import redact_html
from stereoprobe.tables import csv_value

TABLE_SUFFIXES = (".csv", ".parquet")
INDEX = "index.html"
#: written into every index page: ``index`` replaces only a page that holds it
MARKER = '<meta name="generator" content="stereoprobe index">'
_EARLIER_MARKER = '<table id="index-reports"'  # the pages of versions before the marker
_MAX_SETTINGS = 12
MAX_FOLDERS = 20_000  # folders walked below DIR at most (a results tree has tens; a disk has millions)


#: how the headline intervals were computed: one interval per figure, read from the report's own tables
INTERVALS_NOTE = (
    "Headline intervals (95%) are read from the tables each report wrote, so the report, its CSV, the leaderboard "
    "and this page show the same one. Counts: exact Poisson (Garwood), widened to a cluster bootstrap where that "
    "reaches further (DBB: over question templates; GlobalBias flagged pairs: over descriptors; GlobalBias "
    "significant pairs: over descriptors with Benjamini-Hochberg re-applied in each draw, which can reach further "
    "than the flagged pairs' interval at the same count). Shares and refusal rates: Wilson. Means and MRR: "
    "cluster bootstrap; a figure without an interval here has none in its tables.")


def _inside(path: Path, real_root: Path) -> bool:
    """Whether ``path``, its symbolic links resolved, lies inside ``real_root`` (an already resolved folder)."""
    try:
        return path.resolve().is_relative_to(real_root)
    except (OSError, RuntimeError):  # a link loop
        return False


def _html_files(root: Path) -> list[Path]:
    """The ``*.html`` files below ``root``, dot folders left out; an output folder kept as a link to its
    version (:func:`stereoprobe.output_paths.version_link_target`) is listed under its own name."""
    from stereoprobe.output_paths import version_link_target

    found: list[Path] = []

    def unreadable(exc: OSError) -> None:  # a subfolder that cannot be listed is reported, never skipped
        raise InputError(f"{exc.filename}: folder cannot be read ({(exc.strerror or str(exc)).lower()})")

    for n, (folder, dirs, files) in enumerate(os.walk(root, onerror=unreadable, followlinks=True)):
        if n >= MAX_FOLDERS:
            raise InputError(f"index: {root} holds more than {MAX_FOLDERS:,} folders; index the folder of the "
                             "probes' results (e.g. results/), not a whole disk")
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and (
            not os.path.islink(os.path.join(folder, d)) or version_link_target(os.path.join(folder, d))))
        found += [Path(folder) / f for f in files if f.endswith(".html")]
    return found


def collect_reports(root: Path) -> list[tuple[Path, list[Path]]]:
    """Every ``*.html`` report under ``root`` (except the index itself) with the table files beside it; a
    report or table whose real path lies outside ``root`` (a symbolic link out of it) is left out."""
    real_root = root.resolve()
    out: list[tuple[Path, list[Path]]] = []
    for report in sorted(_html_files(root)):
        if report == root / INDEX or not report.is_file() or not _inside(report, real_root):
            continue
        tables = sorted(p for p in report.parent.iterdir()
                        if p.suffix in TABLE_SUFFIXES and p.is_file() and _inside(p, real_root))
        out.append((report, tables))
    return out


def check_index_ours(page: Path) -> None:
    """Raise :class:`InputError` when ``page`` exists and is not an index page stereoprobe wrote (the user's
    own ``index.html``, a symbolic link, a folder)."""
    if not (page.exists() or page.is_symlink()):
        return
    if page.is_symlink() or not page.is_file():
        raise InputError(f"{page}: exists and is not an index page stereoprobe wrote (a link or a folder); "
                         "move it away or index another folder")
    with page.open("rb") as f:
        head = f.read(1 << 16).decode("utf-8", "replace")
    if MARKER not in head and _EARLIER_MARKER not in head:
        raise InputError(f"{page}: exists and was not written by stereoprobe index; it is left as it is (move "
                         "it away to index this folder)")


def _models_from_tables(tables: list[Path]) -> list[str]:
    """Distinct values of a ``model`` column in the folder's CSV tables (header read first, cheaply)."""
    models: set[str] = set()
    for t in tables:
        if t.suffix != ".csv":
            continue
        try:
            if "model" not in pd.read_csv(t, nrows=0).columns:
                continue
            column = pd.read_csv(t, usecols=["model"])["model"].dropna().unique()
            models.update(str(csv_value(m)) for m in column)
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


def report_info(report: Path, tables: list[Path], root: Path | None = None) -> dict[str, object]:
    """Probe, models, date and settings of one report (``run_info.json`` first, then the tables); ``order``
    sorts the reports probe by probe."""
    info = read_run_info(report.parent)
    models = info["models"] or _models_from_tables(tables)
    created = info["created"]
    if not created:
        created = _dt.datetime.fromtimestamp(report.stat().st_mtime, _dt.timezone.utc).replace(microsecond=0).isoformat()
    probe = probe_of(info["probe"], tables)
    from stereoprobe.report.demo import demo_reason
    from stereoprobe.report.headlines import headline_text

    # the paper-vs-stereoprobe comparison leads the reference output's index
    order = -1 if info["probe"] == "reference" else probe.order if probe else 10**6
    return {"probe": probe.title if probe else (info["probe"] or report.parent.name), "models": models,
            "created": created, "settings": info["settings"], "order": order, "model_args": _model_args(info),
            "headline": headline_text(report.parent, root), "demo": demo_reason(info["raw"])}


def _model_args(info: dict[str, object]) -> str:
    """The runs' model arguments (``-M k=v``), so two reports of one model run with different ``-M`` (the
    demo's GlobalBias with and without ``score_first_token``) are told apart. Only values known harmless are
    shown (booleans and numbers, under a key of letters, digits and underscores); any other is ``***``."""
    from stereoprobe.redact import redact_text

    runs = info.get("runs") or []
    assert isinstance(runs, list)
    args = sorted({f"-M {k}={json.dumps(v) if isinstance(v, (bool, int, float)) else '***'}" for run in runs
                   for k, v in (run.get("model_args") or {}).items() if str(k).isidentifier()})
    return redact_text("; ".join(args))


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


def _tables_html(folder: Path, tables: list[Path], root: Path) -> str:
    """A link to the report's folder with its table count (``dbb/ (12 tables)``): the tables stay one click
    away without making each row a list of every file; :data:`MISSING` when the folder holds none."""
    stems = {t.stem for t in tables}
    if not stems:
        return MISSING
    rel = folder.relative_to(root).as_posix()
    href = "./" if rel == "." else f"{rel}/"
    return (f'<a href="{html.escape(href, quote=True)}">{_breakable(href)}</a> '
            f"({len(stems)} table{'s' if len(stems) != 1 else ''})")


def build_index(root: Path) -> Path:
    """Write ``root/index.html`` linking every report under ``root`` and the folder of its tables; return its path. An
    ``index.html`` that stereoprobe did not write is refused (:func:`check_index_ours`)."""
    root = Path(root)
    check_index_ours(root / INDEX)
    reports = collect_reports(root)
    if not reports:
        raise InputError(f"index: no HTML report found under {root}; run the probes' post-processing first")
    section = Section("Reports", anchor="reports")
    rows = []
    infos = [(report, tables, report_info(report, tables, root)) for report, tables in reports]
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
            f"<td>{html.escape(str(info['probe']))}{' <b>DEMO</b>' if info['demo'] else ''}</td>"
            f"<td>{html.escape(str(info['headline']))}</td>"
            f"<td>{html.escape(', '.join(models)) if models else MISSING}</td>"
            f"<td>{html.escape(str(info['created']))}</td>"
            f"<td>{'runs: ' + html.escape(str(info['model_args'])) + '; ' if info['model_args'] else ''}"
            f"{_settings_html(settings)}</td>"
            f"<td>{_tables_html(report.parent, tables, root)}</td>"
            "</tr>"
        )
    head = "".join(f'<th class="sortkey">{h}</th>' for h in ("report", "probe", "headline figures", "models",
                                                             "date (UTC)", "settings", "tables"))
    section.raw(
        '<div class="table-wrap" style="max-height:none">'  # the landing table is not capped to a scroll box
        f'<table id="index-reports" class="sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>"
    )
    section.note(INTERVALS_NOTE)
    if not any(t for _, t in reports):
        section.raw(empty_note("No table files (CSV or Parquet) sit beside these reports."))
    page = root / INDEX
    demo = next((str(i["demo"]) for _, _, i in infos if i["demo"]), None)  # any demo report: the page says so
    text = render_report(f"stereoprobe results — {root.name}", [section], None, True, demo)
    text = text.replace("<meta charset='utf-8'>", f"<meta charset='utf-8'>{MARKER}", 1)
    with atomic_output_file(page, inputs=[]) as tmp:
        tmp.write_text(redact_html(text), encoding="utf-8")  # no credential in a folder name or setting
    return page
