"""Shared report blocks: links only where asked, one missing-value notation, search on long tables, empty notes,
file links, run_info.json, the index page. HTML is checked by parsing it (html.parser)."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stereoprobe.report.html import MISSING, Section, empty_note, format_value, plot_is_empty, table_html, write_report
from stereoprobe.report.index import build_index
from stereoprobe.report.run_info import RUN_INFO, read_run_info, write_run_info


class _Doc(HTMLParser):
    """Collects links, table cells (text per td), inputs and classes of a document."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self.cells: list[str] = []
        self.inputs: list[dict[str, str | None]] = []
        self.classes: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self._href: str | None = None
        self._text: list[str] = []
        self._in_td = False
        self._cell: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("class"):
            self.classes.extend(str(a["class"]).split())
        if tag == "a":
            self._href, self._text = a.get("href"), []
        elif tag == "td":
            self._in_td, self._cell = True, []
        elif tag == "input":
            self.inputs.append(a)
        elif tag in {"script", "link", "img"}:
            self.scripts.append(a)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append(("".join(self._text), self._href))
            self._href = None
        elif tag == "td":
            self.cells.append("".join(self._cell))
            self._in_td = False

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)
        if self._in_td:
            self._cell.append(data)


def parse(text: str) -> _Doc:
    d = _Doc()
    d.feed(text)
    return d


def test_links_only_from_named_columns() -> None:
    df = pd.DataFrame({"model": ["https://evil.example/x", "m2"], "page": ["https://ok.example/a", ("docs", "b.html")]})
    doc = parse(table_html(df, links=["page"]))
    assert doc.links == [("https://ok.example/a", "https://ok.example/a"), ("docs", "b.html")]
    assert "https://evil.example/x" in doc.cells  # shown as text, not as a link
    with pytest.raises(ValueError, match="not columns"):
        table_html(df, links=["nope"])


def test_one_missing_notation() -> None:
    df = pd.DataFrame({"a": [np.nan, 1.5], "b": pd.array([pd.NA, 2], dtype="Int64"), "c": [None, "x"],
                       "d": [pd.NaT, pd.Timestamp("2024-01-01")]})
    doc = parse(table_html(df))
    assert doc.cells[:4] == [MISSING] * 4
    assert "<NA>" not in table_html(df) and "nan" not in doc.cells and "NaT" not in doc.cells
    assert format_value(float("nan")) == MISSING and format_value(pd.NA) == MISSING and format_value(None) == MISSING
    assert format_value(0.123456) == "0.1235"


def test_long_tables_get_search_and_filters_short_ones_not() -> None:
    long = parse(table_html(pd.DataFrame({"x": range(40), "y": ["a"] * 40})))
    assert "searchable" in long.classes
    assert sum(1 for i in long.inputs if i.get("type") == "search") == 1 + 2  # box + one filter per column
    short = parse(table_html(pd.DataFrame({"x": range(5)})))
    assert "searchable" not in short.classes and not short.inputs


def test_empty_table_and_empty_plot_give_a_note() -> None:
    out = table_html(pd.DataFrame({"x": []}), caption="top words")
    assert "empty-note" in out and "top words: no rows." in out and "<table" not in out
    assert parse(empty_note("No instance reaches S ≥ 20.")).classes == ["empty-note"]
    assert plot_is_empty([]) and plot_is_empty([np.nan, None]) and plot_is_empty(pd.Series([0.0, 0, np.nan]))
    assert plot_is_empty([0, 0], [0.0])
    assert not plot_is_empty([0.0, 0.2]) and not plot_is_empty(pd.DataFrame({"a": [np.nan, 3]}))


def test_files_section_links_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "scores.csv").write_text("a\n1\n")
    (tmp_path / "scores.parquet").write_bytes(b"PAR1")
    s = Section("Files").files([tmp_path / "scores.csv", tmp_path / "scores.parquet", tmp_path / "gone.csv"],
                               base=tmp_path, descriptions={"scores": "one row per model"})
    out = write_report(tmp_path / "report.html", "R", [s]).read_text()
    doc = parse(out)
    assert ("scores.csv", "scores.csv") in doc.links and ("scores.parquet", "scores.parquet") in doc.links
    assert all(href != "gone.csv" for _, href in doc.links)  # a missing file is listed, not linked
    assert "gone.csv" in doc.cells and doc.cells.count("one row per model") == 2
    for _, href in doc.links:  # every link resolves from the report's folder
        if not href.startswith("#"):
            assert (tmp_path / href).is_file()


def test_table_file_links_and_sticky_first_column(tmp_path: Path) -> None:
    out = table_html(pd.DataFrame({"x": [1]}), files=[tmp_path / "t.csv", tmp_path / "t.parquet"], base=tmp_path)
    assert parse(out).links == [("t.csv", "t.csv"), ("t.parquet", "t.parquet")]
    page = write_report(tmp_path / "r.html", "R", [Section("S").raw(out)]).read_text()
    assert "td:first-child" in page and "position:sticky" in page and "overflow-wrap" in page
    assert not [a for a in parse(page).scripts if a.get("src") or a.get("href")]  # no external assets


def test_empty_section_gets_a_note(tmp_path: Path) -> None:
    page = write_report(tmp_path / "r.html", "R", [Section("Nothing")]).read_text()
    assert "empty-note" in parse(page).classes


def test_run_info_round_trip_and_stereotales_config_key(tmp_path: Path) -> None:
    write_run_info(tmp_path, probe="dbb", models=["b", "a", "a"], settings={"threshold": 0.2}, inputs=["logs/"])
    info = read_run_info(tmp_path)
    assert info["probe"] == "dbb" and info["models"] == ["a", "b"] and info["settings"] == {"threshold": 0.2}
    assert info["created"] and info["created"].endswith("+00:00")
    other = tmp_path / "st"
    other.mkdir()
    (other / RUN_INFO).write_text(json.dumps({"models": ["m"], "config": {"alpha": 0.05}}))
    assert read_run_info(other)["settings"] == {"alpha": 0.05}
    (other / RUN_INFO).write_text("{broken")
    assert read_run_info(other)["models"] == []


def _demo_tree(root: Path) -> None:
    a = root / "dbb"
    a.mkdir(parents=True)
    pd.DataFrame({"model": ["m1", "m2"], "s": [0.1, 0.2]}).to_csv(a / "summary.csv", index=False)
    (a / "summary.parquet").write_bytes(b"PAR1")
    write_report(a / "report.html", "DBB", [Section("S").text("x")])
    write_run_info(a, probe="dbb", models=["m1", "m2"], settings={"mode": "logprob", "threshold": 0.2})
    b = root / "globalbias"
    b.mkdir()
    pd.DataFrame({"model": ["https://x.example"], "v": [1]}).to_csv(b / "bias_scores.csv", index=False)
    write_report(b / "report.html", "GB", [Section("S").text("y")])


def test_index_shows_models_dates_settings_and_links(tmp_path: Path) -> None:
    _demo_tree(tmp_path)
    page = build_index(tmp_path).read_text()
    doc = parse(page)
    hrefs = {h for _, h in doc.links if not h.startswith("#")}
    # each report and the folder of its tables (issue 35.9: one link, not one line per file)
    assert hrefs == {"dbb/report.html", "dbb/", "globalbias/report.html", "globalbias/"}
    assert all((tmp_path / h).is_file() or (tmp_path / h).is_dir() for h in hrefs)
    assert "m1, m2" in doc.cells and "https://x.example" in doc.cells  # models from run_info, else from the CSV
    assert any("mode=logprob" in c and "threshold=0.2" in c for c in doc.cells)
    assert any(c[:4].isdigit() and "T" in c for c in doc.cells)  # an ISO date per report


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_search_filters_rows_in_a_headless_browser(tmp_path: Path) -> None:
    df = pd.DataFrame({"model": [f"m{i}" for i in range(40)], "v": range(40)})
    page = write_report(tmp_path / "r.html", "R", [Section("S").table(df)]).read_text()
    script = ("<script>window.addEventListener('load',function(){var b=document.querySelector('.table-tools input');"
              "b.value='m3';b.dispatchEvent(new Event('input'));document.title='shown:'+"
              "document.querySelector('.table-tools .meta').textContent;});</script></body>")
    (tmp_path / "r.html").write_text(page.replace("</body>", script))
    res = subprocess.run(["chromium", "--headless", "--no-sandbox", "--dump-dom", (tmp_path / "r.html").as_uri()],
                         capture_output=True, text=True, timeout=600)
    assert "shown:11 of 40 rows" in res.stdout  # m3, m30..m39


class _Tables(HTMLParser):
    """Tables of a page as plain data for the DOM stub: id, classes, header rows, body rows (text, data-v)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._section = ""
        self._row: list | None = None
        self._cell: dict | None = None
        self.script = ""
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"id": a.get("id"), "classes": (a.get("class") or "").split(), "head": [], "body": [],
                                "tools": None})
        elif tag in {"thead", "tbody"}:
            self._section = tag
        elif tag == "tr" and self.tables:
            self._row = []
            self._row_class = a.get("class") or ""
        elif tag in {"td", "th"} and self._row is not None:
            self._cell = {"text": "", "v": a.get("data-v"), "input": False}
        elif tag == "input" and self._cell is not None:
            self._cell["input"] = True
        elif tag == "script":
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._cell is not None and self._row is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            (self.tables[-1]["head"] if self._section == "thead" else self.tables[-1]["body"]).append(
                {"cells": self._row, "filters": "filters" in self._row_class})
            self._row = None
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data
        if self._in_script:
            self.script += data


_DOM_STUB = r"""
const data = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
function el(extra) { const h = {}; return Object.assign({
  listeners: h, style: {}, value: '', textContent: '', attrs: {},
  addEventListener(type, f) { (h[type] = h[type] || []).push(f); },
  fire(type) { (h[type] || []).forEach(f => f()); },
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; },
  classList: { s: new Set(), add(...c) { c.forEach(x => this.s.add(x)); }, remove(...c) { c.forEach(x => this.s.delete(x)); },
               contains(c) { return this.s.has(c); } } }, extra); }
const byId = {}, tables = [];
for (const t of data.tables) {
  const mkRow = r => { const cells = r.cells.map(c => { const e = el({ textContent: c.text });
      if (c.v !== null) e.attrs['data-v'] = c.v; if (c.input) e.input = el({}); return e; });
    return el({ cells, filters: r.filters, get textContent() { return cells.map(c => c.textContent).join(''); } }); };
  const head = t.head.map(mkRow), rows = t.body.map(mkRow);
  const body = { rows, appendChild(r) { const i = rows.indexOf(r); rows.splice(i, 1); rows.push(r); } };
  const table = el({ id: t.id, cls: t.classes, tHead: { rows: head }, tBodies: [body],
    querySelectorAll(sel) { return sel === 'tr.filters input' ? head.filter(r => r.filters).flatMap(r => r.cells.map(c => c.input)) : []; } });
  tables.push(table);
  byId[t.id + '-search'] = el({}); byId[t.id + '-count'] = el({});
}
global.document = { querySelectorAll(sel) { const c = sel.split('.')[1]; return tables.filter(t => t.cls.includes(c)); },
                    getElementById(id) { return byId[id]; } };
eval(data.script);
const t = tables[0], box = byId[t.id + '-search'];
box.value = 'm3'; box.fire('input');
const shown = t.tBodies[0].rows.filter(r => r.style.display !== 'none').map(r => r.cells[0].textContent);
const count = byId[t.id + '-count'].textContent;
box.value = ''; box.fire('input');
const filter = t.tHead.rows[1].cells[1].input; filter.value = '7'; filter.fire('input');
const filtered = t.tBodies[0].rows.filter(r => r.style.display !== 'none').map(r => r.cells[0].textContent);
filter.value = ''; filter.fire('input');
const th = t.tHead.rows[0].cells[1]; th.fire('click'); th.fire('click');
const sorted = t.tBodies[0].rows.slice(0, 3).map(r => r.cells[1].textContent);
console.log(JSON.stringify({ shown, count, filtered, sorted }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_search_filter_and_sort_scripts_run(tmp_path: Path) -> None:
    """The report's inline JavaScript, run by node against a minimal DOM built from the parsed page."""
    df = pd.DataFrame({"model": [f"m{i}" for i in range(40)], "v": [float(i % 10) for i in range(40)]})
    page = write_report(tmp_path / "r.html", "R", [Section("S").table(df)]).read_text()
    parsed = _Tables()
    parsed.feed(page)
    (tmp_path / "page.json").write_text(json.dumps({"tables": parsed.tables, "script": parsed.script}))
    (tmp_path / "stub.js").write_text(_DOM_STUB)
    res = subprocess.run(["node", str(tmp_path / "stub.js"), str(tmp_path / "page.json")], capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["shown"] == ["m3"] + [f"m{i}" for i in range(30, 40)] and out["count"] == "11 of 40 rows"
    assert out["filtered"] == ["m7", "m17", "m27", "m37"]  # the v column filter "7" keeps 7.0 only
    assert out["sorted"] == ["9", "9", "9"]  # second click: descending by the numeric data-v
