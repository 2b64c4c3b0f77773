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
from stereoprobe.report.plot_text import MAX_INCHES, MAX_LABEL, bound_figure, plot_label, short  # noqa: E402

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


HUGE = "m" * 1_000_000  # a 1 MB model name: as category data, matplotlib parsed it for minutes before any cap


def _drawn_labels(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tick labels of every figure the reports render, read just before it is drawn."""
    import stereoprobe.report.html as report_html

    seen: list[str] = []
    original = report_html.render_png

    def spy(fig):  # type: ignore[no-untyped-def]
        seen.extend(t.get_text() for ax in fig.axes for t in ax.get_yticklabels() + ax.get_xticklabels())
        return original(fig)

    monkeypatch.setattr(report_html, "render_png", spy)
    return seen


def test_report_plots_take_a_megabyte_model_name_as_a_short_tick_label(monkeypatch: pytest.MonkeyPatch) -> None:
    import pandas as pd

    from stereoprobe.report.html import Section
    from stereoprobe.stereotales.judge.sections import alignment_section, summary_section
    from stereoprobe.stereotales.mining.report import _plot_distributions, _plot_per_model

    seen = _drawn_labels(monkeypatch)
    assoc = pd.DataFrame({"model": [HUGE, HUGE, "small/model"]})
    dist = pd.DataFrame([{"model": m, "language": "all", "attribute": "gender", "value": v, "share": 0.5}
                         for m in (HUGE, "small/model") for v in ("woman", HUGE)])
    shares = {f"share_{k}": [0.2, 0.2] for k in range(1, 6)}
    judge = {"judge_summary": pd.DataFrame({"evaluator": [HUGE, "small/model"], "associations_file": ["a.csv"] * 2,
                                            **shares}),
             "judge_provider_counts": pd.DataFrame({"provider": ["p"], "harmful": [1]})}
    s = Section("plots")
    s.figure(_plot_per_model(assoc, None))
    s.figure(_plot_distributions(dist))
    section = summary_section(judge, threshold=4.0)
    aligned = alignment_section({  # a dimension (an input's attribute) as long as the model name
        "alignment_per_association": pd.DataFrame({"human_mean": [2.0, 4.0], "llm_mean": [3.0, 4.5]}),
        "alignment_correlations": pd.DataFrame(columns=["evaluator", "method", "estimate", "confidence", "ci_low",
                                                        "ci_high", "ci_method"]),
        "alignment_delta_by_dimension": pd.DataFrame({"dimension": [HUGE, "gender"], "mean_delta": [0.5, -0.2],
                                                      "ci_low": [0.1, -0.6], "ci_high": [0.9, 0.2]}),
    }, {"human_vs_llm": float("nan"), "inter_llm": float("nan")})
    assert len(s.figures) == 2 and len(section.figures) == 1 and len(aligned.figures) == 2
    # each its tick, the long one wrapped on two lines and cut (stereoprobe.report.plot_text.plot_label)
    assert plot_label(HUGE) in seen and "small/model" in seen and "gender" in seen
    assert max(len(t) for t in seen) <= MAX_LABEL


def test_png_is_the_tight_png_matplotlib_saves() -> None:
    """One draw cropped to its ink plus the pad (issue 45, the report) shows the picture of matplotlib's own
    ``bbox_inches="tight"`` PNG (two layout passes) to a few pixels of framing; text running further off the
    canvas than the widened draw holds takes the tight path itself, byte for byte."""
    import matplotlib.pyplot as plt
    import numpy as np

    def figure(label: str):
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.barh(range(4), [3, 1, 4, 1])
        ax.set_yticks(range(4), ["a model", label, "m3", "m4"])  # the long one runs off the canvas
        ax.set_title("a title")
        return fig

    def tight(label: str) -> bytes:
        fig = figure(label)
        bound_figure(fig)
        want = io.BytesIO()
        fig.savefig(want, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        return want.getvalue()

    def ink(png: bytes) -> np.ndarray:
        a = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
        rows, cols = np.flatnonzero((a != 255).any(axis=(1, 2))), np.flatnonzero((a != 255).any(axis=(0, 2)))
        return a[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]

    png, svg = render_figure(figure("another model with a longer name"))
    want = tight("another model with a longer name")
    got_size, want_size = Image.open(io.BytesIO(png)).size, Image.open(io.BytesIO(want)).size
    assert all(abs(a - b) <= 4 for a, b in zip(got_size, want_size)) and svg.startswith(b"<?xml")  # ink vs boxes
    a, b = ink(png), ink(want)
    assert abs(a.shape[0] - b.shape[0]) <= 1 and abs(a.shape[1] - b.shape[1]) <= 1
    h, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    assert np.abs(a[:h, :w] - b[:h, :w]).mean() < 3  # the same picture (sub-pixel placement of the text aside)
    far = "x" * 150  # about 8 inches of text left of the axes
    assert render_figure(figure(far))[0] == tight(far)