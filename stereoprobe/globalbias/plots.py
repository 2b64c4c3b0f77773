"""GlobalBias figures: the per-descriptor bias-score plot with the 1% line (paper Figure 1)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from stereoprobe.globalbias.apx import Z_ONE_PERCENT
from stereoprobe.report.plot_text import TITLE_WIDTH, plot_label


def figure1_descriptors(scores: pd.DataFrame, n: int = 6) -> list[str]:
    """Descriptors worth a Figure 1 plot: those with flagged groups, most extreme first (the flagged group's
    distance below the 1% line, in standard deviations), else the descriptors with the lowest score spread."""
    s = scores.dropna(subset=["score"])
    if s.empty:
        return []
    stats = s.groupby("descriptor")["score"].agg(["mean", "std", "min"])
    stats["z_min"] = (stats["mean"] - stats["min"]) / stats["std"].where(stats["std"] > 0)
    flagged = set(s.loc[s["flagged"].fillna(False).astype(bool), "descriptor"]) if "flagged" in s else set()
    ranked = stats.assign(flag=stats.index.isin(flagged)).sort_values(["flag", "z_min"], ascending=[False, False])
    return list(ranked.index[:n])


def figure1(scores: pd.DataFrame, descriptor: str, z: float = Z_ONE_PERCENT) -> Any:
    """Bias score of every group for one descriptor, lowest (most associated) first, with the reference
    1% one-tailed line at mean - z * sd over the groups (orange); flagged groups in orange."""
    import matplotlib.pyplot as plt

    d = scores[scores["descriptor"] == descriptor].dropna(subset=["score"]).sort_values("score")
    mu, sd = d["score"].mean(), d["score"].std(ddof=1)
    line = mu - z * sd
    fig, ax = plt.subplots(figsize=(max(4.0, 0.22 * len(d) + 1.5), 3.2))
    colors = ["#dd8452" if v < line else "#4c72b0" for v in d["score"]]
    ax.bar(range(len(d)), d["score"], color=colors)
    ax.axhline(line, color="#dd8452", linestyle="--", linewidth=1.2, label=f"1% one-tailed (mean - {z:.3f} sd)")
    ax.set_xticks(range(len(d)), [plot_label(str(g).replace("_", " ")) for g in d["group"]], rotation=70, ha="right",
                  fontsize=7)
    ax.set_ylabel("bias score")
    ax.set_title(plot_label(f"{descriptor!r}: lower = stronger association", TITLE_WIDTH))
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig
