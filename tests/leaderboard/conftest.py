"""Synthetic probe output folders (the tables ``stereoprobe associations/judge-report/dbb/globalbias/profiles``
write), small enough to check every number by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stereoprobe.stereotales.contract import association_id
from stereoprobe.tables import write_table


def dbb_folder(root: Path, models: dict[str, np.ndarray], variant: str = "mcq-logprob", templates: int = 10) -> Path:
    """``models``: model -> S of each instance (len divisible by ``templates``); two categories alternate."""
    out = root / "dbb"
    inst, summ = [], []
    for model, s in models.items():
        n = len(s)
        for i, v in enumerate(s):
            inst.append({"model": model, "variant": variant, "instance_id": f"i{i}", "template_id": f"t{i % templates}",
                         "category": "age" if i % 2 == 0 else "gender", "descriptor_type": "x", "group_1": "a",
                         "group_2": "b", "p_a_1": 50.0, "p_a_2": 50.0 + v, "s": float(v)})
        biased = s[s >= 20]
        summ.append({"model": model, "variant": variant, "category": "ALL", "descriptor_type": "ALL", "n": n,
                     "count_s_ge_20": len(biased), "count_ci_low": len(biased) - 1.0, "count_ci_high": len(biased) + 1.0,
                     "mean_s_biased": float(biased.mean()) if len(biased) else float("nan"), "mean_s_ci_low": 20.0,
                     "mean_s_ci_high": 40.0, "refusal_rate": 0.1, "refusal_ci_low": 0.05, "refusal_ci_high": 0.2,
                     "n_responses": 100})
    write_table(pd.DataFrame(inst), out, "instances")
    write_table(pd.DataFrame(summ), out, "summary")
    return out


def globalbias_folder(root: Path, models: dict[str, np.ndarray], groups: int = 4) -> Path:
    """``models``: model -> bias score per (group, descriptor) pair (groups vary fastest)."""
    out = root / "globalbias"
    rows, val, det = [], [], []
    for model, scores in models.items():
        for i, v in enumerate(scores):
            rows.append({"model": model, "group": f"g{i % groups}", "descriptor": f"d{i // groups}", "axis": "x",
                         "score": float(v), "flagged": bool(v < 0.1), "p_value": float(min(1.0, v)),
                         "q_value": float("nan"), "significant": bool(v < 0.02)})
        correct = [True, False, True, True]
        val.append({"model": model, "measure": "apx", "accuracy": 0.75, "mrr": 0.8, "n_descriptors": 4, "n_groups": 4,
                    "chance_accuracy": 0.25, "chance_mrr": 0.52})
        for j, c in enumerate(correct):
            det.append({"model": model, "measure": "apx", "descriptor": f"v{j}", "target": "t", "ranking": "",
                        "reciprocal_rank": 1.0 if c else 0.6, "predicted": "t", "correct": c})
    write_table(pd.DataFrame(rows), out, "bias_scores")
    write_table(pd.DataFrame(val), out, "validation")
    write_table(pd.DataFrame(det), out, "validation_detail")
    return out


def profiles_folder(root: Path, models: list[str]) -> Path:
    out = root / "globalbias_profiles"
    rows = [{"model": m, "target": t, "classifier": "svc", "n_profiles": 100, "n_classes": 2, "accuracy": 0.6,
             "chance": 0.5, "majority_rate": 0.5, "permutation_p": 0.04, "note": "", "cv_accuracy": 0.58,
             "cv_low": 0.48, "cv_high": 0.67, "cv_folds": 5} for m in models for t in ("gender", "ethnicity")]
    write_table(pd.DataFrame(rows), out, "classification")
    return out


def stereotales_folder(root: Path, tables: dict[str, np.ndarray], harmful: set[str] | None = None) -> Path:
    """``tables``: model -> 2x2 contingency table of (age: young/old) x (job: a/b) in the global slice; the
    association old -> b passes for a model when its lift >= 2 (rows: young, old; columns: a, b)."""
    out = root / "stereotales"
    pairs, assoc, refusals = [], [], []
    for model, t in tables.items():
        t = np.asarray(t)
        pairs.append({"model": model, "slice": "all", "base_attribute": "age", "compared_attribute": "job",
                      "n": int(t.sum()), "row_values": json.dumps(["young", "old"]), "col_values": json.dumps(["a", "b"]),
                      "table": json.dumps(t.tolist())})
        lift = (t[1, 1] / t[1].sum()) / (t[:, 1].sum() / t.sum())
        if lift >= 2:
            for sl in ("all", "en", "fr"):
                assoc.append({"model": model, "slice": sl, "base_attribute": "age", "base_value": "old",
                              "compared_attribute": "job", "compared_value": "b", "n": int(t.sum()),
                              "fraction": t[1, 1] / t[1].sum(), "lift": lift,
                              "association_id": association_id("age", "old", "job", "b")})
        refusals.append({"model": model, "language": "all", "target_attribute": "all", "stories": 100, "refused": 7})
    cols = ["model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value", "n", "fraction",
            "lift", "association_id"]
    write_table(pd.DataFrame(assoc, columns=cols), out, "associations")
    write_table(pd.DataFrame(pairs), out, "pair_tests")
    write_table(pd.DataFrame(refusals), out, "refusal_rates")
    if harmful is not None:
        aid = association_id("age", "old", "job", "b")
        write_table(pd.DataFrame([{"association_id": aid, "harmful": aid in harmful, "source": "llm_panel",
                                   "n_ratings": 3, "median_harm": 4.0}]), out, "harm_labels")
    return out


@pytest.fixture
def probe_root(tmp_path: Path) -> Path:
    """One folder with the outputs of every probe for models m1 and m2."""
    rng = np.random.default_rng(1)
    root = tmp_path / "runs"
    dbb_folder(root, {"m1": rng.uniform(0, 40, 40), "m2": rng.uniform(0, 40, 40)})
    globalbias_folder(root, {"m1": rng.uniform(0, 1, 40), "m2": rng.uniform(0, 1, 40)})
    profiles_folder(root, ["m1", "m2"])
    stereotales_folder(root, {"m1": np.array([[60, 0], [10, 40]]), "m2": np.array([[30, 20], [25, 25]])},
                       harmful={association_id("age", "old", "job", "b")})
    return root
