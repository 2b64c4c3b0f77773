"""run_info.json records each run's model settings from the log headers: two logs that differ only by their
``-M`` model arguments (or model roles, or generation settings) are two recorded runs, told apart by their
settings; performance knobs are not settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_edit import edit_eval, set_path
from test_inputs_structure import _log

from stereoprobe.report.run_info import read_run_info, write_run_info
from stereoprobe.report.run_settings import log_run_settings, settings_text


@pytest.fixture(scope="module")
def real_log(tmp_path_factory) -> Path:
    return _log(tmp_path_factory.mktemp("real"))


def _copy(src: Path, dest: Path, path: str, value) -> Path:
    return edit_eval(src, dest, header=lambda h: set_path(h, path, value))


def test_two_logs_differing_only_by_model_args_are_two_recorded_runs(real_log, tmp_path) -> None:
    a = _copy(real_log, tmp_path / "default" / "a.eval", "eval.model_args", {})
    b = _copy(real_log, tmp_path / "first_token" / "b.eval", "eval.model_args", {"score_first_token": True})
    out_a, out_b = tmp_path / "out_a", tmp_path / "out_b"
    write_run_info(out_a, "tiny", inputs=[a.parent])
    write_run_info(out_b, "tiny", inputs=[b.parent])
    runs_a, runs_b = read_run_info(out_a)["runs"], read_run_info(out_b)["runs"]
    assert [r["model_args"] for r in runs_a] == [{}]
    assert [r["model_args"] for r in runs_b] == [{"score_first_token": True}]
    assert [(r["task"], r["model"]) for r in runs_a] == [(r["task"], r["model"]) for r in runs_b] == [("tiny", "mockllm/m")]
    assert settings_text(runs_a[0]) != settings_text(runs_b[0])
    assert "-M score_first_token=true" in settings_text(runs_b[0])
    # both logs in one input: two runs, one per setting
    both = log_run_settings([tmp_path])
    assert sorted(settings_text(r) for r in both) == ["-M score_first_token=true", "provider defaults"]


def test_roles_and_generation_settings_recorded_knobs_left_out(real_log, tmp_path) -> None:
    role = {"model": "transformers/default", "config": {"max_tokens": 400, "max_connections": 8}, "args": {},
            "base_url": None}

    def header(h: dict) -> dict:
        h = set_path(h, "eval.model_roles", {"extractor": role})
        h = set_path(h, "eval.model_generate_config", {"temperature": 0.7, "max_connections": 64, "seed": None})
        return set_path(h, "eval.model_args", {"batch_size": 8, "device": "cpu", "repetition_penalty": 1.3})

    log = edit_eval(real_log, tmp_path / "logs" / "r.eval", header=header)
    [run] = log_run_settings([log])
    assert run["model_args"] == {"repetition_penalty": 1.3}  # batch_size, device: performance knobs
    assert run["generate_config"] == {"temperature": 0.7}  # max_connections a knob, seed unset
    assert run["model_roles"] == {"extractor": "transformers/default (max_tokens=400)"}
    assert settings_text(run) == ("-M repetition_penalty=1.3; --model-role extractor=transformers/default "
                                  "(max_tokens=400); temperature=0.7")


def test_inputs_without_logs_record_no_runs(tmp_path) -> None:
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "x.csv").write_text("a\n1\n")
    write_run_info(tmp_path / "out", "tiny", inputs=[tmp_path / "tables", tmp_path / "missing"])
    assert json.loads((tmp_path / "out" / "run_info.json").read_text())["runs"] == []
