"""The group-mean permutation test against exact enumeration and its type I error by simulation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from stereoprobe.stats.permutation import group_mean_permutation_test


def test_permutation_p_matches_exact_enumeration():
    vals = np.array([0.1, 0.2, 0.5, 0.7, 0.4, 0.9])
    labs = np.array(["a", "a", "b", "b", "c", "c"])
    obs = vals[:2].mean()
    combos = [np.mean(vals[list(c)]) for c in itertools.combinations(range(6), 2)]
    exact = np.mean([m <= obs + 1e-12 for m in combos])
    p = group_mean_permutation_test(vals, labs, 20000, np.random.default_rng(0))["a"]
    assert p == pytest.approx(exact, abs=0.01)


def test_permutation_p_never_zero_and_seeded():
    vals, labs = [0.0, 0.0, 5.0, 5.0, 6.0, 6.0], list("aabbcc")
    p = group_mean_permutation_test(vals, labs, 99, np.random.default_rng(1))
    assert p["a"] >= 1 / 100 and list(p) == ["a", "b", "c"]
    assert p == group_mean_permutation_test(vals, labs, 99, np.random.default_rng(1))


def test_permutation_type_i_error_by_simulation():
    """Exchangeable values (no group effect): p < 0.05 for about 5% of the groups."""
    rng = np.random.default_rng(2)
    reps, ps = 300, []
    for _ in range(reps):
        ps.append(group_mean_permutation_test(rng.normal(size=20), np.repeat(["x", "y"], 10), 199, rng)["x"])
    rate = float(np.mean(np.asarray(ps) < 0.05))
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.05) / reps
    assert lo <= rate <= hi
