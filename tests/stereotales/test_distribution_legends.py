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


def test_stacked_bars_are_the_bars_barh_draws() -> None:
    """One collection per panel (issue 45.2): the same rectangles, colours and axis limits as one ``barh`` per
    value, stacked."""
    import matplotlib.pyplot as plt
    import numpy as np

    from stereoprobe.stereotales.mining.report import _stacked_bars

    widths = np.array([[0.1, 0.3, 0.6], [0.25, 0.25, 0.5], [0.0, 0.7, 0.3]])
    colors = ["#112233", "#dddddd", "#aaaaaa"]
    y = np.arange(3)
    fig, (a, b) = plt.subplots(1, 2)
    left = np.zeros(3)
    for k, c in enumerate(colors):
        a.barh(y, widths[:, k], left=left, color=c)
        left = left + widths[:, k]
    _stacked_bars(b, y, widths, colors)
    want = [(p.get_bbox().bounds, p.get_facecolor()) for p in a.patches]
    coll = b.collections[0]
    got = [(tuple(np.r_[v.min(axis=0), v.max(axis=0) - v.min(axis=0)]), tuple(f))
           for v, f in zip((p.vertices[:4] for p in coll.get_paths()), coll.get_facecolors())]
    assert len(got) == len(want) == 9
    for (gb, gf), (wb, wf) in zip(got, want):
        assert np.allclose(gb, wb, rtol=0, atol=1e-12) and np.allclose(gf, wf)
    assert np.allclose(b.get_ylim(), a.get_ylim(), rtol=0, atol=1e-9)  # the last bit of the margin may differ
    plt.close(fig)


def test_model_names_are_drawn_once_a_row() -> None:
    """Every panel lists the models in the same order, so only the first panel of a row draws their names
    (issue 45, the report: two thirds of the figure's text, the largest cost of the report)."""
    models = ["b/model", "a/model", "c/model"]
    rows = [{"model": m, "language": "all", "attribute": a, "value": v, "share": 0.5}
            for m in models for a in ("age", "gender", "religion", "income_level") for v in ("one", "unknown")]
    fig = _plot_distributions(pd.DataFrame(rows))
    fig.canvas.draw()
    shown = [[t.get_text() for t in ax.get_yticklabels() if t.get_visible() and t.get_text()] for ax in fig.axes]
    assert shown[0] == shown[3] == sorted(models)  # the first panel of each row (three panels a row)
    assert shown[1] == shown[2] == []  # the same rows, unlabelled
    assert all(ax.get_ylim() == fig.axes[0].get_ylim() for ax in fig.axes[:4])
