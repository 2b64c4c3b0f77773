"""A task is built once: the task the check before the run built is the one inspect runs.

The check builds each stereoprobe task of the command line before any model exists (every check a task makes
of its parameters and data runs then, in one line). Building GlobalBias' upstream data takes seconds, and
inspect builds every task again once its model is active; :func:`keep` holds the checked task, and the task
function (:func:`stereoprobe.strict_params.refuse_unknown`) hands it to inspect's build with the same arguments
instead of building it again (:func:`take`, once: a second model, or a later build, builds its own).

The checks that need the model run at inspect's build all the same: while the check builds, a task records
them (:class:`CheckedBuild`, the context of this build, which also names the command line's ``--model``
values for checks by name, e.g. a chat API refused for a likelihood task), and :func:`take` hands them back to
run with the model active.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckedBuild", "checking", "current", "forget", "keep", "take"]


@dataclass
class CheckedBuild:
    """The build of one task by the check before the run: the run's model names (no model object exists yet)
    and the checks the task defers to inspect's build (each a callable, run with the model active)."""

    models: tuple[str, ...]
    deferred: list[Callable[[], None]] = field(default_factory=list)
    built: tuple[str, str, Any] | None = None  # (task function, its arguments' key, the task) once built

    def defer(self, check: Callable[[], None]) -> None:
        """Run ``check`` at inspect's build of this task, with the model active."""
        self.deferred.append(check)

    def record(self, task: str, kwargs: dict[str, Any], result: Any) -> None:
        """The task function ``task`` built ``result`` from ``kwargs`` (kept by :func:`keep`)."""
        self.built = (*_key(task, kwargs), result)


_CURRENT: ContextVar[CheckedBuild | None] = ContextVar("stereoprobe_checked_build", default=None)
_KEPT: dict[tuple[str, str], tuple[Any, list[Callable[[], None]]]] = {}
_LOCK = threading.Lock()


def current() -> CheckedBuild | None:
    """The check's build in progress (None outside it: a task built by inspect or from Python)."""
    return _CURRENT.get()


@contextmanager
def checking(models: tuple[str, ...]) -> Iterator[CheckedBuild]:
    """Build a task inside the check: :func:`current` answers the returned :class:`CheckedBuild`."""
    build = CheckedBuild(models=models)
    token = _CURRENT.set(build)
    try:
        yield build
    finally:
        _CURRENT.reset(token)


def _key(task: str, kwargs: dict[str, Any]) -> tuple[str, str]:
    return task, repr(sorted(kwargs.items()))


def keep(build: CheckedBuild) -> None:
    """Hold the task ``build`` made for inspect's own build with the same arguments (nothing if none)."""
    if build.built is not None:
        task, key, result = build.built
        with _LOCK:
            _KEPT[(task, key)] = (result, list(build.deferred))


def take(task: str, kwargs: dict[str, Any]) -> tuple[Any, list[Callable[[], None]]] | None:
    """The held task of function ``task`` built with the same ``kwargs``, and its deferred checks (once)."""
    if _CURRENT.get() is not None:
        return None
    with _LOCK:
        return _KEPT.pop(_key(task, kwargs), None)


def forget() -> None:
    """Drop every held task (a test, or a check that refused the run)."""
    with _LOCK:
        _KEPT.clear()
