"""Simulations of the paired model-vs-model tests: two models drawn from the same distribution give false
discoveries at no more than the nominal rate; a planted difference is found."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stereoprobe.dbb.leaderboard import dbb_pairwise
from stereoprobe.globalbias.leaderboard import globalbias_pairwise
from stereoprobe.leaderboard.pairwise import add_q_values
from stereoprobe.stereotales.mining.leaderboard import stereotales_pairwise
from stereoprobe.leaderboard.sources import Sources

REPS = 100
# the nominal 5% plus three binomial standard errors of the simulated rate (a one-sided check)
LIMIT = 0.05 + 3 * math.sqrt(0.05 * 0.95 / REPS)


def _dbb(s_a: np.ndarray, s_b: np.ndarray, templates: int = 10) -> Sources:
    rows = [{"model": m, "variant": "mcq-logprob", "instance_id": f"i{i}", "template_id": f"t{i % templates}",
             "category": "age", "s": float(v)} for m, s in (("a", s_a), ("b", s_b)) for i, v in enumerate(s)]
    return Sources(tables={"dbb": {"instances": pd.DataFrame(rows)}})


def _instance_effects(rng: np.random.Generator, n: int) -> np.ndarray:
    # each instance has its own difficulty shared by both models (the pairing matters)
    return rng.uniform(0, 40, n)


def test_dbb_identical_models_false_positive_rate():
    rng = np.random.default_rng(11)
    hits = {"mean_s": 0, "share_s_ge_20": 0}
    for _ in range(REPS):
        base = _instance_effects(rng, 60)
        a = np.clip(base + rng.normal(0, 5, 60), 0, 100)
        b = np.clip(base + rng.normal(0, 5, 60), 0, 100)
        for r in dbb_pairwise(_dbb(a, b), n_boot=2000):
            if r["metric"] in hits:
                hits[r["metric"]] += r["p_value"] < 0.05
    assert hits["mean_s"] / REPS <= LIMIT
    assert hits["share_s_ge_20"] / REPS <= LIMIT


def test_dbb_planted_difference_found():
    rng = np.random.default_rng(12)
    found = 0
    for _ in range(50):
        base = _instance_effects(rng, 60)
        a = np.clip(base + 8 + rng.normal(0, 5, 60), 0, 100)  # model a: S larger by 8 points
        b = np.clip(base + rng.normal(0, 5, 60), 0, 100)
        r = next(r for r in dbb_pairwise(_dbb(a, b), n_boot=200) if r["metric"] == "mean_s")
        found += r["p_value"] < 0.05 and r["estimate"] > 0 and r["ci_low"] > 0
    assert found >= 48


def _gb(score_a: np.ndarray, score_b: np.ndarray, groups: int = 5) -> Sources:
    rows = [{"model": m, "group": f"g{i % groups}", "descriptor": f"d{i // groups}", "score": float(v),
             "flagged": bool(v < 0.05)} for m, s in (("a", score_a), ("b", score_b)) for i, v in enumerate(s)]
    return Sources(tables={"globalbias": {"bias_scores": pd.DataFrame(rows)}})


def test_globalbias_identical_and_planted():
    rng = np.random.default_rng(13)
    null_hits = 0
    for _ in range(REPS):
        base = rng.uniform(0, 1, 100)
        a = np.clip(base + rng.normal(0, 0.05, 100), 0, 1)
        b = np.clip(base + rng.normal(0, 0.05, 100), 0, 1)
        r = next(r for r in globalbias_pairwise(_gb(a, b), n_boot=2000) if r["metric"] == "score")
        null_hits += r["p_value"] < 0.05
    assert null_hits / REPS <= LIMIT
    base = rng.uniform(0, 1, 100)
    a = np.clip(base - 0.05 + rng.normal(0, 0.05, 100), 0, 1)
    r = next(r for r in globalbias_pairwise(_gb(a, base), n_boot=200) if r["metric"] == "score")
    assert r["p_value"] < 1e-4 and r["ci_high"] < 0


def _st(tables: dict[str, np.ndarray], assoc_models: list[str]) -> Sources:
    import json

    pairs = [{"model": m, "slice": "all", "base_attribute": "age", "compared_attribute": "job",
              "row_values": json.dumps(["young", "old"]), "col_values": json.dumps(["a", "b"]),
              "table": json.dumps(np.asarray(t).tolist())} for m, t in tables.items()]
    assoc = [{"model": m, "slice": "all", "base_attribute": "age", "base_value": "old", "compared_attribute": "job",
              "compared_value": "b"} for m in assoc_models]
    cols = ["model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value"]
    return Sources(tables={"stereotales": {"pair_tests": pd.DataFrame(pairs),
                                           "associations": pd.DataFrame(assoc, columns=cols)}})


def test_stereotales_identical_and_planted():
    rng = np.random.default_rng(14)
    null_hits = 0
    for _ in range(REPS):
        # 100 stories per base value; P(job=b | old) = 0.4 for both models
        ta = np.array([[0, 0], [0, 0]])
        tb = ta.copy()
        for t in (ta, tb):
            k_old, k_young = rng.binomial(100, 0.4), rng.binomial(100, 0.2)
            t[:] = [[100 - k_young, k_young], [100 - k_old, k_old]]
        rows = stereotales_pairwise(_st({"a": ta, "b": tb}, ["a", "b"]), n_boot=2000)
        r = next(r for r in rows if r["metric"].startswith("share["))
        null_hits += r["p_value"] < 0.05
    assert null_hits / REPS <= LIMIT
    ta = np.array([[80, 20], [30, 70]])  # P(b | old) = 0.7 vs 0.4
    tb = np.array([[80, 20], [60, 40]])
    rows = stereotales_pairwise(_st({"a": ta, "b": tb}, ["a"]), n_boot=200)
    r = next(r for r in rows if r["metric"] == "share[age=old->job=b]")
    assert r["estimate"] == 0.7 - 0.4 and r["p_value"] < 1e-3 and r["ci_low"] > 0
    j = next(r for r in rows if r["metric"] == "jaccard")
    assert j["estimate"] == 0.0 and math.isnan(j["p_value"])


def test_bh_over_many_null_rows_rarely_discovers():
    # 40 independent null comparisons in one table: BH at 5% rejects nothing in most tables
    rng = np.random.default_rng(15)
    tables_with_discovery = 0
    for _ in range(50):
        p = rng.uniform(0, 1, 40)
        q = add_q_values(pd.DataFrame({"p_value": p}))["q_value"]
        tables_with_discovery += bool((q < 0.05).any())
    assert tables_with_discovery / 50 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 50)
