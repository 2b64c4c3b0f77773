"""The one reader of inspect's command line (``inspect eval``, ``eval-set`` and ``eval-retry``): what a run
names, read from click's parsed parameters of the running process, never from ``sys.argv`` by hand.

``-T`` is read strictly, as inspect reads it (YAML values, ``-`` in a name read as ``_``) but refusing what
inspect drops without a word: a ``-T name`` with no ``=value`` (inspect ignores it and runs the default), an
empty ``-T name=`` (read as not given), the same name twice (inspect keeps the last). ``--task-config`` is read
as data only (YAML's safe loader, or JSON): a folder, a FIFO or any other non-file is refused before anything
opens it, and a YAML tag that builds a Python object is refused in one line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError, one_line

__all__ = ["COMMANDS", "PREFIX", "CommandLine", "CommandLineError", "read", "task_args", "task_config"]

PREFIX = "stereoprobe/"
COMMANDS = ("eval", "eval-set", "eval-retry")  # inspect's commands whose command line is checked


class CommandLineError(InputError):
    """A refusal of the command line: its one line."""


@dataclass(frozen=True)
class CommandLine:
    """What one inspect command line names: its command, the stereoprobe tasks (without the prefix), their
    ``-T``/``--task-config`` arguments, ``--epochs`` (None: not given), the ``--model`` names (empty: none;
    inspect would run ``none/none``) and the ``--model-role`` specs as given (``judge=vllm/m``)."""

    command: str
    tasks: tuple[str, ...]
    args: dict[str, Any] = field(default_factory=dict)
    epochs: int | None = None
    models: tuple[str, ...] = ()
    run_config: bool = False  # inspect eval --run-config: tasks and args come from a file inspect reads
    roles: tuple[str, ...] = ()


def _model_names(given: Any) -> tuple[str, ...]:
    items = [given] if isinstance(given, str) else list(given or ())
    return tuple(m.strip() for item in items for m in str(item).split(",") if m.strip())


def task_args(given: Sequence[str] | None) -> dict[str, Any]:
    """The ``-T`` values as inspect parses them (``inspect_ai._util.config.parse_cli_args``), refusing a name
    without ``=value``, an empty value and a name given twice."""
    from stereoprobe.inspect_internals import parse_cli_args

    seen: dict[str, str] = {}
    for text in (str(g) for g in (given or ())):
        name, eq, value = text.partition("=")
        key = name.strip().replace("-", "_")
        if not eq:
            raise CommandLineError(f"-T {text.strip()} has no value: give -T {key}=VALUE (inspect would drop it "
                                   "and run the task's default)")
        if not key:
            raise CommandLineError(f"-T {text.strip()} has no parameter name: give -T NAME=VALUE")
        if not value.strip():
            raise CommandLineError(f"-T {key}= has no value (inspect would run the task's default): give a value "
                                   "or leave the option out")
        if key in seen:
            raise CommandLineError(f"-T {key} is given twice (-T {seen[key]} and -T {text.strip()}; inspect would "
                                   f"keep the last): give it once, a list as -T {key}=a,b")
        seen[key] = text.strip()
    return parse_cli_args(tuple(given or ()))


def task_config(path_text: str | None) -> dict[str, Any]:
    """``--task-config FILE`` read as data: a regular file (checked before it is opened: a FIFO would block),
    YAML's safe loader (JSON is YAML), a mapping at its top."""
    if path_text is None:
        return {}
    import yaml

    path = Path(path_text).expanduser()
    try:
        mode = os.stat(path).st_mode
    except OSError as ex:
        raise CommandLineError(f"--task-config {path_text}: cannot read it ({ex.strerror or type(ex).__name__})")
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise CommandLineError(f"--task-config {path_text} is {kind}: give a YAML or JSON file of task arguments")
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError) as ex:
        raise CommandLineError(f"--task-config {path_text}: cannot read it ({type(ex).__name__})") from None
    except yaml.YAMLError as ex:
        raise CommandLineError(f"--task-config {path_text} is not plain YAML or JSON data (tags that build Python "
                               f"objects are refused): {one_line(ex)[:200]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise CommandLineError(f"--task-config {path_text} must hold a mapping of task parameters to values, "
                               f"got {type(data).__name__}")
    return data


def _stereoprobe(specs: Any) -> tuple[str, ...]:
    texts = [str(t) for t in (specs or ())]
    return tuple(s[len(PREFIX):] for s in texts if s.startswith(PREFIX))


def read(command: str, params: dict[str, Any]) -> CommandLine:
    """The :class:`CommandLine` of click's ``params`` of inspect's ``command`` (the task arguments of
    ``eval-retry`` are those its logs recorded: read from their headers)."""
    if command == "eval-retry":
        return _retry(params)
    tasks = _stereoprobe(params.get("tasks"))
    args: dict[str, Any] = {}
    if tasks and not params.get("run_config"):
        args = {**task_config(params.get("task_config")), **task_args(params.get("t"))}
    epochs = params.get("epochs")
    return CommandLine(command=command, tasks=tasks, args=args, epochs=None if epochs is None else int(epochs),
                       models=_model_names(params.get("model")), run_config=bool(params.get("run_config")),
                       roles=_role_specs(params.get("model_role")))


def _role_specs(given: Any) -> tuple[str, ...]:
    return (given,) if isinstance(given, str) else tuple(str(spec) for spec in given or ())


def _retry(params: dict[str, Any]) -> CommandLine:
    """``eval-retry LOGS``: the stereoprobe tasks of the logs' headers (a log that cannot be read is left to
    inspect, which reports it); the model is the logs' own."""
    from inspect_ai.log import read_eval_log

    tasks: list[str] = []
    models: list[str] = []
    for log in params.get("log_files") or ():
        try:
            header = read_eval_log(str(log), header_only=True)
        except Exception:  # noqa: BLE001 (inspect reports an unreadable log itself)
            continue
        if header.eval.task.startswith(PREFIX):
            tasks.append(header.eval.task[len(PREFIX):])
            models.append(header.eval.model)
    return CommandLine(command="eval-retry", tasks=tuple(tasks), models=tuple(models))
