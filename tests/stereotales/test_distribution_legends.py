"""The attribute small multiples of the associations report have legends and ticks in 9-pt type or larger
(issue 35.9: the legends were 6 pt, about 6 px on the page)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from stereoprobe.stereotales.mining.report import _plot_distributions  # noqa: E402


def test_legends_and_ticks_are_at_least_9_pt() -> None:
    rows = [{"model": m, "language": "all", "attribute": a, "value": v, "share": 0.2}
            for m in ("m1", "m2") for a in ("age", "gender", "religion", "income_level")
            for v in ("one", "two", "three", "four", "unknown")]
    fig = _plot_distributions(pd.DataFrame(rows))
    axes = [ax for ax in fig.axes if ax.get_legend() is not None]
    assert len(axes) == 4
    for ax in axes:
        assert all(t.get_fontsize() >= 9 for t in ax.get_legend().get_texts())
        assert all(t.get_fontsize() >= 9 for t in ax.get_yticklabels() + ax.get_xticklabels())
