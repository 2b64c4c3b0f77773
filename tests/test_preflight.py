"""``inspect eval`` checked before any model loads (issue 35.5, 35.6, 35.10; issue 34.6 "-T values coerced or
accepted silently"): misspelt task names and -T values, empty -T values and --epochs are refused in one line on
stderr, in every display mode, before the provider is built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import stereoprobe._registry  # noqa: F401 (registers the tasks)
from stereoprobe import preflight

INSPECT = str(Path(sys.executable).with_name("inspect"))


def _params(*tasks: str, t: tuple[str, ...] = (), epochs: int | None = None,
            model: str = "transformers/default") -> dict:
    return {"tasks": tasks, "t": t, "task_config": None, "epochs": epochs, "run_config": None, "model": model}


@pytest.fixture(autouse=True)
def _nothing_kept():
    yield
    preflight.built.forget()


def _refusal(params: dict, command: str = "eval") -> str:
    with pytest.raises(preflight.Refused) as info:
        preflight.check(command, params)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_a_misspelt_task_name_gets_the_closest_and_the_listing() -> None:
    text = _refusal(_params("stereoprobe/globalbais"))
    assert "no task 'globalbais' (did you mean stereoprobe/globalbias or" in text
    assert "stereoprobe tasks" in text


@pytest.mark.parametrize("given, fragment", [
    (("source=bundled", "groups=[ARABB]"), "has no group 'ARABB' (did you mean ARAB or ARAB_M?)"),
    (("source=bundled", "groups=arab_f"), "has no group 'arab_f' (did you mean ARAB_F?)"),
    (("source=bundled", "templates=2.0"), "templates must be one or more of 1, 2, 3, got templates=2.0"),
    (("source=bundled", "subset="), "-T subset= has no value"),
    (("source=bundled", "sorce=x"), "did you mean source?"),
])
def test_bad_values_are_refused_before_any_model(given: tuple[str, ...], fragment: str) -> None:
    assert fragment in _refusal(_params("stereoprobe/globalbias", t=given))


def test_epochs_outside_the_tasks_bound_are_refused() -> None:
    text = _refusal(_params("stereoprobe/dbb", t=("source=bundled", "prompt=stereoprobe"), epochs=3))
    assert text.startswith("stereoprobe/dbb: epochs (inspect eval --epochs) must be at least 10")


def test_the_command_lines_models_are_named_while_the_tasks_are_checked(monkeypatch) -> None:
    from stereoprobe.likelihood import require_logprobs

    seen: list[tuple[str, ...]] = []

    def spy(name: str, *args: object) -> None:
        seen.append((name, preflight.built.current() is not None))
        require_logprobs(name, *args)

    monkeypatch.setattr("stereoprobe.solvers.capability.require_logprobs", spy)
    preflight.check("eval", _params("stereoprobe/globalbias", t=("source=bundled", "templates=[1]"),
                                    model="transformers/default,vllm-completions/m"))
    assert seen == [("transformers/default", True), ("vllm-completions/m", True)]
    assert preflight.built.current() is None


def _inspect(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([INSPECT, "eval", *args, "--display", "none"], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.slow
@pytest.mark.skipif(not Path(INSPECT).exists(), reason="inspect's command line is not installed beside python")
@pytest.mark.parametrize("args, fragment", [
    # a model that cannot load: the -T refusal comes first, so nothing of the model was touched
    (("stereoprobe/globalbias", "-T", "source=bundled", "-T", "groups=[ARABB]"), "did you mean ARAB or ARAB_M?"),
    (("stereoprobe/dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "--epochs", "3"), "at least 10"),
])
def test_inspect_eval_refuses_on_stderr_with_display_none(args: tuple[str, ...], fragment: str) -> None:
    done = _inspect(*args, "--model", "transformers/no-such-org/no-such-model")
    assert done.returncode == 1
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and fragment in lines[0], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow  # loads the bundled default model
@pytest.mark.skipif(not Path(INSPECT).exists(), reason="inspect's command line is not installed beside python")
def test_a_refusal_after_the_check_reaches_stderr_with_display_none() -> None:
    # an unknown -M argument is refused by the provider, after the -T check: inspect's own one line went to a
    # silenced rich console; the wrapped exception hook writes it to stderr
    done = _inspect("stereoprobe/globalbias", "-T", "source=bundled", "--model", "transformers/default",
                    "-M", "bogus=1")
    assert done.returncode == 1
    assert "unknown model args ['bogus']" in done.stderr and "Traceback" not in done.stderr


def test_the_exception_hook_writes_refusals_to_stderr(capsys) -> None:
    from inspect_ai._util.error import PrerequisiteError
    from rich.text import Text

    from stereoprobe.errors import InputError

    others: list[BaseException] = []
    hook = preflight._excepthook(lambda kind, exc, tb: others.append(exc))
    hook(PrerequisiteError, PrerequisiteError("task parameter x must be [1, 2]"), None)
    hook(PrerequisiteError, PrerequisiteError(Text("a rich message")), None)
    hook(InputError, InputError("bad input"), None)
    bug = ValueError("a bug")
    hook(ValueError, bug, None)
    captured = capsys.readouterr()
    assert captured.out == "" and others == [bug]
    assert captured.err.splitlines() == ["task parameter x must be [1, 2]", "a rich message", "bad input"]
