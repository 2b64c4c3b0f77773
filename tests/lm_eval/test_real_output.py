"""Real lm-eval output (the ``lm-eval`` CLI on the bundled default model, ``--limit`` small,
``--log_samples``) read back by stereoprobe: the records of the DBB statistics, the GlobalBias reader, and
``stereoprobe dbb`` / ``stereoprobe leaderboard`` on the output folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.dbb.lm_eval import RESPONSE_COLUMNS, response
from stereoprobe.inputs.discovery import SAMPLES_FILE
from stereoprobe.inputs.lm_eval import read_jsonl
from stereoprobe.lm_eval_tasks import include_path

LM_EVAL = Path(sys.executable).parent / "lm-eval"


@pytest.mark.slow
@pytest.mark.skipif(not LM_EVAL.exists(), reason="lm-eval CLI not installed")
def test_lm_eval_cli_output_is_read_back(tmp_path):
    from stereoprobe.providers.default_model import default_model_dir

    model = str(default_model_dir())
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    out = tmp_path / "lm"
    meta = {"source": "bundled", "faithful": False, "categories": "gender", "limit_templates": 1, "prompt": "stereoprobe",
            "groups": ["ARAB", "CHINESE"], "tokenizer": model}  # keys of both tasks (one --metadata)
    r = subprocess.run([str(LM_EVAL), "run", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
                        "--device", "cpu", "--batch_size", "16", "--tasks", "dbb_sg", "globalbias",
                        "--include_path", str(include_path()), "--limit", "8", "--log_samples",
                        "--output_path", str(out), "--metadata", json.dumps(meta)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    files = {SAMPLES_FILE.match(p.name)["task"]: p for p in out.rglob("samples_*.jsonl")}
    assert set(files) == {"dbb_sg", "globalbias"}
    # DBB: 8 docs = 8 questions (--limit counts docs), records with the DBB response columns
    rows = read_jsonl(files["dbb_sg"])
    resp = pd.DataFrame([response(r, "dbb_sg", "smollm2") for r in rows], columns=RESPONSE_COLUMNS)
    assert len(resp) == 8 and set(resp["variant"]) == {"sg"} and resp["a"].between(0, 1).all()
    assert resp["question_id"].is_unique
    # GlobalBias: 8 sentences read by `stereoprobe globalbias` (per-token perplexity with the tokenizer)
    from stereoprobe.globalbias.inputs import read_sentences

    df, rep = read_sentences([files["globalbias"].parent], measure="byte")
    assert len(df) == 8 and rep.unscored == 0
    # `stereoprobe dbb` takes the lm-eval output folder as it is; the leaderboard reads its tables
    from stereoprobe.cli import main

    assert main(["dbb", str(out), "--out", str(tmp_path / "dbb")]) == 0
    assert (tmp_path / "dbb" / "summary.csv").is_file()
    assert main(["leaderboard", str(tmp_path / "dbb"), "--out", str(tmp_path / "lb")]) == 0
    assert (tmp_path / "lb" / "leaderboard.csv").is_file()
