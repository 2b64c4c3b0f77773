"""The run's own settings, checked for every provider: generation settings (``--top-p 2``,
``--max-connections 0``) when a task is built, and ``--epochs`` once, before any model loads.

A value outside its range is refused in one line naming the setting (the format of :mod:`stereoprobe.params`)::

    generation setting top_p must be a finite number in [0, 1], got top_p=2.0
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import GenerateConfig

from stereoprobe import params as P
from stereoprobe.providers.validation import check_generate_config

__all__ = ["RunSettingError", "check_active_run", "check_epochs", "check_run_config"]


class RunSettingError(P.TaskParameterError):
    """A generation setting of the run (``inspect eval --top-p 2``, ``--max-connections 0``) outside its range,
    refused by the task for every provider."""

    subject = "generation setting"


def check_run_config(config: GenerateConfig, error: type[P.TaskParameterError] = RunSettingError) -> None:
    """:func:`~stereoprobe.providers.validation.check_generate_config` plus the run's own settings that would
    otherwise hang or spin (``max_connections`` 0 waits forever for a free connection)."""
    check_generate_config(config, error)
    P.integer(config.max_connections, "max_connections", 1, optional=True, error=error)
    P.integer(config.max_retries, "max_retries", 0, optional=True, error=error)
    P.number(config.timeout, "timeout", 0.0, low_open=True, optional=True, error=error)
    P.number(config.attempt_timeout, "attempt_timeout", 0.0, low_open=True, optional=True, error=error)


def check_active_run() -> None:
    """When a task is built: the run's generation settings (``--temperature``, ``--top-p``, ``--max-tokens``,
    ``--max-connections`` ... and the active model's own ``GenerateConfig``), one line naming the setting."""
    from stereoprobe.inspect_internals import active_generate_config, active_model

    check_run_config(active_generate_config())
    model = active_model()
    if model is not None:
        check_run_config(model.config)


def check_epochs(given: int | None, task: Any, command: str = "inspect eval") -> None:
    """``--epochs`` (None: not given): an integer >= 1 (inspect reads 0 as not given and would run the task's
    own epochs), within the task's bound where it states one (:class:`stereoprobe.params.EpochsBoundTask`)."""
    if given is None:
        return
    if given < 1:
        raise RunSettingError(f"{command} --epochs must be an integer >= 1, got --epochs {given}")
    bound = getattr(task, "check_epochs", None)
    if bound is not None:
        bound(given, option=f"{command} --epochs")
