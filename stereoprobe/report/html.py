"""Single-file HTML reports that open offline: sortable tables, embedded PNG plots, no external assets.

Build a report from :class:`Section` objects and write it with :func:`write_report`. Plots are matplotlib
figures rendered to PNG and embedded as base64; tables are sortable by clicking a column header (a few
lines of inline JavaScript, no library).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;
 padding:0 1rem;color:#1d1d1f;line-height:1.45}
h1{font-size:1.7rem}h2{font-size:1.3rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1.05rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f6;cursor:pointer;user-select:none;position:sticky;top:0}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
tr:nth-child(even) td{background:#fafafa}
.table-wrap{max-height:32rem;overflow:auto;border:1px solid #eee;margin-bottom:.3rem}
.note{color:#555;font-size:.9rem}.meta{color:#666;font-size:.85rem}
img{max-width:100%;height:auto}
nav ul{columns:2}
"""

_JS = """
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th, i){
    th.addEventListener('click', function(){
      var asc = !th.classList.contains('sorted-asc');
      t.querySelectorAll('th').forEach(function(h){h.classList.remove('sorted-asc','sorted-desc');});
      th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function(a, b){
        var x = a.cells[i].getAttribute('data-v') || a.cells[i].textContent,
            y = b.cells[i].getAttribute('data-v') || b.cells[i].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
"""


@dataclass
class Section:
    """A titled block of the report: free HTML paragraphs, tables and figures, in order."""

    title: str
    blocks: list[str] = field(default_factory=list)
    anchor: str | None = None

    def text(self, paragraph: str) -> "Section":
        self.blocks.append(f"<p>{html.escape(paragraph)}</p>")
        return self

    def note(self, paragraph: str) -> "Section":
        self.blocks.append(f'<p class="note">{html.escape(paragraph)}</p>')
        return self

    def raw(self, fragment: str) -> "Section":
        """Append trusted HTML (built by stereoprobe, never model output)."""
        self.blocks.append(fragment)
        return self

    def table(self, df: pd.DataFrame, caption: str | None = None, max_rows: int = 2000) -> "Section":
        self.blocks.append(table_html(df, caption=caption, max_rows=max_rows))
        return self

    def figure(self, fig: Any, caption: str | None = None) -> "Section":
        self.blocks.append(figure_html(fig, caption=caption))
        return self


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if v != v:  # NaN
            return '<td data-v="">–</td>'
        shown = f"{v:.4g}"
        return f'<td data-v="{v!r}">{shown}</td>'
    if isinstance(v, (int,)) and not isinstance(v, bool):
        return f'<td data-v="{v}">{v}</td>'
    s = "" if v is None else str(v)
    if s.startswith(("http://", "https://", "#", "samples/")):
        return f'<td><a href="{html.escape(s, quote=True)}">{html.escape(s)}</a></td>'
    return f"<td>{html.escape(s)}</td>"


def table_html(df: pd.DataFrame, caption: str | None = None, max_rows: int = 2000) -> str:
    """A sortable HTML table of ``df`` (first ``max_rows`` rows; the caption says when rows were cut)."""
    shown = df.head(max_rows)
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
    rows = "\n".join("<tr>" + "".join(_cell(v) for v in rec) + "</tr>" for rec in shown.itertuples(index=False))
    cap = caption or ""
    if len(df) > max_rows:
        cap += f" (first {max_rows} of {len(df)} rows; the CSV has all)"
    cap_html = f"<caption class='meta'>{html.escape(cap)}</caption>" if cap else ""
    return (
        f'<div class="table-wrap"><table class="sortable">{cap_html}<thead><tr>{head}</tr></thead>'
        f"<tbody>\n{rows}\n</tbody></table></div>"
    )


def figure_html(fig: Any, caption: str | None = None) -> str:
    """Render a matplotlib figure to an embedded PNG (and close it)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption class='meta'>{html.escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{html.escape(caption or "plot")}" src="data:image/png;base64,{data}">{cap}</figure>'


def render_report(title: str, sections: Sequence[Section], subtitle: str | None = None) -> str:
    nav = "".join(
        f'<li><a href="#{s.anchor or f"s{i}"}">{html.escape(s.title)}</a></li>' for i, s in enumerate(sections)
    )
    body = "\n".join(
        f'<section id="{s.anchor or f"s{i}"}"><h2>{html.escape(s.title)}</h2>\n' + "\n".join(s.blocks) + "</section>"
        for i, s in enumerate(sections)
    )
    sub = f'<p class="meta">{html.escape(subtitle)}</p>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title>"
        f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>{sub}<nav><ul>{nav}</ul></nav>\n{body}\n"
        f"<script>{_JS}</script></body></html>\n"
    )


def write_report(path: str | Path, title: str, sections: Sequence[Section], subtitle: str | None = None) -> Path:
    """Write a single-file HTML report; return its path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_report(title, sections, subtitle), encoding="utf-8")
    return p
