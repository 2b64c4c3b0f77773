"""Figures draw their text literally and stay a bounded size, whatever the labels hold.

Model names, run labels, descriptors and attribute values reach the figures as text. Two things must not follow
from that text: matplotlib's mathtext parsing ``$...$`` (a label ``$x^$`` is a parse error, ``$\\frac{1}{0}$``
a formula) and a figure as large as the text (a 3 MB descriptor cell drawn with ``bbox_inches="tight"`` asks
for tens of millions of pixels). :func:`literal_text` turns mathtext and LaTeX off for every figure made after
it (the report writer calls it when it is imported); :func:`bound_figure`, called on each figure before it is
saved, shortens any text longer than :data:`MAX_LABEL` characters (ending it with "…"), tick labels included,
and caps the figure at :data:`MAX_INCHES`. Every label a report's plot draws from its data (tick labels, legend
entries, titles, annotations) goes through :func:`plot_label` first: at most two lines, so that a 300-character
model name stays readable and does not push the plot off the figure (the full text is in the report's tables).
"""

from __future__ import annotations

import textwrap
from typing import Any

__all__ = ["LABEL_LINES", "LABEL_WIDTH", "LITERAL", "MAX_INCHES", "MAX_LABEL", "TITLE_WIDTH", "bound_figure",
           "literal_text", "plot_label", "short"]

MAX_LABEL = 200  # characters of one text drawn in a figure
LABEL_WIDTH, LABEL_LINES = 36, 2  # a label drawn from the data: at most two lines of 36 characters
TITLE_WIDTH = 70  # characters of a line of a plot's title drawn from the data (a model name, a descriptor)
MAX_INCHES = (40.0, 60.0)  # width, height: 4,400 x 6,600 pixels at the reports' 110 dpi
LITERAL = {"text.parse_math": False, "text.usetex": False}


def literal_text() -> None:
    """Draw every later figure's text literally: no mathtext for ``$...$``, no LaTeX."""
    import matplotlib

    matplotlib.rcParams.update(LITERAL)


def short(text: Any, limit: int = MAX_LABEL) -> str:
    """``text`` cut to ``limit`` characters (the last one "…")."""
    s = str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def plot_label(text: Any, width: int = LABEL_WIDTH, lines: int = LABEL_LINES) -> str:
    """``text`` as a plot draws it: wrapped on at most ``lines`` lines of ``width`` characters, the last one
    cut with "…" when more is left (the full text is in the report's tables). Drawn literally: reports draw
    with mathtext off (:func:`literal_text`, :func:`bound_figure`), so ``$x$`` stays ``$x$``."""
    s = str(text)
    if len(s) <= width and s.isprintable():
        return s
    # one space between words (a line break or tab in the data is not a line of the label), then only the
    # prefix that fills ``lines`` lines and shows whether more is left: a megabyte name is not wrapped whole
    s = " ".join(s.split())[: (width + 1) * lines + 1]
    wrapped = textwrap.wrap(s, width, break_long_words=True, break_on_hyphens=False) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[: lines - 1] + [wrapped[lines - 1][: width - 1] + "…"]
    return "\n".join(wrapped)


def bound_figure(fig: Any) -> None:
    """Make ``fig``'s text literal and short and its size bounded (in place), before it is drawn."""
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    w, h = fig.get_size_inches()
    fig.set_size_inches(min(float(w), MAX_INCHES[0]), min(float(h), MAX_INCHES[1]))
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, FixedFormatter):
                fmt.seq = [short(s) for s in fmt.seq]
            elif isinstance(fmt, FuncFormatter) or type(fmt).__name__ == "StrCategoryFormatter":
                # set_xticks(ticks, labels) and category axes: text labels, shortened when each tick is drawn
                axis.set_major_formatter(FuncFormatter(lambda x, pos=None, f=fmt: short(f(x, pos))))
    for t in fig.findobj(Text):
        t.set_parse_math(False)
        t.set_usetex(False)
        if len(t.get_text()) > MAX_LABEL:
            t.set_text(short(t.get_text()))
