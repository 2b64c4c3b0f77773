"""The one door to inspect-ai's private modules (``inspect_ai._*`` and private names of public modules).

Every use of inspect's internals goes through this module (``tests/test_inspect_internals.py`` fails on any
other import), so an inspect upgrade has one place to look. For each name: what stereoprobe uses it for, and
the public API that would replace it (where inspect has one). Imports are lazy, inside each function, except
:class:`PrerequisiteError`, a light module's class needed at class-definition time: importing this module
costs nothing, and stereoprobe's inspect entry point (``stereoprobe._registry``) can use it while inspect
loads its registry.

Written against inspect-ai 0.3.x (``inspect_ai/_util/registry.py``, ``_util/error.py``, ``_util/entrypoints.py``,
``_eval/registry.py``, ``_cli/util.py``, ``model/_model.py``, ``model/_generate_config.py``,
``hooks/_startup.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# the error inspect shows as one line without a traceback (a missing prerequisite): stereoprobe's refusals of
# bad input subclass it so ``inspect eval`` prints them as such. Public replacement: none (inspect exports no
# such error class); a plain exception would print a traceback.
from inspect_ai._util.error import PrerequisiteError

__all__ = ["PrerequisiteError", "active_generate_config", "active_model", "active_model_roles", "active_sample", "custom_model_info", "in_live_metrics_update",
           "ensure_entry_points", "init_hooks", "parse_cli_args", "parse_cli_config", "register", "registry_find",
           "registry_info", "registry_lookup", "render_task_error_as_line", "set_exception_hook",
           "start_provider_server", "task_create"]


def registry_lookup(kind: str, name: str) -> Any:
    """The registered object of ``kind`` (``"task"``, ``"scorer"``, ``"modelapi"``) named ``name``, or
    ``None``: whether a task or scorer name exists, and whose it is. Public replacement: none for a lookup
    without creating (``inspect_ai.util.registry_create`` builds the object)."""
    from inspect_ai._util.registry import registry_lookup as lookup

    return lookup(kind, name)  # type: ignore[arg-type]


def registry_find(predicate: Callable[[Any], bool]) -> list[Any]:
    """Every registered object whose ``RegistryInfo`` satisfies ``predicate``: the task names, stereoprobe's
    scorers, the installed model providers. Public replacement: ``inspect_ai.list_tasks`` for tasks in files
    (not for installed packages' registrations, nor scorers and providers)."""
    from inspect_ai._util.registry import registry_find as find

    return list(find(predicate))


def registry_info(obj: Any) -> Any:
    """The ``RegistryInfo`` (type, name, metadata) of a registered object. Public replacement:
    ``inspect_ai.util.registry_info`` (the same function, exported)."""
    from inspect_ai.util import registry_info as info

    return info(obj)


def register(obj: Any, kind: str, name: str, metadata: dict[str, Any]) -> None:
    """Register ``obj`` as ``kind`` under ``name`` (stereoprobe's scorers also under their bare names, the names
    inspect logs). Public replacement: the ``@scorer(name=...)`` decorators, which register one name each."""
    from inspect_ai._util.registry import registry_add
    from inspect_ai.util import RegistryInfo

    registry_add(obj, RegistryInfo(type=kind, name=name, metadata=metadata))  # type: ignore[arg-type]


def task_create(name: str, **args: Any) -> Any:
    """The registered task ``name`` built with ``args`` as ``inspect eval`` builds it (its ``-T`` values
    coerced to the parameters' types). Public replacement: ``inspect_ai.util.registry_create("task", name,
    **args)`` (without the coercion)."""
    from inspect_ai._eval.registry import task_create as create

    return create(name, **args)


def ensure_entry_points() -> None:
    """Load the installed packages' inspect entry points (their providers and tasks) before a registry search.
    Public replacement: none (inspect loads them on its first model or task lookup)."""
    from inspect_ai._util.entrypoints import ensure_entry_points as ensure

    ensure()


def init_hooks() -> None:
    """Let inspect look for the installed hooks now (it announces them on its first eval), before stereoprobe
    registers its own; nothing where this inspect has no such step. Public replacement: none."""
    try:
        from inspect_ai.hooks._startup import init_hooks as init
    except ImportError:
        return
    init()


def active_generate_config() -> Any:
    """The run's ``GenerateConfig`` (the command line's ``--temperature``, ``--max-tokens`` ...) inside an
    eval: a solver records what the user set, and the run checks read it. Public replacement: none (a solver
    sees only the merged config of its own ``generate`` call)."""
    from inspect_ai.model._generate_config import active_generate_config as active

    return active()


def custom_model_info(model: str) -> Any:
    """The ``ModelInfo`` registered for ``model`` (``provider/name``) with ``set_model_info``, or ``None``: the
    ``transformers`` provider registers its context window only where the user registered none. Public
    replacement: none without side effects (``inspect_ai.model.get_model_info`` instantiates the provider when
    no information is registered, which for an in-process model builds a second provider object)."""
    from inspect_ai.model._model_info import _get_custom_model_info

    return _get_custom_model_info(model)


def active_model() -> Any:
    """The model of the running eval, or ``None`` (no eval running): the capability check and the run checks
    read it without creating one. Public replacement: ``inspect_ai.model.get_model()``, which creates the
    default model where none is active."""
    from inspect_ai.model._model import active_model as active

    return active()


def active_model_roles() -> dict[str, Any]:
    """The run's model roles (``--model-role``, ``eval(model_roles=...)``; set before inspect builds the
    tasks), or ``{}`` outside an eval. Public replacement: ``inspect_ai.model.model_roles()``, which raises
    outside an eval."""
    from inspect_ai.model._model import model_roles

    try:
        return dict(model_roles())
    except LookupError:
        return {}


def active_sample() -> tuple[str, str]:
    """The running sample's task name (without ``stereoprobe/``) and sample id, for a message naming the sample
    (``"?"`` outside a sample). Public replacement: none (a solver sees its sample id, not its task's name)."""
    from inspect_ai.log._samples import sample_active

    active = sample_active()
    if active is None:
        return "?", "?"
    task = str(active.task)
    return task.split("/", 1)[1] if task.startswith("stereoprobe/") else task, str(active.sample.id)


def parse_cli_config(args: Any, config: Any) -> dict[str, Any]:
    """``-T``/``--task-config`` values parsed as ``inspect eval`` parses them (YAML scalars, lists). Public
    replacement: none."""
    from inspect_ai._cli.util import parse_cli_config as parse

    return dict(parse(args, config))


def parse_cli_args(args: Any) -> dict[str, Any]:
    """``-T`` values (``name=value`` strings) parsed as ``inspect eval`` parses them (YAML scalars, lists), for
    the checks before a run. Public replacement: none."""
    from inspect_ai._util.config import parse_cli_args as parse

    return dict(parse(args))


def set_exception_hook() -> None:
    """Install inspect's exception hook now (as its platform start does), so stereoprobe can wrap it. Public
    replacement: none."""
    from inspect_ai._util.error import set_exception_hook as install

    install()


def render_task_error_as_line(kind: type[BaseException], line: Callable[[BaseException], str]) -> None:
    """Show a task that ended in an exception of ``kind`` with ``line(exception)`` instead of a traceback, in
    every rich display (``full``, ``rich``, ``plain``: their task-result panel). Public replacement: none
    (inspect renders every task error as a traceback)."""
    from inspect_ai._display.core import results

    previous = results.rich_traceback
    if getattr(previous, "__stereoprobe__", False):
        return

    def render(exc_type: Any, exc_value: BaseException, exc_traceback: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(exc_value, kind):
            from rich.text import Text

            return Text(line(exc_value))
        return previous(exc_type, exc_value, exc_traceback, *args, **kwargs)

    render.__stereoprobe__ = True  # type: ignore[attr-defined]
    results.rich_traceback = render


async def start_provider_server(api: Any) -> None:
    """Start the server of a provider that starts its own on the first request (``vllm/`` without a base URL),
    so its client exists before a request is sent outside inspect's ``generate``; nothing for the others.
    Public replacement: none (``Model.generate`` starts it as part of a request)."""
    ensure = getattr(api, "_ensure_server_started", None)
    if callable(ensure):
        await ensure()


#: the code of inspect's live-progress metric update: ``update_metrics_display_fn``'s inner ``compute``
#: (``inspect_ai/_eval/task/run.py``), which recomputes the metrics at most about once a second as samples
#: complete, and not after the last one; the run's results are computed elsewhere (``task_run``)
_LIVE_UPDATE = ("update_metrics_display_fn.<locals>.compute", "run.py")


def in_live_metrics_update() -> bool:
    """Whether the metric being computed is for inspect's live progress line (over the samples completed so
    far, possibly not all of them: the line is not refreshed after the last sample) rather than the run's
    results. Read from the call stack: the frame of inspect's live update, by its qualified name and file.
    Public replacement: none (a metric receives only the scores)."""
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_qualname == _LIVE_UPDATE[0] and code.co_filename.endswith(_LIVE_UPDATE[1]):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False
