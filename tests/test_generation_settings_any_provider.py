"""Generation settings outside their range are refused by the task for every provider (issue 34.6), in one line
naming the setting, before any request: only the transformers provider refused them before, and
``--max-connections 0`` waited forever. ``--epochs 0`` never reaches a task (inspect reads 0 as not given), so
the check reads inspect's command line for it."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig

from chat_server import chat_server
from fake_model import fake_model
from stereoprobe.preflight.run_settings import RunSettingError, check_run_config

BAD = [
    ({"temperature": -1}, r"generation setting temperature must be a finite number >= 0"),
    ({"top_p": 2}, r"generation setting top_p must be a finite number in \[0, 1\]"),
    ({"max_tokens": 0}, r"generation setting max_tokens must be an integer >= 1"),
    ({"top_k": -2}, r"generation setting top_k must be an integer >= 0"),
    ({"num_choices": 0}, r"generation setting num_choices must be an integer >= 1"),
    ({"max_connections": 0}, r"generation setting max_connections must be an integer >= 1"),
    ({"max_retries": -1}, r"generation setting max_retries must be an integer >= 0"),
    ({"timeout": 0}, r"generation setting timeout must be a finite number > 0"),
]
#: each stereoprobe task with -T values that build it small (the check runs before the task's own checks)
TASKS = {
    "globalbias": {"source": "bundled"},
    "dbb": {"source": "bundled", "prompt": "stereoprobe"},
    "dbb_sg": {"source": "bundled", "prompt": "stereoprobe"},
    "stereotales": {},
    "stereotales_judge": {},
    "globalbias_profiles": {},
    "dbb_baselines": {},
}


@pytest.mark.parametrize("setting, message", BAD, ids=[next(iter(s)) for s, _ in BAD])
def test_each_bad_setting_is_one_line(setting, message):
    with pytest.raises(RunSettingError, match=message) as refused:
        check_run_config(GenerateConfig(**setting))
    assert "\n" not in str(refused.value)


def test_good_settings_pass():
    check_run_config(GenerateConfig(temperature=0, top_p=1, max_tokens=1, top_k=0, num_choices=1, max_connections=1,
                                    max_retries=0, timeout=1))
    check_run_config(GenerateConfig())


@pytest.mark.parametrize("setting, message", BAD, ids=[next(iter(s)) for s, _ in BAD])
def test_refused_through_inspect_eval_on_an_openai_compatible_server(setting, message, monkeypatch, tmp_path):
    """On another provider than transformers (a local OpenAI-compatible server), before any request."""
    monkeypatch.setenv("LOCAL_API_KEY", "not-a-key")
    with chat_server() as server:
        with pytest.raises(RunSettingError, match=message):
            inspect_eval("stereoprobe/dbb", task_args={"source": "bundled", "prompt": "stereoprobe"},
                         model="openai-api/local/m", model_base_url=server.base_url, log_dir=str(tmp_path),
                         display="none", **setting)
        assert server.requests == 0


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_checks_the_settings(task, tmp_path):
    """Every stereoprobe task, on the fake provider (which checks nothing itself)."""
    with pytest.raises(RunSettingError, match="max_connections must be an integer >= 1"):
        inspect_eval(f"stereoprobe/{task}", task_args=TASKS[task], model=fake_model(), log_dir=str(tmp_path),
                     display="none", max_connections=0)


@pytest.mark.parametrize("command", ["eval", "eval-set"])
def test_epochs_zero_on_the_command_line_is_refused(command):
    from stereoprobe import preflight

    params = {"tasks": ("stereoprobe/globalbias",), "t": ("source=bundled", "templates=1"), "task_config": None,
              "epochs": 0, "run_config": None, "model": "transformers/default"}
    with pytest.raises(preflight.Refused, match=rf"inspect {command} --epochs must be an integer >= 1, got --epochs 0$"):
        preflight.check(command, params)
    preflight.check(command, {**params, "epochs": 2})
    preflight.built.forget()
