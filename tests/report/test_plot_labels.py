"""Every plot of every report draws a label from the data literally and readably (issue 28.6): a name with
``$`` (mathtext, here an unbalanced ``$x^$`` that mathtext cannot parse) is drawn as written, and a
300-character model name, descriptor or value is wrapped on at most two lines and cut with "…".

Each report's plotting code is run on hostile labels; the figures are read (their Text objects, not pixels)
after :func:`stereoprobe.report.plot_text.bound_figure` and a draw, as :func:`render_figure` saves them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")
from matplotlib.text import Text  # noqa: E402

from stereoprobe.report.plot_text import LABEL_LINES, TITLE_WIDTH, bound_figure, plot_label  # noqa: E402

DOLLAR = "m$x^$"  # mathtext would fail to parse it (a ValueError on draw)
LONG = "$x$ long " + "abcdefghij" * 30  # 309 characters, starting with mathtext
assert len(LONG) >= 300


def test_plot_label_keeps_short_text_and_wraps_long_text_on_two_lines() -> None:
    assert plot_label(DOLLAR) == DOLLAR and plot_label("costs $5 and $6") == "costs $5 and $6"
    label = plot_label(LONG)
    lines = label.split("\n")
    assert len(lines) == LABEL_LINES and all(len(line) <= 36 for line in lines) and label.endswith("…")
    assert label.replace("\n", "").startswith("$x$ long abcdefghij")  # literal, in order
    assert plot_label("a\nb") == "a b"  # a line break in the data is not a second line of the label
    assert len(plot_label(LONG, TITLE_WIDTH).split("\n")[0]) <= TITLE_WIDTH


def _drawn(fig: Any) -> list[Text]:
    bound_figure(fig)
    fig.canvas.draw()  # mathtext, if it were on, raises here on "$x^$"
    texts = [t for t in fig.findobj(Text) if t.get_text()]
    matplotlib.pyplot.close(fig)
    return texts


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[list[Text]]:
    """The drawn text of every figure that a report section renders."""
    import stereoprobe.report.html as report_html
    import stereoprobe.report.render_pool as render_pool

    figures: list[list[Text]] = []
    original = report_html.render_png
    monkeypatch.setattr(render_pool, "workers_for", lambda n: 0)  # figures drawn here, where the spy sees them

    def spy(fig: Any) -> tuple[bytes, Any]:
        figures.append(_drawn(fig))
        return original(fig)

    monkeypatch.setattr(report_html, "render_png", spy)
    return figures


def _assert_literal_and_readable(texts: list[Text]) -> None:
    """Every text of one figure is drawn literally; a label from the long name is wrapped and cut."""
    strings = [t.get_text() for t in texts]
    assert all(not t.get_parse_math() and not t.get_usetex() for t in texts)
    assert all(LONG not in s for s in strings)  # never the whole 300 characters
    for s in (s for s in strings if LONG[:12] in s):  # wrapped, at most two lines, cut with an ellipsis
        lines = s.split("\n")
        assert len(lines) <= LABEL_LINES and all(len(line) <= TITLE_WIDTH for line in lines) and s.endswith("…")


def _dbb_figures() -> list[Any]:
    from stereoprobe.dbb.report import _plot_categories, _plot_counts, _plot_hist

    rows = []
    for model in (DOLLAR, LONG):
        for cat, dtype in ((DOLLAR, LONG), (LONG, DOLLAR)):
            rows.append({"model": model, "variant": "mcq", "category": cat, "descriptor_type": dtype,
                         "count_s_ge_20": 3, "n": 10, "count_ci_low": 1, "count_ci_high": 5,
                         "mean_s_biased": 30.0, "mean_s_ci_low": 25.0, "mean_s_ci_high": 35.0})
    summary = pd.DataFrame(rows)
    instances = pd.DataFrame({"model": [DOLLAR, LONG], "variant": ["mcq", "mcq"], "s": [10.0, 40.0]})
    return [_plot_counts(summary), _plot_hist(instances, 20.0), _plot_categories(summary)]


def _globalbias_scores() -> pd.DataFrame:
    rows = [{"model": model, "group": g, "descriptor": d, "score": float(i), "flagged": i == 0}
            for model in (DOLLAR, LONG) for i, (g, d) in enumerate([(DOLLAR, LONG), (LONG, DOLLAR), ("ARAB", LONG),
                                                                     ("CHINESE", DOLLAR), ("x", LONG), ("y", DOLLAR)])]
    return pd.DataFrame(rows)


def _mining_figures() -> list[Any]:
    from stereoprobe.stereotales.mining.report import _plot_distributions, _plot_jaccard, _plot_per_model, _plot_rates

    assoc = pd.DataFrame({"model": [DOLLAR, LONG, LONG]})
    jac = pd.DataFrame([[1.0, 0.5], [0.5, 1.0]], index=[DOLLAR, LONG], columns=[DOLLAR, LONG])
    dist = pd.DataFrame([{"model": m, "language": "all", "attribute": a, "value": v, "share": 0.5}
                         for m in (DOLLAR, LONG) for a in (DOLLAR, LONG) for v in (DOLLAR, LONG)])
    rates = pd.DataFrame([{"model": m, "language": lang, "refusal_rate": 0.2}
                          for m in (DOLLAR, LONG) for lang in (DOLLAR, LONG)])
    return [_plot_per_model(assoc, None), _plot_jaccard(jac), _plot_distributions(dist),
            _plot_rates(rates, "language", "refusal_rate", "refusal rate")]


def _judge_sections() -> list[Any]:
    from stereoprobe.stereotales.judge.sections import (agreement_section, alignment_section, language_section,
                                                        own_section, summary_section)

    names = [DOLLAR, LONG]
    shares = {f"share_{k}": [0.2, 0.2] for k in range(1, 6)}
    summary = pd.DataFrame({"evaluator": names, "associations_file": ["a.csv"] * 2, **shares,
                            "own_associations": [0, 0], "own_harmful": [0, 0], "own_harmful_share": [0.0, 0.0],
                            "harmful_share": [0.5, 0.5]})
    t = {"judge_summary": summary, "judge_provider_counts": pd.DataFrame({"provider": ["p"], "harmful": [1]}),
         "alignment_per_association": pd.DataFrame({"human_mean": [2.0, 4.0], "llm_mean": [3.0, 4.5]}),
         "alignment_correlations": pd.DataFrame(columns=["evaluator", "method", "estimate", "confidence", "ci_low",
                                                         "ci_high", "ci_method"]),
         "alignment_delta_by_dimension": pd.DataFrame({"dimension": names, "mean_delta": [0.5, -0.2],
                                                       "ci_low": [0.1, -0.6], "ci_high": [0.9, 0.2]}),
         "alignment_agreement": pd.DataFrame({"evaluator_a": [DOLLAR], "evaluator_b": [LONG], "agreement": [0.5]}),
         "alignment_top_score": pd.DataFrame({"evaluator": names, "share_5": [0.1, 0.2]}),
         "generation_vs_delta": pd.DataFrame({"dimension": names, "generated_rows": [3, 5],
                                              "mean_delta": [0.5, -0.2]}),
         "language_reach": pd.DataFrame({"reach": [1, 2, 1], "harmful": [True, False, True]}),
         "language_reach_summary": pd.DataFrame({"harmful": [True, False], "median_reach": [1.0, 2.0]}),
         "marked_group_shift": pd.DataFrame({"language": names, "status": ["marked", "unmarked"],
                                             "shift": [0.5, -0.5]}),
         "language_jaccard_harmful": pd.DataFrame([[1.0, 0.4], [0.4, 1.0]], columns=names).assign(language=names)}
    nan = float("nan")
    rate = pd.DataFrame([[1.0, 0.5], [0.5, 1.0]], index=names, columns=names)
    return [summary_section(t, threshold=4.0), alignment_section(t, {"human_vs_llm": nan, "inter_llm": nan}),
            agreement_section(t, rate, {"human_vs_llm": nan, "inter_llm": 0.5}), own_section(t),
            language_section(t)]


def _each_in_a_section(make: Callable[[], list[Any]]) -> Callable[[], list[Any]]:
    def sections() -> list[Any]:
        from stereoprobe.report.html import Section

        s = Section("plots")
        for fig in make():
            s.figure(fig)
        return [s]

    return sections


def _globalbias_sections() -> list[Any]:
    from stereoprobe.globalbias.report import _figure_sections

    return _figure_sections(_globalbias_scores())


def _leaderboard_figures() -> list[Any]:
    from stereoprobe.leaderboard.headline import METRIC_COLUMNS
    from stereoprobe.leaderboard.report import _forest

    rows = [(DOLLAR, "dbb", "count_s_ge_20", 3.0, 1.0, 5.0, 100, "lower", ""),
            (LONG, "dbb", "count_s_ge_20", 6.0, 4.0, 8.0, 100, "lower", "")]
    return [_forest(pd.DataFrame([dict(zip(METRIC_COLUMNS, r)) for r in rows]), "dbb")]


REPORTS: dict[str, Callable[[], list[Any]]] = {
    "dbb": _each_in_a_section(_dbb_figures),
    "globalbias": _globalbias_sections,
    "associations": _each_in_a_section(_mining_figures),
    "judge": _judge_sections,
    "leaderboard": _each_in_a_section(_leaderboard_figures),
}


@pytest.mark.parametrize("report", sorted(REPORTS))
def test_every_plot_draws_hostile_labels_literally_and_readably(report: str, monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _spy(monkeypatch)
    sections = REPORTS[report]()
    assert len(figures) == sum(len(s.figures) for s in sections) > 0
    for texts in figures:
        _assert_literal_and_readable(texts)
    # a figure with no label from the data (a scatter of two ratings) or one model's histogram draws fewer
    named = [[t.get_text() for t in texts] for texts in figures
             if any(DOLLAR in t.get_text() or LONG[:12] in t.get_text() for t in texts)]
    assert named
    assert any(DOLLAR in s for strings in named for s in strings)  # the "$" name exactly as written
    assert any(LONG[:12] in s and s.endswith("…") for strings in named for s in strings)
