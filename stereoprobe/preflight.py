"""``inspect eval`` checked before any model loads: task names, every ``-T`` value and ``--epochs`` (issue 35.5).

inspect resolves (and so loads) the models of a run before it builds its tasks, so a misspelt ``-T`` value was
refused only after a local model's weights had loaded, and a misspelt task name gave only "No inspect tasks were
found". inspect loads stereoprobe's entry point (:mod:`stereoprobe._registry`) at the start of ``eval()``,
before the models; :func:`install`, called there, finds the ``inspect eval`` command line of the running process
(click's current context) and, for every ``stereoprobe/<task>`` it names:

- a name that is no stereoprobe task is refused with the closest names and ``stereoprobe tasks``;
- the task is built with the command line's ``-T`` values and ``--task-config`` (the same parse inspect makes),
  so every check a task makes of its parameters runs now; a refusal (an :class:`~stereoprobe.errors.InputError`
  or inspect's ``PrerequisiteError``) ends the run in one line. The built task is dropped: inspect builds it
  again with its model active, so checks that need the model (the likelihood capability) run then too; while
  the check builds, :func:`models` names the command line's ``--model`` values (no model object exists yet);
- ``--epochs`` is checked against the task's bound (:class:`stereoprobe.params.EpochsBoundTask`);
- an empty ``-T name=`` is refused (inspect reads it as not given, so the default would run silently).

Any other error is left to the run itself, which reports it with the model in place.

One line on stderr in every display mode (issue 35.6): inspect prints a ``PrerequisiteError`` through rich on
stdout, which ``--display none`` silences; :func:`install` also wraps inspect's exception hook so that the
message of a ``PrerequisiteError`` or an ``InputError`` is written to stderr, whatever the display.
"""

from __future__ import annotations

import sys
from typing import Any

from stereoprobe.errors import InputError, one_line

__all__ = ["PREFIX", "check", "install", "models", "task_names", "unknown_task_line"]

PREFIX = "stereoprobe/"
_COMMANDS = ("eval",)  # inspect's commands whose command line is checked (eval-set and eval-retry: not yet)
_MODELS: list[str] = []


def models() -> list[str]:
    """The ``--model`` names of the ``inspect eval`` command line while its tasks are checked, before any model
    is built (a task's build may refuse a provider by name now); empty otherwise."""
    return list(_MODELS)


def task_names() -> list[str]:
    """The names of stereoprobe's inspect tasks (without the ``stereoprobe/`` prefix), sorted."""
    from inspect_ai._util.registry import registry_find, registry_info

    found = registry_find(lambda info: info.type == "task" and info.name.startswith(PREFIX))
    return sorted(registry_info(t).name[len(PREFIX):] for t in found)


def unknown_task_line(name: str, known: list[str]) -> str:
    """The one line for a ``stereoprobe/<name>`` that is no task, with the closest names."""
    import difflib

    close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    hint = f": did you mean {' or '.join(PREFIX + c for c in close)}?" if close else ""
    return (f"stereoprobe has no task {name!r}{hint} (its tasks: {', '.join(known)}; "
            "their parameters: stereoprobe tasks)")


class _Refused(Exception):
    """A refusal found by the check: its one line."""


def _error_line(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    text = one_line(message if isinstance(message, str) else exc)
    from stereoprobe.redact import redact_text

    return redact_text(text)


def _stereoprobe_specs(tasks: Any) -> list[str]:
    specs = [str(t) for t in (tasks or ())]
    return [s[len(PREFIX):] for s in specs if s.startswith(PREFIX)]


def check(params: dict[str, Any]) -> None:
    """Check the stereoprobe tasks of one ``inspect eval`` command line (click's ``params``); raise
    :class:`_Refused` with the one line of the first refusal."""
    names = _stereoprobe_specs(params.get("tasks"))
    if not names or params.get("run_config"):
        return
    known = task_names()
    for name in names:
        if name not in known:
            raise _Refused(unknown_task_line(name, known))
    for given in params.get("t") or ():
        name, eq, value = str(given).partition("=")
        if eq and not value.strip():  # inspect reads an empty value as not given: the task's default would run
            raise _Refused(f"-T {name.strip()}= has no value (inspect would run the task's default): give a value "
                           "or leave the option out")
    from inspect_ai._cli.util import parse_cli_config

    try:
        args = parse_cli_config(params.get("t"), params.get("task_config"))
    except Exception:  # noqa: BLE001 (inspect reports its own parse errors)
        return
    _MODELS[:] = _model_names(params.get("model"))
    try:
        _build_each(names, args, params.get("epochs"))
    finally:
        _MODELS.clear()


def _model_names(given: Any) -> list[str]:
    items = [given] if isinstance(given, str) else list(given or ())
    return [m.strip() for item in items for m in str(item).split(",") if m.strip()]


def _build_each(names: list[str], args: dict[str, Any], epochs: Any) -> None:
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai._eval.registry import task_create

    for name in names:
        try:
            task = task_create(PREFIX + name, **args)
            check_epochs = getattr(task, "check_epochs", None)
            if epochs is not None and check_epochs is not None:
                check_epochs(int(epochs))
        except (InputError, PrerequisiteError) as exc:
            raise _Refused(f"stereoprobe/{name}: {_error_line(exc)}") from exc
        except Exception:  # noqa: BLE001 (not a refusal of the command line: the run reports it)
            continue


def _excepthook(previous: Any) -> Any:
    """``previous`` (inspect's hook), with the one line of a refusal written to stderr in every display mode."""
    from inspect_ai._util.error import PrerequisiteError

    def hook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        if isinstance(exc, (PrerequisiteError, InputError)):
            message = getattr(exc, "message", None)
            try:
                if message is None or isinstance(message, str):
                    print(_error_line(exc), file=sys.stderr, flush=True)
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
    from inspect_ai._util import error as inspect_error

    inspect_error.set_exception_hook()
    if not getattr(sys.excepthook, "__stereoprobe__", False):
        sys.excepthook = _excepthook(sys.excepthook)


def install() -> None:
    """Run the checks of this process's ``inspect eval`` command line, if it is one (called when inspect loads
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
    if ctx.info_name not in _COMMANDS:
        return
    try:
        check(dict(ctx.params))
    except _Refused as refusal:
        print(str(refusal), file=sys.stderr, flush=True)
        raise SystemExit(1) from None
