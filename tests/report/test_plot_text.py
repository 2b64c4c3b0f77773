"""Figures draw labels literally (no mathtext) and stay bounded in size, whatever the labels hold."""

from __future__ import annotations

import io

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from PIL import Image  # noqa: E402

from stereoprobe.report.html import render_figure  # noqa: E402
from stereoprobe.report.plot_text import MAX_INCHES, MAX_LABEL, short  # noqa: E402

DPI = 110  # render_figure's
LABELS = {
    "unbalanced math": ["$x^$", "b"],
    "unknown command": ["$\\nocommand$", "a"],
    "a formula": ["$\\frac{1}{0}$", "$\\alpha$"],
    "dollar amounts": ["costs $5 and $6", "$"],
    "a 3 MB cell": ["a" * 3_000_000, "b"],
    "many long labels": [f"{i}:" + "word " * 100 for i in range(12)],
    "control characters": ["a\tb\nc\rd", "\x00e"],
}


@pytest.mark.parametrize("kind", ["bar", "barh", "categories", "title", "legend"])
@pytest.mark.parametrize("name", sorted(LABELS))
def test_figure_with_hostile_text_renders_bounded(name: str, kind: str) -> None:
    labels = LABELS[name]
    fig, ax = plt.subplots(figsize=(8, 0.2 * len(labels) + 2))
    values = list(range(1, len(labels) + 1))
    if kind == "bar":  # labels as tick labels, as the reports draw groups and descriptors
        ax.bar(range(len(labels)), values)
        ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right")
    elif kind == "barh":
        ax.barh(range(len(labels)), values)
        ax.set_yticks(range(len(labels)), labels)
    elif kind == "categories":  # matplotlib's own category axis (model names); long, not megabytes
        ax.barh([lab[:300] + str(i) for i, lab in enumerate(labels)], values)
    elif kind == "title":
        ax.plot(values)
        ax.set_title(labels[0])
        ax.set_xlabel(labels[-1])
    else:
        for lab, v in zip(labels, values):
            ax.plot([0, 1], [v, v], label=lab)
        ax.legend()
    png, svg = render_figure(fig)
    w, h = Image.open(io.BytesIO(png)).size
    # the tight box may add the labels' margin to the capped canvas, never the text's full length
    assert w <= (MAX_INCHES[0] + 25) * DPI and h <= (MAX_INCHES[1] + 25) * DPI
    assert svg.startswith(b"<?xml")
    assert all(not t.get_parse_math() and len(t.get_text()) <= MAX_LABEL for t in fig.findobj(Text))


def test_a_figure_sized_by_its_item_count_is_capped() -> None:
    fig, ax = plt.subplots(figsize=(8, 0.35 * 100_000 + 1.4))  # 100,000 categories: 3.8 million pixels tall
    ax.plot([1, 2])
    render_figure(fig)
    w, h = fig.get_size_inches()
    assert w <= MAX_INCHES[0] and h <= MAX_INCHES[1]


def test_short_keeps_short_text_and_marks_a_cut() -> None:
    assert short("abc") == "abc"
    cut = short("x" * 500)
    assert len(cut) == MAX_LABEL and cut.endswith("…")
