"""Two runs of one model whose outputs differ (as the demo's default and variant runs): the paired table finds the
difference, and the runs table tells the two rows apart by their recorded settings, not their folder names."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.leaderboard import build_leaderboard, write_leaderboard

from .conftest import globalbias_folder

MODEL = "transformers/default"


def _run(root: Path, scores: np.ndarray, model_args: dict) -> Path:
    folder = globalbias_folder(root, {MODEL: scores})
    run = {"task": "globalbias", "model": MODEL, "model_args": model_args, "model_roles": {}, "generate_config": {}}
    (folder / "run_info.json").write_text(json.dumps({"probe": "globalbias", "runs": [run]}))
    return folder


def test_pairwise_of_two_differing_runs_is_not_all_zeros(tmp_path) -> None:
    x = np.linspace(0.0, 1.0, 40)
    a = _run(tmp_path / "a", x, {})
    b = _run(tmp_path / "b", x / 2, {"score_first_token": True})
    lb = build_leaderboard([f"default={a}", f"first_token={b}"], n_boot=200)
    pw = lb.pairwise
    score = pw[(pw["probe"] == "globalbias") & (pw["metric"] == "score")].iloc[0]
    assert (score["model_a"], score["model_b"]) == ("default", "first_token")
    # mean over the 40 (group, descriptor) pairs of x - x/2 = mean(x)/2 = 0.25, by hand
    assert abs(score["estimate"] - 0.25) < 1e-12
    assert score["ci_low"] > 0 and score["p_value"] < 0.05
    assert (pw["estimate"].abs() > 0).any()
    runs = lb.runs.set_index("model")
    assert runs.loc["default", "settings"] == "provider defaults"
    assert runs.loc["first_token", "settings"] == "-M score_first_token=true"
    assert json.loads(runs.loc["first_token", "model_args"]) == {"score_first_token": True}
    assert set(runs["logged_model"]) == {MODEL}


def test_the_runs_table_is_written_and_shown(tmp_path) -> None:
    x = np.linspace(0.0, 1.0, 40)
    a = _run(tmp_path / "a", x, {})
    b = _run(tmp_path / "b", x / 2, {"score_first_token": True})
    out = tmp_path / "lb"
    write_leaderboard(build_leaderboard([f"default={a}", f"first_token={b}"], n_boot=100), out)
    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs["settings"]) == ["-M score_first_token=true", "provider defaults"]
    # in the CSV, a cell starting with "-" is not a formula for a spreadsheet (issue 34.4)
    assert sorted(pd.read_csv(out / "runs.csv")["settings"]) == ["'-M score_first_token=true", "provider defaults"]
    assert "-M score_first_token=true" in (out / "leaderboard.html").read_text(encoding="utf-8")
    info = json.loads((out / "run_info.json").read_text())
    assert {r["model"]: r["model_args"] for r in info["runs"]} == {"default": {}, "first_token": {"score_first_token": True}}
