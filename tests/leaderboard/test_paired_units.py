"""Paired GlobalBias rows are in the headline's units and names (issue 35.9): the flagged and significant
differences are differences of counts, and the validation rows are named as the headline figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stereoprobe.leaderboard import build_leaderboard

from .conftest import globalbias_folder


def test_paired_flagged_is_a_difference_of_counts_under_the_headline_names(tmp_path) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0, 0.3, 40), rng.uniform(0, 1, 40)
    folder = globalbias_folder(tmp_path / "r", {"m1": a, "m2": b})
    lb = build_leaderboard([str(folder)], n_boot=50)
    pw = lb.pairwise[lb.pairwise["probe"] == "globalbias"].set_index("metric")
    # the fixture flags a pair when its score < 0.1: counts by hand from the scores given
    diff = int((a < 0.1).sum()) - int((b < 0.1).sum())
    row = pw.loc["flagged"]
    assert {row["model_a"], row["model_b"]} == {"m1", "m2"}
    sign = 1 if row["model_a"] == "m1" else -1
    assert row["estimate"] == pytest.approx(sign * diff)
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"] and row["ci_high"] - row["ci_low"] > 1
    headline = set(lb.metrics.loc[lb.metrics["probe"] == "globalbias", "metric"])
    assert set(pw.index) - {"score"} <= headline  # every paired row but the score carries a headline's name
    assert not pd.isna(pw.loc["flagged", "fcr_low"]) or pd.isna(pw.loc["flagged", "p_value"])
