"""The leaderboard's forest plots read right (issue 35.9): at most two panels a row, each wide enough at the
page's width, titled with the figure's label (not its column name), ticks in 9-pt type, and one model order
(by name, top to bottom) in every panel whatever each panel's ranking."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from stereoprobe.leaderboard.headline import METRIC_COLUMNS  # noqa: E402
from stereoprobe.leaderboard.report import FOREST_PT, MAIN_METRICS, METRIC_TITLES, _forest  # noqa: E402


def test_globalbias_strip_layout_titles_and_one_model_order() -> None:
    names = MAIN_METRICS["globalbias"]
    assert len(names) >= 4
    models = ["zeta", "alpha", "mid"]
    rows = []
    for k, metric in enumerate(names):
        for i, m in enumerate(models):
            est = float((i + k) % 3 + 1)  # a different ranking in every panel
            rows.append((m, "globalbias", metric, est, est - 0.5, est + 0.5, 100, "lower", ""))
    fig = _forest(pd.DataFrame([dict(zip(METRIC_COLUMNS, r)) for r in rows]), "globalbias")
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert len(panels) == len(names)
    width_in = fig.get_size_inches()[0]
    assert width_in / min(len(names), 2) >= 4.5  # about 500 px a panel at the report's 110 dpi
    titles = [ax.get_title() for ax in panels]
    assert titles == [METRIC_TITLES["globalbias"][n] for n in names]
    assert all("_" not in t for t in titles)  # labels, not raw column names
    for ax in panels:
        ticks = [t.get_text() for t in ax.get_yticklabels()]
        positions = list(ax.get_yticks())
        order = [t for _, t in sorted(zip(positions, ticks), reverse=True)]  # top to bottom
        assert order == sorted(models)
        assert all(t.get_fontsize() >= FOREST_PT for t in ax.get_yticklabels() + ax.get_xticklabels())
