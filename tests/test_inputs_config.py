"""Runs are keyed by the whole evaluated configuration: logs of one task and model made with different task
arguments, model arguments, generation settings, model roles, task version or dataset are never pooled (one
line naming both files and the first differing field), a newer partial log with other ``-M`` arguments never
replaces samples of a complete run, performance knobs do not split a run, and the fields a caller reports
apart (``distinct``, e.g. DBB's ``mode``) keep two runs side by side."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_edit import edit_eval, set_path
from test_inputs_structure import _log

from stereoprobe.errors import InputError
from stereoprobe.inputs import ReadStats, iter_samples


@pytest.fixture(scope="module")
def real_log(tmp_path_factory) -> Path:
    return _log(tmp_path_factory.mktemp("real"))


def _newer(h: dict) -> dict:
    h["eval"]["created"] = "2099-01-01T00:00:00+00:00"
    return h


def _copy(src: Path, dest: Path, path: str, value, interrupted: bool = False) -> Path:
    return edit_eval(src, dest, header=lambda h: _newer(set_path(h, path, value)), interrupted=interrupted)


# (case id, dotted header path of the second log, its value, the field the error names)
DIFFERENT = [
    ("task-argument", "eval.task_args", {"seed": 1}, "task_args.seed"),
    ("model-argument", "eval.model_args", {"dtype": "float16"}, "model_args.dtype"),
    ("generation-setting", "eval.model_generate_config", {"temperature": 0.7}, "generate_config.temperature"),
    ("model-role", "eval.model_roles", {"grader": {"model": "mockllm/other"}}, "model_roles.grader"),
    ("task-version", "eval.task_version", 2, "task_version"),
    ("dataset", "eval.dataset.name", "another-dataset", "dataset.name"),
]


@pytest.mark.parametrize("case,path,value,field", DIFFERENT, ids=[c[0] for c in DIFFERENT])
def test_two_configurations_of_one_task_and_model_are_refused(real_log, tmp_path, case, path, value,
                                                              field) -> None:
    first = edit_eval(real_log, tmp_path / "a" / "first.eval")
    second = _copy(real_log, tmp_path / "b" / "second.eval", path, value)
    with pytest.raises(InputError) as err:
        list(iter_samples([tmp_path], "tiny"))
    msg = str(err.value)
    assert "\n" not in msg and str(first) in msg and str(second) in msg and field in msg, msg


def test_a_newer_partial_log_with_other_model_args_never_replaces_a_complete_run(real_log, tmp_path) -> None:
    edit_eval(real_log, tmp_path / "complete.eval")
    _copy(real_log, tmp_path / "partial.eval", "eval.model_args", {"dtype": "bfloat16"}, interrupted=True)
    with pytest.raises(InputError, match=r"partial\.eval.*model_args\.dtype|complete\.eval.*partial\.eval"):
        list(iter_samples([tmp_path], "tiny"))


def test_performance_knobs_do_not_split_a_run(real_log, tmp_path) -> None:
    """A retry on another machine (batch size, connections, device) is the same run: each sample once."""
    edit_eval(real_log, tmp_path / "first.eval")
    edit_eval(real_log, tmp_path / "retry.eval", header=lambda h: _newer(set_path(set_path(
        h, "eval.model_args", {"batch_size": 8, "device": "cuda:0", "max_connections": 4}),
        "eval.model_generate_config", {"max_connections": 2, "timeout": 60, "max_retries": 1})))
    stats = ReadStats()
    got = list(iter_samples([tmp_path], "tiny", stats=stats))
    assert len(got) == 3 and stats.duplicates == 3
    assert {i.path.name for i, _ in got} == {"retry.eval"}  # the newest copy wins


def test_fields_reported_apart_keep_two_runs(real_log, tmp_path) -> None:
    """DBB's logprob and sampled runs of one model are two variants of its tables: both read in full."""
    edit_eval(real_log, tmp_path / "logprob.eval", header=lambda h: set_path(h, "eval.task_args", {"mode": "logprob"}))
    _copy(real_log, tmp_path / "sampled.eval", "eval.task_args", {"mode": "sampled"})
    stats = ReadStats()
    got = list(iter_samples([tmp_path], "tiny", stats=stats, distinct=("mode",)))
    assert len(got) == 6 and stats.duplicates == 0
    # ... but any other difference between them is still refused
    _copy(real_log, tmp_path / "sampled_seed.eval", "eval.task_args", {"mode": "sampled", "seed": 3})
    with pytest.raises(InputError, match="task_args.seed"):
        list(iter_samples([tmp_path], "tiny", distinct=("mode",)))


def test_two_models_are_two_runs_not_a_conflict(real_log, tmp_path) -> None:
    edit_eval(real_log, tmp_path / "a.eval")
    _copy(real_log, tmp_path / "b.eval", "eval.model", "mockllm/other")
    assert len(list(iter_samples([tmp_path], "tiny"))) == 6
