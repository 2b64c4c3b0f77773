"""DBB's "Distribution of S" (issue 42.10): two runs' histograms sit side by side in each bin, opaque and
outlined, never two translucent bars on one spot that blend into a third colour."""

from __future__ import annotations

import pandas as pd
from matplotlib.patches import Rectangle

from stereoprobe.dbb.report import _plot_hist


def test_two_runs_bars_sit_side_by_side_opaque_and_outlined() -> None:
    s_a, s_b = [12.0, 12.5, 47.0], [13.0, 48.0, 49.0, 91.0]  # both runs in the bins [10, 15) and [45, 50)
    instances = pd.DataFrame({"model": ["m"] * 7, "variant": ["mcq"] * 3 + ["mcq_reversed"] * 4, "s": s_a + s_b})
    fig = _plot_hist(instances, 20.0)
    [ax] = fig.axes
    bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_height() > 0]
    heights = sorted((round(b.get_x(), 6), b.get_height()) for b in bars)
    assert sum(h for _, h in heights) == len(s_a) + len(s_b)  # every instance counted once
    spans = [(b.get_x(), b.get_x() + b.get_width()) for b in bars]
    for i, (x0, x1) in enumerate(spans):  # no two bars overlap: each run has its own slot in the bin
        assert all(x1 <= y0 + 1e-9 or y1 <= x0 + 1e-9 for j, (y0, y1) in enumerate(spans) if j != i)
    assert all((b.get_alpha() in (None, 1.0)) and b.get_edgecolor()[:3] == (0.0, 0.0, 0.0) for b in bars)
    assert len({b.get_facecolor() for b in bars}) == 2  # one colour per run, told apart by the legend
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["m [mcq]", "m [mcq_reversed]"]
