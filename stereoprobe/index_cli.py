"""``stereoprobe index DIR``: a landing page linking every probe report found under DIR.

``make demo`` ends with it, so ``results/demo/index.html`` opens the StereoTales, DBB and GlobalBias reports
and lists the tables each step wrote.
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

from stereoprobe.report.html import Section, write_report


def collect_reports(root: Path) -> list[tuple[Path, list[Path]]]:
    """Every ``*.html`` report under ``root`` (except the index itself) with the CSV tables beside it."""
    out: list[tuple[Path, list[Path]]] = []
    for report in sorted(root.rglob("*.html")):
        if report == root / "index.html":
            continue
        tables = sorted(report.parent.glob("*.csv"))
        out.append((report, tables))
    return out


def build_index(root: Path) -> Path:
    reports = collect_reports(root)
    if not reports:
        raise FileNotFoundError(f"no HTML report found under {root}; run the probes' post-processing first")
    section = Section("Reports", anchor="reports")
    items = []
    for report, tables in reports:
        rel = report.relative_to(root).as_posix()
        links = ", ".join(
            f'<a href="{html.escape(t.relative_to(root).as_posix(), quote=True)}">{html.escape(t.name)}</a>'
            for t in tables
        )
        items.append(
            f'<li><a href="{html.escape(rel, quote=True)}">{html.escape(rel)}</a>'
            + (f'<br><span class="meta">tables: {links}</span>' if links else "")
            + "</li>"
        )
    section.raw("<ul>" + "\n".join(items) + "</ul>")
    return write_report(root / "index.html", f"stereoprobe results — {root.name}", [section])


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="write DIR/index.html linking every report and table under DIR")
    p.add_argument("dir", type=Path)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    print(build_index(args.dir))
    return 0
