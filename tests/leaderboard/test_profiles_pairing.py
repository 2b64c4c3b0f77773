"""Profiles: the per-profile predictions of the reference 70/30 split (written by ``stereoprobe profiles``)
reproduce its accuracy, and the leaderboard compares two models on the test profiles they share (McNemar)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stereoprobe.globalbias import profiles as P
from stereoprobe.globalbias import ProfilesOptions, analyze_profiles, write
from stereoprobe.leaderboard import build_leaderboard

POOLS = {
    "occupation": ["teacher", "nurse", "engineer", "chef"],
    "socioeconomic_status": ["middle class", "working class", "upper class"],
    "sexual_orientation": ["heterosexual", "bisexual", "gay"],
    "religion": ["christian", "muslim", "buddhist", "none"],
    "physical_characteristics.hair_colour": ["black", "brown", "blonde"],
    "physical_characteristics.eye_colour": ["brown", "blue", "green"],
    "physical_characteristics.skin_colour": ["fair", "olive", "dark"],
    "physical_characteristics.build": ["slim", "athletic", "average"],
    "physical_characteristics.height": ["5.4", "5.8", "6.0"],
}
WORDS = ["kind", "brave", "curious", "calm", "witty", "loyal", "shy", "bold"]


def profiles(model: str, planted: bool, seed: int, n: int = 30) -> pd.DataFrame:
    """n profiles per ethnicity x gender group; ``planted``: religion gives the ethnicity away."""
    rng = np.random.default_rng(seed)
    rows = []
    for eth in ("ALPHA", "BETA"):
        for gen in ("F", "M"):
            for i in range(n):
                r = {k: str(rng.choice(v)) for k, v in POOLS.items()}
                if planted and rng.random() < 0.9:
                    r["religion"] = "jedi" if eth == "ALPHA" else "pastafarian"
                r["age"] = str(rng.integers(20, 60))
                for c in ("personality_traits", "negative_traits", "hobbies"):
                    r[c] = tuple(map(str, rng.choice(WORDS, 3, replace=False)))
                r.update(name=f"{eth}{gen}{i}", special_move="x", run_id="0", Ethnicity=eth, Gender=gen,
                         Group=str((eth, gen)), model=model)
                rows.append(r)
    return pd.DataFrame(rows)


def test_split_predictions_reproduce_the_accuracy():
    df = profiles("m", True, 0)
    pred = P.split_predictions(df)
    for target, col in P.TARGETS.items():
        g = pred[pred["target"] == target]
        assert len(g) == int(np.ceil(0.3 * len(df)))
        assert g["correct"].mean() == pytest.approx(P.svm_accuracy(df, col))
    assert pred["item_id"].str.endswith("|0").all() and pred.groupby("target")["item_id"].nunique().min() == len(g)


def test_leaderboard_pairs_profiles_of_two_models(tmp_path):
    for model, planted in (("planted", True), ("plain", False)):
        d = tmp_path / "in"
        d.mkdir(exist_ok=True)
        profiles(model, planted, 1).to_csv(d / f"{model}.csv", index=False)
    out = tmp_path / "profiles"
    write(analyze_profiles([tmp_path / "in"], ProfilesOptions(n_permutations=1, folds=2, ablation=False)), out)
    assert (out / "predictions.csv").is_file()
    lb = build_leaderboard([tmp_path / "profiles"], n_boot=50)
    r = lb.pairwise[lb.pairwise["metric"] == "svm_correct_ethnicity"].iloc[0]
    # same names, same split: every test profile is shared; the planted model is far more distinguishable
    assert r["model_a"] == "plain" and r["model_b"] == "planted" and r["n"] == 36
    assert r["estimate"] < -0.2 and r["p_value"] < 0.01
