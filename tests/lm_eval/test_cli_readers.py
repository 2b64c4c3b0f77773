"""`stereoprobe dbb` and `stereoprobe globalbias` read the lm-eval CLI's `--log_samples` output of the shipped
tasks and report the same headline numbers as the tasks' own aggregations (lm-eval's dummy model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.lm_eval_tasks import include_path

LM_EVAL = Path(sys.executable).parent / "lm-eval"


@pytest.mark.slow  # ~35 s: the lm-eval CLI start and three post-processing commands
@pytest.mark.skipif(not LM_EVAL.exists(), reason="lm-eval CLI not installed")
def test_stereoprobe_commands_agree_with_lm_eval_aggregations(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    meta = {"source": "bundled", "faithful": False, "categories": "gender", "prompt": "stereoprobe"}
    subprocess.run([str(LM_EVAL), "run", "--model", "dummy", "--tasks", "dbb_mc", "globalbias", "--include_path",
                    str(include_path()), "--log_samples", "--output_path", str(tmp_path / "lm"),
                    "--metadata", json.dumps(meta)], check=True, env=env, capture_output=True)
    [results] = list((tmp_path / "lm").rglob("results_*.json"))
    lm = json.loads(results.read_text())["results"]

    assert main(["dbb", str(tmp_path / "lm"), "--out", str(tmp_path / "dbb")]) == 0
    summary = pd.read_csv(tmp_path / "dbb" / "summary.csv")
    overall = summary[(summary["category"] == "ALL") & (summary["variant"] == "mcq-logprob")].iloc[0]
    assert overall["count_s_ge_20"] == lm["dbb_mc"]["count_s_ge_20,none"]
    if overall["count_s_ge_20"] > 0:
        assert overall["mean_s_biased"] == pytest.approx(lm["dbb_mc"]["mean_s_biased,none"], abs=1e-9)

    assert main(["globalbias", str(tmp_path / "lm"), "--out", str(tmp_path / "gb"), "--measure", "byte"]) == 0
    scores = pd.read_csv(tmp_path / "gb" / "bias_scores.csv")
    flagged = scores["flagged"].dropna().astype(float)
    assert flagged.mean() == pytest.approx(lm["globalbias"]["flagged_share,none"], abs=1e-12)
