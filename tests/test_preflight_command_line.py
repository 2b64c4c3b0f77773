"""The one reader of inspect's command line (:mod:`stereoprobe.preflight.command_line`) and what the check
before the run refuses with it (issues 40.1, 41.4, 42.2): ``-T`` without a value or twice, a ``--task-config``
that is no regular file of plain data, no model or a misspelt provider; and a task is built once."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

import stereoprobe._registry  # noqa: F401 (registers the tasks)
from stereoprobe import preflight
from stereoprobe.preflight.command_line import CommandLineError, read, task_args, task_config

BUNDLED = ("source=bundled", "templates=1", "groups=ARAB_F")


@pytest.fixture(autouse=True)
def _nothing_kept():
    yield
    preflight.built.forget()


def _params(*t: str, model: Any = "transformers/default", task_config: str | None = None,
            tasks: tuple[str, ...] = ("stereoprobe/globalbias",)) -> dict[str, Any]:
    return {"tasks": tasks, "t": t, "task_config": task_config, "epochs": None, "run_config": None, "model": model}


def _refusal(params: dict[str, Any], command: str = "eval") -> str:
    with pytest.raises(preflight.Refused) as info:
        preflight.check(command, params)
    text = str(info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("given, fragment", [
    (("mode",), "-T mode has no value: give -T mode=VALUE"),
    (("categories=age", "categories=gender"), "-T categories is given twice (-T categories=age and -T categories=gender"),
    (("limit-templates=1", "limit_templates=2"), "-T limit_templates is given twice"),
    (("subset=",), "-T subset= has no value"),
    (("=3",), "has no parameter name"),
])
def test_t_without_a_value_or_twice_is_refused(given: tuple[str, ...], fragment: str) -> None:
    with pytest.raises(CommandLineError, match=None) as info:
        task_args(given)
    assert fragment in str(info.value)
    assert fragment in _refusal(_params(*given))


def test_t_values_are_read_as_inspect_reads_them() -> None:
    assert task_args(("groups=[ARAB_F, ARAB_M]", "templates=1", "faithful=false")) == {
        "groups": ["ARAB_F", "ARAB_M"], "templates": 1, "faithful": False}


def test_task_config_plain_data_is_read(tmp_path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("source: bundled\ntemplates: [1]\n")
    assert task_config(str(path)) == {"source": "bundled", "templates": [1]}
    line = read("eval", _params("groups=ARAB_F", task_config=str(path)))
    assert line.args == {"source": "bundled", "templates": [1], "groups": "ARAB_F"}


def test_task_config_folder_python_tag_and_list_are_refused(tmp_path) -> None:
    with pytest.raises(CommandLineError, match="is a folder"):
        task_config(str(tmp_path))
    tagged = tmp_path / "evil.yaml"
    tagged.write_text("source: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(CommandLineError, match="not plain YAML or JSON data"):
        task_config(str(tagged))
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    with pytest.raises(CommandLineError, match="must hold a mapping"):
        task_config(str(listed))
    with pytest.raises(CommandLineError, match="cannot read it"):
        task_config(str(tmp_path / "missing.yaml"))
    assert "is a folder" in _refusal(_params(task_config=str(tmp_path)))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_task_config_is_refused_without_opening_it(tmp_path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            task_config(str(fifo))
        except BaseException as exc:  # noqa: BLE001 (the outcome is checked below)
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(30)  # opening a FIFO for reading blocks until a writer comes: a hang is a failure here
    if worker.is_alive():
        with open(fifo, "w"):  # release the blocked reader
            pass
        pytest.fail("--task-config opened the FIFO")
    assert len(outcome) == 1 and "is a FIFO" in str(outcome[0])


@pytest.mark.parametrize("model, fragment", [
    (None, "no model given (no --model and no $INSPECT_EVAL_MODEL"),
    ((), "no model given"),
    ("transformer/default", "no model provider 'transformer' in 'transformer/default' (did you mean "
                            "transformers/default"),
    ("openai/gpt-4o-mini,opnai/gpt-4o", "(did you mean openai/gpt-4o"),
    ("default", "model 'default' is not PROVIDER/NAME"),
])
def test_no_model_or_an_unknown_provider_is_refused(model: Any, fragment: str) -> None:
    assert fragment in _refusal(_params(*BUNDLED, model=model))


def test_known_providers_pass() -> None:
    preflight.check("eval", _params(*BUNDLED, model="transformers/default,vllm-completions/x,openai-api/local/m"))


def test_eval_set_is_read_as_eval() -> None:
    assert "-T mode has no value" in _refusal(_params("mode"), command="eval-set")


def test_eval_retry_names_the_logs_tasks(tmp_path) -> None:
    from inspect_ai import eval as inspect_eval

    from tests.fake_model import fake_model

    logs = inspect_eval("stereoprobe/globalbias", task_args={"source": "bundled", "templates": [1],
                                                             "groups": ["ARAB_F"]},
                        model=fake_model(), limit=1, display="none", log_dir=str(tmp_path))
    line = read("eval-retry", {"log_files": (logs[0].location,)})
    assert line.tasks == ("globalbias",) and line.models == ("stereoprobe-fake/model",)


def test_a_task_is_built_once(monkeypatch, tmp_path) -> None:
    """The check's task is the one inspect runs: the dataset is built once, and the model's checks deferred by
    the check's build run at inspect's build."""
    from inspect_ai import eval as inspect_eval

    import stereoprobe.tasks.globalbias as G
    from tests.fake_model import fake_model

    builds: list[int] = []
    real = G.build_sentences
    monkeypatch.setattr(G, "build_sentences", lambda *a, **k: (builds.append(1), real(*a, **k))[1])
    import stereoprobe.solvers.capability as C
    from stereoprobe.likelihood import require_logprobs

    checked: list[str] = []

    def counted(name: str, *args: Any) -> None:
        checked.append(name)
        require_logprobs(name, *args)

    monkeypatch.setattr(C, "require_logprobs", counted)
    args = {"source": "bundled", "templates": [1], "groups": ["ARAB_F"]}
    preflight.check("eval", _params("source=bundled", "templates=[1]", "groups=[ARAB_F]",
                                    model="stereoprobe-fake/model"))
    assert builds == [1]
    logs = inspect_eval("stereoprobe/globalbias", task_args=args, model=fake_model(), limit=1, display="none",
                        log_dir=str(tmp_path))
    assert logs[0].status == "success"
    assert builds == [1], "inspect built the task again"
    # the capability check: by name at the check's build, then deferred to inspect's build (the model active)
    assert checked == ["stereoprobe-fake/model", "stereoprobe-fake/model"]
    logs = inspect_eval("stereoprobe/globalbias", task_args=args, model=fake_model(), limit=1, display="none",
                        log_dir=str(tmp_path))
    assert builds == [1, 1]  # taken once: a later run builds its own


def test_the_check_is_the_only_reader_of_inspects_command_line() -> None:
    """No other module reads click's context (inspect's parsed command line) or parses ``sys.argv`` by hand
    (``providers/validation.py`` did, for ``--epochs``)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readers = sorted(str(p.relative_to(root)) for folder in ("stereoprobe", "solvers", "scorers", "tasks")
                     for p in (root / folder).rglob("*.py")
                     if "get_current_context" in p.read_text(encoding="utf-8")
                     or ("sys.argv" in p.read_text(encoding="utf-8") and "cli" not in p.parts))
    assert readers == ["stereoprobe/preflight/__init__.py", "stereoprobe/preflight/command_line.py"]
