"""A star and the interval beside it come from one procedure and always agree (issue 29.3).

Across many random tables of paired comparisons (continuous and binary outcomes clustered as in DBB and
GlobalBias, independent shares as in StereoTales): the unadjusted interval excludes 0 exactly when its p-value
is below 1 − level; the FCR-adjusted interval excludes 0 exactly when the row's BH q-value is below α (the
star); and every matrix cell shows a star exactly when its interval excludes 0.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from stereoprobe.leaderboard.pairwise import (
    ALPHA, PAIRWISE_COLUMNS, add_q_values, compare_binary, compare_continuous, compare_shares, pair_row)
from stereoprobe.leaderboard.report import matrix
from stereoprobe.stats.multiple_testing import adjust_bh


def _excludes_zero(lo: float, hi: float) -> bool:
    return lo > 0 or hi < 0


def _random_row(rng: np.random.Generator, i: int) -> dict:
    kind = i % 3
    n_items = int(rng.integers(4, 80))
    clusters = rng.integers(0, int(rng.integers(2, 15)), n_items).astype(str)
    shift = float(rng.choice([0.0, 0.0, 0.1, 0.3, 1.0]))
    if kind == 0:
        base = rng.normal(0, 1, n_items)
        est, ci, p = compare_continuous(base + shift + rng.normal(0, 1, n_items), base + rng.normal(0, 1, n_items),
                                        clusters, 0, 0, 0.95)
        metric = "mean"
    elif kind == 1:
        x = rng.random(n_items) < 0.4 + shift / 3
        y = rng.random(n_items) < 0.4
        est, ci, p = compare_binary(x, y, clusters, 0, 0, 0.95)
        metric = "share"
    else:
        n1, n2 = int(rng.integers(1, 200)), int(rng.integers(1, 200))
        k1, k2 = int(rng.binomial(n1, min(0.95, 0.3 + shift / 3))), int(rng.binomial(n2, 0.3))
        est, ci, p = compare_shares(k1, n1, k2, n2, 0.95)
        metric = "share[x]"
    return pair_row("probe", metric, f"m{i:03d}a", f"m{i:03d}b", est, ci, p, n_items, "test")


@pytest.mark.parametrize("seed", range(40))
def test_star_and_interval_always_agree(seed):
    rng = np.random.default_rng(seed)
    rows = [_random_row(rng, i) for i in range(int(rng.integers(1, 60)))]
    table = add_q_values(pd.DataFrame(rows))
    tested = table[table["p_value"].notna()]
    assert len(tested)
    for r in tested.itertuples(index=False):
        # unadjusted: p < 0.05 exactly when the 95% interval excludes 0
        assert (r.p_value < 0.05) == _excludes_zero(r.ci_low, r.ci_high), r
        # the star (BH q < α) exactly when the FCR-adjusted interval excludes 0
        assert (r.q_value < ALPHA) == _excludes_zero(r.fcr_low, r.fcr_high), r
    # the q-values are BH's, and the FCR level is 1 − max(R, 1)·α/m
    assert np.allclose(tested["q_value"], adjust_bh(tested["p_value"].to_numpy()))
    selected = int((tested["q_value"] < ALPHA).sum())
    assert np.allclose(tested["fcr_level"], 1 - max(selected, 1) * ALPHA / len(tested))
    assert list(table.columns) == [c for c in PAIRWISE_COLUMNS]


def test_matrix_cells_star_exactly_when_interval_excludes_zero():
    rng = np.random.default_rng(99)
    rows = []
    models = [f"m{i}" for i in range(6)]
    for i, a in enumerate(models):
        for b in models[i + 1:]:
            n = 40
            base = rng.normal(0, 1, n)
            shift = float(rng.choice([0.0, 0.4, 1.0]))
            est, ci, p = compare_continuous(base + shift + rng.normal(0, 1, n), base + rng.normal(0, 1, n),
                                            rng.integers(0, 8, n).astype(str), 0, 0, 0.95)
            rows.append(pair_row("dbb", "mean_s", a, b, est, ci, p, n, "test"))
    table = add_q_values(pd.DataFrame(rows))
    cells = matrix(table, "dbb", "mean_s", models).drop(columns=["model (row − column)"]).to_numpy().ravel()
    seen = {True: 0, False: 0}
    for cell in cells:
        if not isinstance(cell, str):
            continue
        lo, hi = map(float, re.search(r"\[([^,]+), ([^\]]+)\]", cell).groups())
        starred = cell.endswith("*")
        seen[starred] += 1
        assert starred == _excludes_zero(lo, hi), cell
    assert seen[True] and seen[False]  # both kinds of cell occur


def test_observed_contradictions_cannot_recur():
    # a star on an interval containing 0 (byte − token) and an interval excluding 0 without a star (GPT-4o −
    # Llama-3-70B) came from a Wilcoxon/McNemar p beside a bootstrap interval; now p inverts the interval
    rng = np.random.default_rng(5)
    n = 60
    x = rng.normal(0.08, 0.25, n)
    est, ci, p = compare_continuous(x, np.zeros(n), rng.integers(0, 10, n).astype(str), 0, 0, 0.95)
    assert (p < 0.05) == _excludes_zero(*ci)
