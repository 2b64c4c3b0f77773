"""The leaderboard's comparison table: marks by direction, ties, left-out figures, plain-language lines, and
the page's layout for many models (hand-built metric rows; marks checked by hand)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

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


def test_marks_follow_direction_and_ties_share():
    assert marks(METRICS, _column("dbb.count_s_ge_20")) == {"a": "best", "b": "worst", "c": ""}
    # higher is better; b and c tie at the top
    assert marks(METRICS, _column("globalbias.validation_accuracy")) == {"a": "worst", "b": "best", "c": "best"}
    # a figure with no direction is never marked
    assert marks(METRICS, _column("stereotales.language_reach")) == {"a": "", "b": ""}


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
    assert cell == "3 [1, 5] (best)"
    assert table.loc[table["model"] == "c", "StereoTales · language reach"].item() == "–"


def test_readings_say_lowest_highest_and_overlap():
    r = model_readings(METRICS)
    # a: lowest count (interval [1, 5] overlaps c's [2, 6]: ≈), lowest accuracy ([0.3, 0.7] vs [0.6, 0.98]: ≈)
    assert r["a"] == ("Lowest of the 3 models on DBB biased instances (S ≥ 20) ≈, GlobalBias validation accuracy ≈.")
    # b: highest count ([6, 12] vs c's [2, 6] touch at 6: ≈), highest accuracy, tied with c (the next other is a:
    # [0.6, 0.98] vs [0.3, 0.7] overlap)
    assert r["b"] == "Highest of the 3 models on DBB biased instances (S ≥ 20) ≈, GlobalBias validation accuracy ≈."
    assert r["c"] == "Highest of the 3 models on GlobalBias validation accuracy ≈."
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
    models = {f"model-{i:02d}": rng.uniform(0, 40, 20) + i for i in range(20)}
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
