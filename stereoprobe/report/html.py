"""Single-file HTML reports that open offline: sortable, searchable tables, embedded PNG plots, no assets.

Build a report from :class:`Section` objects and write it with :func:`write_report`. Plots are matplotlib
figures rendered to PNG and embedded as base64; tables are sortable by clicking a column header and, when
longer than a screen, searchable and filterable per column (a few lines of inline JavaScript, no library,
no CDN). The shared conventions of every stereoprobe report live here:

- one notation for a missing value, :data:`MISSING` (``None``, NaN, ``pd.NA`` and ``NaT`` alike);
- links only from the columns a caller names (``links=[...]``): a cell whose text merely looks like a URL
  (a model named ``https://...``) stays text;
- an explanatory line (:func:`empty_note`) instead of an empty table, a blank plot or all-zero axes
  (:func:`plot_is_empty` decides);
- every table file linked from its report (:meth:`Section.files`, ``files=`` of :meth:`Section.table`);
- every figure also saved beside the report as PNG (``figures/<report>-<caption>.png``, linked under the
  figure) by :func:`write_report`, and as SVG too on request (``svg=True``, for papers and slides);
- wide tables keep their first column in view (sticky) and wrap long cells.

The page itself (head, inline styles and script, DEMO banner, navigation, sections) is the jinja2 template
``templates/page.html.j2`` (:mod:`stereoprobe.report.pages`); the blocks built here are inserted into it as
trusted HTML.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from markupsafe import Markup

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.transforms import Bbox

from stereoprobe.report.pages import FILES, PAGE, TABLE, render_page
from stereoprobe.report.plot_text import literal_text

literal_text()  # every figure drawn for a report shows its labels literally ("$x$" is not mathtext)

MISSING = "–"
"""How every report shows a missing value."""

SEARCH_MIN_ROWS = 25
"""Tables with more rows than this (about one screen) get a search box and per-column filters."""

def is_missing(value: Any) -> bool:
    """True for ``None``, NaN, ``pd.NA`` and ``NaT``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, (float, np.floating)):
        return math.isnan(float(value))
    try:
        return bool(pd.isna(value)) if np.ndim(value) == 0 else False
    except (TypeError, ValueError):
        return False


def format_value(value: Any) -> str:
    """The text a report shows for ``value``: :data:`MISSING` when missing, 4 significant digits for floats."""
    if is_missing(value):
        return MISSING
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return str(value)


def empty_note(message: str) -> str:
    """The HTML of an explanatory line shown instead of an empty table, a blank plot or all-zero axes."""
    return f'<p class="empty-note">{html.escape(message)}</p>'


def plot_is_empty(*values: Any) -> bool:
    """True when a plot of ``values`` would show nothing: no values, all missing, or all zero.

    Each argument is anything array-like (a Series, a list, a DataFrame); they are pooled. A value that is
    neither missing nor a number counts as something to show.
    """
    for v in values:
        arr = np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v).ravel()
        if arr.dtype.kind in "biuf":
            num = arr.astype(float)
        else:
            obj = pd.Series(arr, dtype=object)
            coerced = pd.to_numeric(obj, errors="coerce")
            if bool((coerced.isna() & ~obj.isna()).any()):
                return False
            num = coerced.to_numpy(dtype=float, na_value=np.nan)
        finite = num[np.isfinite(num)]
        if finite.size and bool((finite != 0).any()):
            return False
    return True


def _cell(v: Any, link: bool = False) -> tuple[str, str | None, str | None]:
    """One cell of :data:`stereoprobe.report.pages.TABLE`: its text, its sort value (``data-v``; None: sorted
    by the text) and, in a link column, its href (None: no link)."""
    if link and not is_missing(v):
        if isinstance(v, tuple) and len(v) == 2:
            text, href = str(v[0]), str(v[1])
        else:
            text = href = str(v)
        return text, None, href or None
    if is_missing(v):
        return MISSING, "", None
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v)), None, None
    if isinstance(v, (float, np.floating)):
        return format_value(v), repr(float(v)), None
    if isinstance(v, (int, np.integer)):
        return str(int(v)), str(int(v)), None
    return str(v), None, None


_TABLE_IDS = [0]


def _next_table_id() -> str:
    _TABLE_IDS[0] += 1
    return f"tbl{_TABLE_IDS[0]}"


def files_html(paths: Iterable[str | Path], base: str | Path | None = None, label: str = "files: ") -> str:
    """Links to table files, relative to ``base`` (the report's folder) when given, after ``label``."""
    links = []
    for p in paths:
        rel = _relative(p, base)
        links.append({"text": Path(rel).name if base is None else rel, "href": rel})
    return render_page(FILES, label=label, links=links) if links else ""


def _relative(path: str | Path, base: str | Path | None) -> str:
    """``path`` as a link from the page in ``base``: an absolute path made relative to ``base``; a relative one
    inside a relative ``base`` (``results/dbb/x.csv`` from ``results/dbb``, as the Python API's relative out
    folders give) made relative to it; any other relative path is already relative to the page."""
    p = Path(path)
    if base is None:
        return p.as_posix()
    if not p.is_absolute():
        b = Path(base)
        return p.relative_to(b).as_posix() if not b.is_absolute() and p.is_relative_to(b) else p.as_posix()
    return Path(os.path.relpath(p, Path(base))).as_posix()


def table_html(
    df: pd.DataFrame,
    caption: str | None = None,
    max_rows: int = 2000,
    links: Sequence[str] | None = None,
    files: Sequence[str | Path] | None = None,
    base: str | Path | None = None,
    search: bool | None = None,
) -> str:
    """A sortable HTML table of ``df`` (first ``max_rows`` rows; the caption says when rows were cut).

    ``links`` names the columns rendered as links (a string href, or a ``(text, href)`` tuple); no other cell
    becomes a link. ``files`` are the table's CSV/Parquet files, linked under the table (relative to
    ``base``). ``search`` adds a search box and per-column filters (default: more than
    :data:`SEARCH_MIN_ROWS` rows). An empty ``df`` gives an explanatory line instead of a bare header.
    """
    link_cols = set(links or [])
    unknown = link_cols - set(map(str, df.columns))
    if unknown:
        raise ValueError(f"table_html: link columns {sorted(unknown)} are not columns of the table")
    if df.empty:
        what = f"{caption}: " if caption else ""
        return empty_note(f"{what}no rows.") + files_html(files or [], base)
    shown = df.head(max_rows)
    flags = [str(c) in link_cols for c in shown.columns]
    cap = caption or ""
    if len(df) > max_rows:
        cap += f" (first {max_rows} of {len(df)} rows; the CSV has all)"
    return render_page(
        TABLE, id=_next_table_id(), caption=cap, columns=[str(c) for c in shown.columns],
        rows=[[_cell(v, f) for v, f in zip(rec, flags)] for rec in shown.itertuples(index=False)],
        searchable=len(shown) > SEARCH_MIN_ROWS if search is None else search,
        files=Markup(files_html(files or [], base)),
    )


FIGURES = "figures"
"""Folder beside a report that holds its figures as PNG files (and SVG files on request)."""

SVG_KEY = "figure_svg"
"""``run_info.json`` key: true when the folder's report also saves its figures as SVG (``write_report(svg=...)``
unset reads it, so a report rebuilt from the folder alone keeps the choice)."""


@dataclass
class Figure:
    """A rendered figure: PNG (embedded in the report and saved), its caption, and the closed matplotlib
    figure with its crop box, from which :func:`write_report` draws the SVG when asked."""

    png: bytes
    caption: str | None
    marker: str  # placeholder in the section's HTML, replaced by the links to the saved files
    fig: MplFigure | None = None
    box: Bbox | None = None
    build: Callable[[], MplFigure] | None = None  # builds ``fig`` again (a figure rendered in another process)

    def svg(self) -> bytes:
        """The figure as SVG, cropped to the PNG's box."""
        if self.fig is None and self.build is not None:
            from stereoprobe.report.plot_text import bound_figure

            self.fig = self.build()
            bound_figure(self.fig)  # as render_png drew it
        return render_svg(self.fig, self.box)


def render_png(fig: MplFigure) -> tuple[bytes, Bbox]:
    """``fig`` as PNG bytes and the crop box it was saved with (``fig`` is closed in pyplot but kept drawable:
    :func:`render_svg` takes the same box). One draw: the canvas cropped to its ink plus ``savefig.pad_inches``
    (what ``bbox_inches="tight"`` keeps, without its second layout pass); a figure drawn up to its canvas's
    edge (text that may run off it) is saved the tight way, which widens the canvas."""
    import matplotlib.pyplot as plt

    from stereoprobe.report.plot_text import bound_figure

    bound_figure(fig)  # literal, shortened text; a bounded size
    png = io.BytesIO()
    crop = _drawn_and_cropped(fig, PNG_DPI)
    if crop is None:
        box = _tight_box(fig, PNG_DPI)  # one layout pass shared with the SVG (each savefig "tight" makes two)
        fig.savefig(png, format="png", dpi=PNG_DPI, bbox_inches=box)
    else:
        import matplotlib.image

        pixels, box = crop
        matplotlib.image.imsave(png, pixels, format="png", dpi=PNG_DPI)
    plt.close(fig)
    return png.getvalue(), box


CROP_MARGIN = 2.0
"""Inches drawn around the canvas by :func:`render_png`, for text that runs off it (a long tick label)."""


def _drawn_and_cropped(fig: MplFigure, dpi: float) -> tuple[np.ndarray, Bbox] | None:
    """``fig`` drawn once at ``dpi`` on a canvas widened by :data:`CROP_MARGIN` on every side: its RGBA pixels
    cropped to the ink (pixels unlike the background) padded by ``savefig.pad_inches``, and that box in inches;
    None when ink reaches the widened canvas's edge."""
    import matplotlib as mpl
    from matplotlib.transforms import Bbox

    w_in, h_in = fig.get_size_inches()
    m = CROP_MARGIN
    wide = Bbox.from_extents(-m, -m, w_in + m, h_in + m)  # a given box: no layout pass, one draw
    raw = io.BytesIO()
    fig.savefig(raw, format="rgba", dpi=dpi, bbox_inches=wide)
    n = len(raw.getvalue()) // 4
    sizes = [(h, w) for h in {int(wide.height * dpi), round(wide.height * dpi)}
             for w in {int(wide.width * dpi), round(wide.width * dpi)} if h * w == n]
    if not sizes:
        return None
    rgba = np.frombuffer(raw.getvalue(), dtype=np.uint8).reshape(*sizes[0], 4)
    pixels = rgba.view(np.uint32)[..., 0]  # one 4-byte word per pixel: one comparison each
    ink = pixels != pixels[0, 0]
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    h, w = ink.shape
    if not rows.size or rows[0] == 0 or cols[0] == 0 or rows[-1] == h - 1 or cols[-1] == w - 1:
        return None
    pad = int(round(mpl.rcParams["savefig.pad_inches"] * dpi))
    r0, r1 = max(rows[0] - pad, 0), min(rows[-1] + 1 + pad, h)
    c0, c1 = max(cols[0] - pad, 0), min(cols[-1] + 1 + pad, w)
    box = Bbox.from_extents(c0 / dpi - m, (h - r1) / dpi - m, c1 / dpi - m, (h - r0) / dpi - m)
    return np.ascontiguousarray(rgba[r0:r1, c0:c1]), box


def render_svg(fig: MplFigure, box: Bbox) -> bytes:
    """``fig`` (rendered by :func:`render_png`) as SVG, cropped to ``box``."""
    svg = io.BytesIO()
    fig.savefig(svg, format="svg", bbox_inches=box)
    return svg.getvalue()


def render_figure(fig: MplFigure) -> tuple[bytes, bytes]:
    """``fig`` as PNG and SVG bytes (and closed)."""
    png, box = render_png(fig)
    return png, render_svg(fig, box)


PNG_DPI = 110


def _tight_box(fig: MplFigure, dpi: float) -> Bbox:
    """The box ``savefig(bbox_inches="tight", dpi=dpi)`` crops a PNG to (the same layout pass on the same
    Agg renderer, padded by ``savefig.pad_inches``), computed once so that the PNG and the SVG share it."""
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    old_dpi = fig.dpi
    try:
        fig.dpi = dpi
        renderer = canvas.get_renderer()
        with renderer._draw_disabled():
            fig.draw(renderer)
        pad = mpl.rcParams["savefig.pad_inches"]
        return fig.get_tightbbox(renderer).padded(pad, pad)
    finally:
        fig.dpi = old_dpi


def _figure_tag(png: bytes, caption: str | None) -> str:
    data = base64.b64encode(png).decode("ascii")
    cap = f"<figcaption class='meta'>{html.escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img alt="{html.escape(caption or "plot")}" src="data:image/png;base64,{data}">{cap}</figure>'


def _slug(text: str, limit: int = 60) -> str:
    """A file-name stem of ``text``: lower-case words joined by ``-``, cut at a word boundary within ``limit``
    characters; a cut one ends in a 6-digit hash of the whole text, so two long captions never share a name.

    >>> _slug("GlobalBias: bias score per group")
    'globalbias-bias-score-per-group'
    >>> _slug("StereoTales attribute distributions by language and scenario", limit=30)
    'stereotales-attribute-259cd3'
    """
    words = [w for w in "".join(c.lower() if c.isalnum() else "-" for c in text).split("-") if w]
    full = "-".join(words)
    if len(full) <= limit:
        return full or "figure"
    import hashlib

    tag = hashlib.sha1(full.encode("utf-8")).hexdigest()[:6]
    kept: list[str] = []
    for w in words:
        if len("-".join([*kept, w])) > limit - len(tag) - 1:
            break
        kept.append(w)
    return "-".join([*kept, tag]) if kept else f"{words[0][:limit - 7]}-{tag}"


@dataclass
class Section:
    """A titled block of the report: free HTML paragraphs, tables and figures, in order."""

    title: str
    blocks: list[str] = field(default_factory=list)
    anchor: str | None = None
    figures: list[Figure] = field(default_factory=list)

    def text(self, paragraph: str) -> Section:
        self.blocks.append(f"<p>{html.escape(paragraph)}</p>")
        return self

    def note(self, paragraph: str) -> Section:
        self.blocks.append(f'<p class="note">{html.escape(paragraph)}</p>')
        return self

    def empty(self, message: str) -> Section:
        """An explanatory line in place of an empty table or plot (see :func:`empty_note`)."""
        self.blocks.append(empty_note(message))
        return self

    def raw(self, fragment: str) -> Section:
        """Append trusted HTML (built by stereoprobe, never model output)."""
        self.blocks.append(fragment)
        return self

    def table(
        self,
        df: pd.DataFrame,
        caption: str | None = None,
        max_rows: int = 2000,
        links: Sequence[str] | None = None,
        files: Sequence[str | Path] | None = None,
        base: str | Path | None = None,
        search: bool | None = None,
    ) -> Section:
        """Append :func:`table_html` of ``df``."""
        self.blocks.append(table_html(df, caption, max_rows, links=links, files=files, base=base, search=search))
        return self

    def figure(self, fig: Any, caption: str | None = None) -> Section:
        """Embed ``fig`` as PNG; :func:`write_report` also saves it as a PNG file (and SVG on request) and links
        the files."""
        png, box = render_png(fig)
        marker = f"<!--stereoprobe-figure-{id(self)}-{len(self.figures)}-->"
        self.figures.append(Figure(png, caption, marker, fig, box))
        self.blocks.append(_figure_tag(png, caption) + marker)
        return self

    def rendered(self, png: bytes, box: Bbox, build: Callable[[], MplFigure], caption: str | None = None) -> Section:
        """Embed a figure :func:`render_png` rendered elsewhere (:mod:`stereoprobe.report.render_pool`):
        as :meth:`figure` would embed ``build()``; ``build`` draws it again only for an SVG."""
        marker = f"<!--stereoprobe-figure-{id(self)}-{len(self.figures)}-->"
        self.figures.append(Figure(png, caption, marker, None, box, build))
        self.blocks.append(_figure_tag(png, caption) + marker)
        return self

    def files(
        self,
        paths: Iterable[str | Path],
        base: str | Path | None = None,
        descriptions: dict[str, str] | None = None,
    ) -> Section:
        """A table of files with real relative links (relative to ``base``, the report's folder).

        ``descriptions`` maps a file name (or its stem, shared by ``x.csv`` and ``x.parquet``) to what it holds.
        Files that do not exist are listed without a link, so a reader sees what is missing.
        """
        descriptions = descriptions or {}
        rows = []
        for p in paths:
            rel = _relative(p, base)
            full = Path(base) / rel if base is not None and not Path(rel).is_absolute() else Path(p)
            name = Path(rel).name
            desc = descriptions.get(name, descriptions.get(Path(rel).stem, ""))
            size = full.stat().st_size if full.is_file() else None
            rows.append({"file": (rel, rel if size is not None else ""), "content": desc,
                         "size (KB)": None if size is None else round(size / 1024, 1)})
        if not rows:
            return self.empty("This run wrote no table files.")
        frame = pd.DataFrame({k: [r[k] for r in rows] for k in ("file", "content", "size (KB)")})
        return self.table(frame, links=["file"])


def render_report(title: str, sections: Sequence[Section], subtitle: str | None = None, nav: bool = True,
                  demo: str | None = None) -> str:
    """The complete HTML document (navigation unless ``nav`` is false, sections, inline CSS and JavaScript),
    from the page template (:data:`stereoprobe.report.pages.PAGE`); ``demo``: why the page is a demo
    (:mod:`stereoprobe.report.demo`), shown in a DEMO banner on top."""
    nothing = empty_note("Nothing to show in this section for these runs.")
    page_sections = [{"id": s.anchor or f"s{i}", "title": s.title,
                      "body": Markup("\n".join(s.blocks) if s.blocks else nothing)} for i, s in enumerate(sections)]
    return render_page(PAGE, title=title, subtitle=subtitle or None, nav=nav, demo=demo or None,
                       sections=page_sections)


def save_figures(path: str | Path, sections: Sequence[Section], demo: bool = False, svg: bool = False) -> dict[str, str]:
    """Save the figures of ``sections`` as ``figures/<report stem>-<caption slug>.png`` (and ``.svg`` with
    ``svg``) beside the report ``path`` (``figures/DEMO-<report stem>-…`` for a page built from demo settings, so
    a figure file copied on its own still says so); return {marker: HTML links to the files}."""
    p = Path(path)
    links: dict[str, str] = {}
    used: set[str] = set()
    for section in sections:
        for i, f in enumerate(section.figures, 1):
            stem = f"{'DEMO-' if demo else ''}{p.stem}-{_slug(f.caption or section.title + f' {i}')}"
            name, k = stem, 2
            while name in used:
                name, k = f"{stem}-{k}", k + 1
            used.add(name)
            folder = p.parent / FIGURES
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.png").write_bytes(f.png)
            files = [f"{FIGURES}/{name}.png"]
            if svg:
                (folder / f"{name}.svg").write_bytes(f.svg())
                files.append(f"{FIGURES}/{name}.svg")
            links[f.marker] = files_html(files, label="figure files: " if svg else "figure file: ")
    return links


def svg_of_folder(folder: str | Path) -> bool:
    """Whether ``folder/run_info.json`` asks for SVG figures (:data:`SVG_KEY`); False without a readable one."""
    import json

    from stereoprobe.report.run_info import RUN_INFO

    try:
        info = json.loads((Path(folder) / RUN_INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get(SVG_KEY) is True


def write_report(path: str | Path, title: str, sections: Sequence[Section], subtitle: str | None = None,
                 nav: bool = True, demo: str | None = None, svg: bool | None = None) -> Path:
    """Write a single-file HTML report and its figures (PNG under ``figures/`` beside it, and SVG with ``svg``)
    and return its path. ``nav``: the list of sections at the top (off where the first section must be the first
    thing seen). ``demo``: why the page is a demo; None: from the ``run_info.json`` already written beside it
    (:func:`stereoprobe.report.demo.demo_reason_of_folder`), so every probe's page gets the DEMO banner.
    ``svg``: also save each figure as SVG (for papers and slides); None: as that ``run_info.json`` says
    (:func:`svg_of_folder`), PNG only without one."""
    from stereoprobe.report.demo import demo_reason_of_folder

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    reason = demo if demo is not None else demo_reason_of_folder(p.parent)
    with_svg = svg if svg is not None else svg_of_folder(p.parent)
    text = render_report(title, sections, subtitle, nav, reason)
    for marker, links in save_figures(p, sections, demo=bool(reason), svg=with_svg).items():
        text = text.replace(marker, links)
    from stereoprobe.redact import redact_html

    p.write_text(redact_html(text), encoding="utf-8")  # no credential in a cell, link or caption (issue 28.0)
    return p
