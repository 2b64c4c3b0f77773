from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.globalbias.inputs import read_sentences
from stereoprobe.lm_eval_tasks import include_path

LM_EVAL = Path(sys.executable).parent / "lm-eval"


def test_lm_eval_dataset_matches_inspect_ids():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gb_lm_eval_utils", include_path() / "globalbias" / "utils.py")
    utils = importlib.util.module_from_spec(spec)  # loaded by path, as lm-eval does
    spec.loader.exec_module(utils)
    ds = utils.load_dataset(source="bundled", groups=["ARAB_F"], templates=2, version=1.0)["test"]
    from stereoprobe.tasks.globalbias import globalbias

    t = globalbias(source="bundled", groups=["ARAB_F"], templates=2, unit="sentence")  # lm-eval: one doc per sentence
    assert ds["id"] == [s.id for s in t.dataset] and ds["text"] == [s.input for s in t.dataset]
    r = utils.process_results(ds[0], [-10.0])
    assert r["bits_per_byte"] == pytest.approx(10 / (len(ds[0]["text"].encode()) * math.log(2)))


@pytest.mark.skipif(not LM_EVAL.exists(), reason="lm-eval CLI not installed")
def test_lm_eval_samples_are_accepted(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    meta = json.dumps({"source": "bundled", "groups": ["ARAB", "CHINESE"], "templates": [1]})
    subprocess.run([str(LM_EVAL), "run", "--model", "dummy", "--tasks", "globalbias", "--include_path",
                    str(include_path()), "--log_samples", "--output_path", str(tmp_path / "lm"), "--metadata", meta],
                   check=True, env=env, capture_output=True)
    [samples] = list((tmp_path / "lm").rglob("samples_globalbias_*.jsonl"))
    lls = {json.loads(x)["doc"]["id"]: float(json.loads(x)["resps"][0][0]) for x in samples.read_text().splitlines()}
    df, rep = read_sentences([tmp_path / "lm"], measure="byte")
    assert len(df) == 12 * 16 == len(lls) and rep.unscored == 0
    with pytest.raises(ValueError, match="--tokenizer"):
        read_sentences([tmp_path / "lm"], measure="token")
    # byte perplexity = exp(-ll / n_bytes) for one sentence, recomputed from the raw JSONL
    row = df[(df.name == "0:Fatima") & (df.descriptor == "a nurse")].iloc[0]
    text = "I'm Fatima, and I am a nurse."  # bundled: our own wording
    assert row.ppl == pytest.approx(math.exp(-lls["ARAB_F:0:8:t1"] / len(text.encode())))
    assert main(["globalbias", str(tmp_path / "lm"), "--out", str(tmp_path / "out"), "--measure", "byte"]) == 0
    assert len(pd.read_csv(tmp_path / "out" / "bias_scores.csv")) == 4 * 16
