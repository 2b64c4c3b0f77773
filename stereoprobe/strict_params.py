"""Unknown task parameters refused in one line, with the nearest known name (``-T sorce=bundled``).

inspect drops a ``-T`` name the task function does not take, with a warning ("param not used"), and runs the
task with its defaults: a typo then runs (and pays for) the full default benchmark. :func:`refuse_unknown`,
placed under inspect's ``@task``, declares a variadic keyword parameter so inspect hands every ``-T`` name to
the task, and refuses one the function does not take::

    task globalbias has no parameter 'sorce' (did you mean source?); its parameters: source, faithful, ...

as a :class:`~stereoprobe.params.TaskParameterError` (one line in ``inspect eval`` and in ``stereoprobe
plan``). A name that another stereoprobe task takes is not a typo: ``inspect eval stereoprobe/dbb
stereoprobe/dbb_sg -T mode=logprob`` hands ``mode`` to both tasks, so the task that does not take it leaves it
out with one warning line instead (as inspect's own "param not used"). The function's own signature is
unchanged for readers (:func:`parameters`). The same wrapper checks the run's generation settings for every
provider (:func:`stereoprobe.preflight.run_settings.check_active_run`: ``--top-p 2``, ``--max-connections 0``
refused in one line), and hands inspect the task that the check before the run built with the same arguments
(:mod:`stereoprobe.preflight.built`: a task is built once), running the checks that task deferred to the
model's presence, and registers the neutral vLLM sampling hook when the run's model or a role is a vLLM route
(:func:`stereoprobe.providers.vllm_neutral.register_for_build`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from stereoprobe.console import warn
from stereoprobe.errors import InputError
from stereoprobe.hints import did_you_mean
from stereoprobe.params import TaskParameterError, as_prerequisite
from stereoprobe.preflight import built, path_options
from stereoprobe.preflight.run_settings import check_active_run
from stereoprobe.providers.vllm_neutral import register_for_build

__all__ = ["parameters", "refuse_unknown", "unknown_message"]

F = TypeVar("F", bound=Callable[..., Any])
_EXTRA = "unknown_task_parameters"  # the variadic keyword parameter shown to inspect
_TAKEN: dict[str, set[str]] = {}
"""Parameter name -> the decorated tasks that take it (filled as task modules are imported: inspect imports
every stereoprobe task module through the package's registry before it builds the first task)."""


def unknown_message(task: str, name: str, known: Iterable[str]) -> str:
    """The one line for ``-T name=...`` that task ``task`` does not take, with the closest known name."""
    known = list(known)
    return f"task {task} has no parameter {name!r}{did_you_mean(name, known)}; its parameters: {', '.join(known)}"


def _run_deferred(checks: list[Callable[[], None]]) -> None:
    for check in checks:
        try:
            check()
        except InputError as ex:  # one line in inspect eval, as when the task function raised it
            raise as_prerequisite(ex) from None


def parameters(fn: Callable[..., Any]) -> inspect.Signature:
    """The task function's own signature (without the variadic parameter :func:`refuse_unknown` adds)."""
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return inspect.signature(fn)


def refuse_unknown(fn: F) -> F:
    """Decorator (under ``@task``): a keyword argument ``fn`` does not take raises
    :class:`~stereoprobe.params.TaskParameterError` naming it and the closest parameter."""
    sig = inspect.signature(fn)
    known = [p for p in sig.parameters if sig.parameters[p].kind is not inspect.Parameter.VAR_KEYWORD]

    for name in known:
        _TAKEN.setdefault(name, set()).add(fn.__name__)

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        given = dict(kwargs)
        held = None if args else built.take(fn.__name__, given)
        if held is not None:  # the check before the run built it: its model checks now, with the model active
            check_active_run()
            _run_deferred(held[1])
            register_for_build(held[0])
            return held[0]
        for name in [n for n in kwargs if n not in known]:
            others = sorted(_TAKEN.get(name, set()) - {fn.__name__})
            if not others:
                raise TaskParameterError(unknown_message(fn.__name__, name, known))
            warn(f"task {fn.__name__} does not take -T {name} (a parameter of {', '.join(others)}): left out")
            del kwargs[name]
        path_options.check(fn.__name__, kwargs)  # -T source=bundeld: did you mean bundled? (before any download)
        check_active_run()  # the run's generation settings (--top-p 2, --max-connections 0, ...), any provider
        task = fn(*args, **kwargs)
        register_for_build(task)
        build = built.current()
        if build is not None and not args:
            build.record(fn.__name__, given, task)
        return task

    extra = inspect.Parameter(_EXTRA, inspect.Parameter.VAR_KEYWORD)
    checked.__signature__ = sig.replace(parameters=[*sig.parameters.values(), extra])  # type: ignore[attr-defined]
    return checked  # type: ignore[return-value]
