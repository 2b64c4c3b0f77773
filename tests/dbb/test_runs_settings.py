"""The DBB runs table and run_info.json name each run's model settings (-M arguments, model roles, generation
settings) as the log header records them, so two runs of one model are told apart by their settings."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from eval_edit import edit_eval, set_path
from fake_model import fake_model
from inspect_ai import eval as inspect_eval

from stereoprobe.cli import main
from stereoprobe.dbb import data as D
from stereoprobe.tasks.dbb import dbb

SEL = {"source": "bundled", "faithful": False, "prompt": "stereoprobe",
       "categories": "ses", "limit_templates": 1, "unit": "question",
       "mode": "logprob"}


def test_runs_table_and_run_info_record_model_arguments(tmp_path) -> None:
    a_texts = {q.option_a for q in D.expand(D.bundled_templates(), categories=["ses"])}
    model = fake_model(p_a=lambda context: 0.7, is_a=lambda option: option in a_texts, seed=1)
    [log] = inspect_eval(dbb(**SEL), model=model, log_dir=str(tmp_path / "raw"), display="none")
    edited = edit_eval(Path(log.location), tmp_path / "logs" / "run.eval",
                       header=lambda h: set_path(set_path(h, "eval.model_args", {"score_first_token": True,
                                                                                 "batch_size": 4}),
                                                 "eval.model_generate_config", {"temperature": 0.5}))
    assert main(["dbb", str(edited.parent), "--out", str(tmp_path / "out"), "--n-boot", "10", "-q"]) == 0
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet")  # the CSV neutralises "-M" (issue 34.4)
    assert list(runs["model_settings"]) == ["-M score_first_token=true; temperature=0.5"]  # batch_size: a knob
    [run] = json.loads((tmp_path / "out" / "run_info.json").read_text())["runs"]
    assert run["model_args"] == {"score_first_token": True} and run["generate_config"] == {"temperature": 0.5}
