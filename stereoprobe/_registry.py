"""inspect_ai entry point: importing this module registers stereoprobe's model providers, tasks and scorers.

Referenced from ``[project.entry-points.inspect_ai]`` in pyproject.toml, so ``--model transformers/...``
resolves on the inspect CLI and tasks are listed as ``stereoprobe/<task>``. The tasks, solvers and scorers are
found by a loop over their packages (:func:`import_modules`), never named here. Keep imports light: providers
import torch/transformers lazily inside their factory functions.

Re-scoring: inspect writes a scorer's name into the log without its package prefix (``dbb_mcq_scorer``, not
``stereoprobe/dbb_mcq_scorer``; inspect_ai ``scorer/_scorer.py`` ``as_scorer_spec``), and a bare
``inspect score LOG`` looks that bare name up in the registry (``_eval/score.py`` ``resolve_scorers``), after
loading every entry point (``hooks/_startup.py``). :func:`register_bare_scorer_names` therefore also
registers every stereoprobe scorer under its bare name, so ``inspect score LOG`` re-scores our logs with the
scorer and options recorded in them.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from stereoprobe.providers import transformers_provider  # noqa: F401 (registers the model provider)

PACKAGE = "stereoprobe"
#: the packages whose every module is imported, each registering its tasks, solvers, scorers and metrics with
#: inspect: a new probe's ``tasks/<probe>.py``, ``solvers/...`` and ``scorers/...`` need no edit here
MODULE_PACKAGES = ("stereoprobe.tasks", "stereoprobe.solvers", "stereoprobe.scorers")


def import_modules(package: str) -> list[str]:
    """Import every module of ``package`` (each registers its inspect objects); return their names."""
    pkg = importlib.import_module(package)
    names = [f"{pkg.__name__}.{mod.name}" for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name)]
    for name in names:
        importlib.import_module(name)
    return names


def register_bare_scorer_names() -> list[str]:
    """Register every ``stereoprobe/<name>`` scorer also as ``<name>`` (the name inspect logs); return them.

    A bare name already taken by another package's object is left alone.
    """
    from stereoprobe.inspect_internals import register, registry_find, registry_info, registry_lookup

    added = []
    found = registry_find(lambda info: info.type == "scorer" and info.name.startswith(f"{PACKAGE}/"))
    for obj in found:
        info = registry_info(obj)
        bare = info.name.split("/", 1)[1]
        if registry_lookup("scorer", bare) is not None:
            continue

        def factory(*args: Any, __obj: Any = obj, **kwargs: Any) -> Any:
            return __obj(*args, **kwargs)

        factory.__name__ = bare
        factory.__doc__ = getattr(obj, "__doc__", None)
        factory.__wrapped__ = obj  # type: ignore[attr-defined]  # signature of the real scorer factory
        register(factory, "scorer", bare, dict(info.metadata))
        added.append(bare)
    return added


for _package in MODULE_PACKAGES:
    import_modules(_package)
register_bare_scorer_names()

# inspect eval's command line checked before any model loads (task names, -T values, --epochs), refusals on
# stderr in every display mode (stereoprobe.preflight); nothing outside inspect's command line
from stereoprobe.preflight import install as _check_command_line  # noqa: E402

_check_command_line()
