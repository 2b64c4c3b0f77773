"""The checks before a run, in one place: inspect's command line (``eval``, ``eval-set``, ``eval-retry``) checked
before any model loads (issues 35.5, 40.1, 41.4, 42.2).

inspect loads stereoprobe's entry point (:mod:`stereoprobe._registry`) at the start of ``eval()``, before the
models; :func:`install`, called there, reads the command line of the running process (click's current context,
:mod:`.command_line`, the only reader) and, for the ``stereoprobe/<task>`` it names:

- a name that is no stereoprobe task is refused with the closest names and ``stereoprobe tasks``;
- ``-T`` without a value, empty, or twice, and a ``--task-config`` that is no regular file of plain data;
- no ``--model``, or a model whose provider does not exist (:mod:`.models`);
- each task is built with the command line's arguments (every check a task makes of its parameters and data
  runs now; a refusal, an :class:`~stereoprobe.errors.InputError` or inspect's ``PrerequisiteError``, is one
  line), and the built task is kept for inspect's own build (:mod:`.built`: a task is built once);
- ``--epochs`` is checked once against the task's bound (:func:`.run_settings.check_epochs`);
- a vLLM ``--model`` or ``--model-role`` registers the neutral sampling hook (:mod:`stereoprobe.providers.
  vllm_neutral`), so inspect's list of hooks names it on those runs only.

Any other error is left to the run itself, which reports it with the model in place.

One line on stderr in every display mode (issue 35.6): inspect prints a ``PrerequisiteError`` through rich on
stdout, which ``--display none`` silences; :func:`install` also wraps inspect's exception hook so that the
message of a ``PrerequisiteError`` or an ``InputError`` is written to stderr, whatever the display.
"""

from __future__ import annotations

import sys
from typing import Any

from stereoprobe.errors import InputError, one_line
from stereoprobe.hints import did_you_mean
from stereoprobe.preflight import built
from stereoprobe.preflight.command_line import COMMANDS, PREFIX, CommandLine, CommandLineError, read
from stereoprobe.preflight.models import check_models

__all__ = ["PREFIX", "Refused", "check", "install", "task_names", "unknown_task_line"]


def task_names() -> list[str]:
    """The names of stereoprobe's inspect tasks (without the ``stereoprobe/`` prefix), sorted: the one list."""
    from stereoprobe.inspect_internals import registry_find, registry_info

    found = registry_find(lambda info: info.type == "task" and info.name.startswith(PREFIX))
    return sorted(registry_info(t).name[len(PREFIX):] for t in found)


def unknown_task_line(name: str, known: list[str]) -> str:
    """The one line for a ``stereoprobe/<name>`` that is no task, with the closest names."""
    return (f"stereoprobe has no task {name!r}{did_you_mean(name, known, lambda c: PREFIX + c)} (its tasks: "
            f"{', '.join(known)}; their parameters: stereoprobe tasks)")


class Refused(Exception):
    """A refusal found by the check: its one line."""


def error_line(exc: BaseException) -> str:
    """A refusal's message in one line, credentials redacted."""
    from stereoprobe.redact import redact_text

    message = getattr(exc, "message", None)
    return redact_text(one_line(message if isinstance(message, str) else exc))


def check(command: str, params: dict[str, Any]) -> None:
    """Check the stereoprobe tasks of one inspect command line (``command``, click's ``params``); raise
    :class:`Refused` with the one line of the first refusal."""
    try:
        line = read(command, params)
    except CommandLineError as exc:
        raise Refused(error_line(exc)) from None
    if not line.tasks:
        return
    known = task_names()
    for name in line.tasks:
        if name not in known:
            raise Refused(unknown_task_line(name, known))
    _vllm_hook(line)
    if line.run_config:
        return
    try:
        check_models(line.models, f"inspect {command}")
    except InputError as exc:
        raise Refused(error_line(exc)) from None
    if command != "eval-retry":
        _build_each(line)


def _vllm_hook(line: CommandLine) -> None:
    """Register the neutral vLLM sampling hook now, before inspect lists its hooks, when the command line runs
    a stereoprobe task on a vLLM route (``--model`` or ``--model-role``); no banner on any other provider."""
    from stereoprobe.providers.vllm_neutral import register_for

    register_for([*line.models, *line.roles])


def _build_each(line: CommandLine) -> None:
    """Build each task (no model yet): a refusal is one line; the built task is kept for inspect's build."""
    from stereoprobe.inspect_internals import PrerequisiteError, task_create

    from stereoprobe.preflight.run_settings import check_epochs

    for name in line.tasks:
        try:
            with built.checking(line.models) as build:
                task = task_create(PREFIX + name, **line.args)
            check_epochs(line.epochs, task, f"inspect {line.command}")
        except (InputError, PrerequisiteError) as exc:
            built.forget()
            raise Refused(f"{PREFIX}{name}: {error_line(exc)}") from exc
        except Exception:  # noqa: BLE001 (not a refusal of the command line: the run reports it)
            continue
        built.keep(build)


def _excepthook(previous: Any) -> Any:
    """``previous`` (inspect's hook), with the one line of a refusal written to stderr in every display mode."""
    from stereoprobe.inspect_internals import PrerequisiteError

    def hook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        if isinstance(exc, (PrerequisiteError, InputError)):
            message = getattr(exc, "message", None)
            try:
                if message is None or isinstance(message, str):
                    print(error_line(exc), file=sys.stderr, flush=True)
                else:  # a rich renderable (inspect's own messages): rendered on stderr, whatever the display
                    from rich.console import Console

                    Console(stderr=True).print(message)
            except (OSError, ValueError):
                pass
            return
        previous(kind, exc, tb)

    hook.__stereoprobe__ = True  # type: ignore[attr-defined]
    return hook


def install_excepthook() -> None:
    """Wrap inspect's exception hook (installed now if it is not yet, as inspect's ``platform_init`` would)."""
    from stereoprobe.inspect_internals import set_exception_hook

    set_exception_hook()
    if not getattr(sys.excepthook, "__stereoprobe__", False):
        sys.excepthook = _excepthook(sys.excepthook)


def install() -> None:
    """Run the checks of this process's inspect command line, if it is one (called when inspect loads
    stereoprobe's entry point); a refusal ends the process with its line on stderr and exit code 1."""
    try:
        import click
    except ImportError:
        return
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root().command if ctx is not None else None
    if ctx is None or not str(getattr(root.callback, "__module__", "")).startswith("inspect_ai."):
        return  # not inspect's command line (a script calling inspect_ai.eval, a test)
    install_excepthook()
    from stereoprobe.preflight import stops

    stops.install(ctx.find_root())
    if ctx.info_name not in COMMANDS:
        return
    try:
        check(str(ctx.info_name), dict(ctx.params))
    except Refused as refusal:
        print(str(refusal), file=sys.stderr, flush=True)
        raise SystemExit(1) from None
