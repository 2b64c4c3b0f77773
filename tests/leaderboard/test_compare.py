"""The leaderboard's comparison table: marks by direction, ties, left-out figures, plain-language lines, and
the page's layout for many models (hand-built metric rows; marks checked by hand)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.leaderboard.compare import comparison_columns, comparison_table, marks, model_readings
from stereoprobe.leaderboard.headline import METRIC_COLUMNS

from .conftest import dbb_folder

NAN = math.nan


def _rows(*rows):
    return pd.DataFrame([dict(zip(METRIC_COLUMNS, r)) for r in rows], columns=METRIC_COLUMNS)


# model, probe (board), metric, estimate, ci_low, ci_high, n, better, method
METRICS = _rows(
    ("a", "dbb", "count_s_ge_20", 3.0, 1.0, 5.0, 100, "lower", ""),
    ("b", "dbb", "count_s_ge_20", 9.0, 6.0, 12.0, 100, "lower", ""),
    ("c", "dbb", "count_s_ge_20", 4.0, 2.0, 6.0, 100, "lower", ""),
    ("a", "dbb", "mean_s_biased", NAN, NAN, NAN, 0, "lower", ""),
    ("b", "dbb", "mean_s_biased", NAN, NAN, NAN, 0, "lower", ""),
    ("c", "dbb", "mean_s_biased", NAN, NAN, NAN, 0, "lower", ""),
    ("a", "globalbias", "validation_accuracy", 0.50, 0.30, 0.70, 10, "higher", ""),
    ("b", "globalbias", "validation_accuracy", 0.90, 0.60, 0.98, 10, "higher", ""),
    ("c", "globalbias", "validation_accuracy", 0.90, 0.60, 0.98, 10, "higher", ""),
    ("a", "stereotales", "language_reach", 2.0, 1.0, 3.0, 5, "", ""),
    ("b", "stereotales", "language_reach", 5.0, 4.0, 6.0, 5, "", ""),
)


def _column(key):
    shown, _ = comparison_columns(METRICS)
    return next(c for c in shown if c.key == key)


def test_marks_only_where_separated_else_tied_groups():
    # lower is better: a [1, 5] overlaps c [2, 6]: tied best; b [6, 12] touches c at 6: tied worst; c is in both
    assert marks(METRICS, _column("dbb.count_s_ge_20")) == {"a": "tied best", "b": "tied worst", "c": ""}
    # higher is better: every interval overlaps the top ones' ([0.3, 0.7] vs [0.6, 0.98]): nothing established
    assert marks(METRICS, _column("globalbias.validation_accuracy")) == {"a": "", "b": "", "c": ""}
    # a figure with no direction is never marked
    assert marks(METRICS, _column("stereotales.language_reach")) == {"a": "", "b": ""}
    # separated: a's interval overlaps no other -> best; b and c overlap each other at the bottom -> tied worst
    clear = _rows(("a", "dbb", "count_s_ge_20", 1.0, 0.5, 1.5, 100, "lower", ""),
                  ("b", "dbb", "count_s_ge_20", 8.0, 6.0, 10.0, 100, "lower", ""),
                  ("c", "dbb", "count_s_ge_20", 9.0, 7.0, 11.0, 100, "lower", ""))
    col = next(c for c in comparison_columns(clear)[0] if c.key == "dbb.count_s_ge_20")
    assert marks(clear, col) == {"a": "best", "b": "tied worst", "c": "tied worst"}
    assert marks(clear, col, demo=True) == {"a": "", "b": "", "c": ""}  # demo pages: no badges
    # a model without an interval: separation cannot be shown
    no_ci = _rows(("a", "dbb", "count_s_ge_20", 1.0, NAN, NAN, 100, "lower", ""),
                  ("b", "dbb", "count_s_ge_20", 8.0, 6.0, 10.0, 100, "lower", ""))
    assert marks(no_ci, col) == {"a": "", "b": ""}


@pytest.mark.parametrize("seed", range(30))
def test_a_separated_mark_never_sits_on_overlapping_intervals(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    est = rng.normal(0, 3, k)
    half = rng.uniform(0.1, 3, k)
    rows = _rows(*[(f"m{i}", "dbb", "count_s_ge_20", est[i], est[i] - half[i], est[i] + half[i], 100, "lower", "")
                   for i in range(k)])
    col = next(c for c in comparison_columns(rows)[0] if c.key == "dbb.count_s_ge_20")
    got = marks(rows, col)
    for m, mark in got.items():
        if mark in ("best", "worst"):
            i = int(m[1:])
            assert all(est[i] - half[i] > est[j] + half[j] or est[i] + half[i] < est[j] - half[j]
                       for j in range(k) if j != i)
            assert (est[i] == est.min()) == (mark == "best")


def test_figures_undefined_for_every_model_are_left_out():
    shown, left_out = comparison_columns(METRICS)
    # NaN for every model, or no row at all (no judge report: no harmful count) -> left out, with one line
    assert {"dbb.mean_s_biased", "stereotales.harmful", "globalbias.flagged"} <= {c.key for c in left_out}
    assert [c.key for c in shown] == ["stereotales.language_reach", "dbb.count_s_ge_20",
                                      "globalbias.validation_accuracy"]
    assert "dbb.mean_s_biased" not in [c.key for c in shown]
    table = comparison_table(METRICS)
    assert list(table["model"]) == ["a", "b", "c"]
    assert not any("mean S" in c for c in table.columns)
    cell = table.loc[table["model"] == "a", "DBB · biased instances (S ≥ 20)"].item()
    assert cell == "3 [1.0, 5.0] (tied best)"  # a count: whole number, its bounds to one decimal
    assert table.loc[table["model"] == "c", "StereoTales · language reach"].item() == "–"


def test_readings_say_lowest_highest_and_overlap():
    r = model_readings(METRICS)
    # a: tied lowest count ([1, 5] overlaps c's [2, 6]: ≈); the accuracies all overlap: not placed
    assert r["a"] == "Lowest of the 3 models on DBB biased instances (S ≥ 20) ≈."
    assert r["b"] == "Highest of the 3 models on DBB biased instances (S ≥ 20) ≈."
    assert r["c"] == "Not separated from the other models on any figure of the 3 compared."
    clear = _rows(("a", "dbb", "count_s_ge_20", 3.0, 2.0, 4.0, 100, "lower", ""),
                  ("b", "dbb", "count_s_ge_20", 9.0, 8.0, 10.0, 100, "lower", ""))
    assert model_readings(clear) == {"a": "Lowest of the 2 models on DBB biased instances (S ≥ 20).",
                                     "b": "Highest of the 2 models on DBB biased instances (S ≥ 20)."}
    alone = _rows(("a", "dbb", "count_s_ge_20", 3.0, 2.0, 4.0, 100, "lower", ""),
                  ("b", "globalbias", "flagged", 9.0, 8.0, 10.0, 100, "lower", ""))
    assert model_readings(alone)["a"].startswith("No figure in common")  # two models, no shared figure
    one = METRICS[METRICS["model"] == "a"]
    assert model_readings(one)["a"].startswith("One model")


def test_page_starts_with_the_comparison_and_scales_to_20_models(tmp_path):
    rng = np.random.default_rng(0)
    # 200 instances each (model-19: 400): the two extreme counts (0 and about 400 biased) lie beyond the exact
    # Poisson intervals of the others (about 105 to 190), so each extreme has a badge of its own
    models = {f"model-{i:02d}": rng.uniform(0, 40, 200) + i for i in range(1, 19)}
    models = {"model-00": rng.uniform(0, 19, 200), **models, "model-19": rng.uniform(20, 60, 400)}
    root = tmp_path / "r"
    dbb_folder(root, models)
    out = tmp_path / "lb"
    assert main(["leaderboard", str(root), "--out", str(out), "--n-boot", "20", "--quiet"]) == 0
    page = (out / "leaderboard.html").read_text()
    body = page[page.index("<body>"):]
    first = re.search(r'<section id="([^"]+)"', body)
    assert first and first.group(1) == "compare" and "<nav>" not in body  # the comparison is the first block
    table = body[body.index('<table class="sortable comparison"'):]
    table = table[:table.index("</table>")]
    body_rows = table[table.index("<tbody>"):]
    assert body_rows.count("<tr>") == 20 and 'class="sortrow"' in table  # one row per model; sortable header row
    assert body.count("<li><b>model-") == 20  # one plain-language line per model
    assert table.count('<span class="badge best">') >= 1 and table.count('<span class="badge worst">') >= 1
    comp = pd.read_csv(out / "comparison.csv")
    assert len(comp) == 20 and "reading" in comp.columns
    assert "<details><summary>" in body  # per-probe tables collapsed


def test_one_precision_per_column_kind():
    """Issue 35.9: a column never mixes precisions: counts whole (bounds to one decimal), shares to three
    decimals, whatever their magnitude."""
    table = comparison_table(_rows(
        ("a", "dbb", "count_s_ge_20", 3.0, 0.6, 8.8, 100, "lower", ""),
        ("b", "dbb", "count_s_ge_20", 120.0, 99.5, 143.2, 100, "lower", ""),
        ("a", "globalbias", "validation_accuracy", 0.5, 0.3, 0.7, 10, "higher", ""),
        ("b", "globalbias", "validation_accuracy", 0.05, 0.0123, 0.2, 10, "higher", "")))
    counts = [c.split(" (")[0] for c in table["DBB · biased instances (S ≥ 20)"]]  # marks left aside
    assert counts == ["3 [0.6, 8.8]", "120 [99.5, 143.2]"]
    shares = [c for c in table.columns if "accuracy" in c.lower()]
    assert shares and [c.split(" (")[0] for c in table[shares[0]]] == ["0.500 [0.300, 0.700]", "0.050 [0.012, 0.200]"]
