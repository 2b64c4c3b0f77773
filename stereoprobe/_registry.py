"""inspect_ai entry point: importing this module registers stereoprobe's model providers, tasks and scorers.

Referenced from ``[project.entry-points.inspect_ai]`` in pyproject.toml, so ``--model transformers/...``
resolves on the inspect CLI and tasks are listed as ``stereoprobe/<task>``. Keep imports light: providers
import torch/transformers lazily inside their factory functions.

Re-scoring: inspect writes a scorer's name into the log without its package prefix (``dbb_mcq_scorer``, not
``stereoprobe/dbb_mcq_scorer``; inspect_ai ``scorer/_scorer.py`` ``as_scorer_spec``), and a bare
``inspect score LOG`` looks that bare name up in the registry (``_eval/score.py`` ``resolve_scorers``), after
loading every entry point (``hooks/_startup.py``). :func:`register_bare_scorer_names` therefore also
registers every stereoprobe scorer under its bare name, so ``inspect score LOG`` re-scores our logs with the
scorer and options recorded in them.
"""

# ruff: noqa: F401
from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from stereoprobe.providers import transformers_provider
from stereoprobe.tasks.dbb import dbb, dbb_sg
from stereoprobe.tasks.dbb_baselines import dbb_baselines
from stereoprobe.tasks.dbb_build import dbb_build_concepts, dbb_build_questions, dbb_build_variations
from stereoprobe.tasks.globalbias import globalbias
from stereoprobe.tasks.globalbias_profiles import globalbias_profiles
from stereoprobe.tasks.stereotales import stereotales
from stereoprobe.tasks.stereotales_judge import stereotales_judge

PACKAGE = "stereoprobe"


def _import_scorers() -> None:
    """Import every module of ``stereoprobe.scorers`` (each registers its scorers and metrics)."""
    import stereoprobe.scorers as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{mod.name}")


def register_bare_scorer_names() -> list[str]:
    """Register every ``stereoprobe/<name>`` scorer also as ``<name>`` (the name inspect logs); return them.

    A bare name already taken by another package's object is left alone.
    """
    from inspect_ai._util.registry import RegistryInfo, registry_add, registry_find, registry_lookup

    added = []
    found = registry_find(lambda info: info.type == "scorer" and info.name.startswith(f"{PACKAGE}/"))
    for obj in found:
        from inspect_ai._util.registry import registry_info

        info = registry_info(obj)
        bare = info.name.split("/", 1)[1]
        if registry_lookup("scorer", bare) is not None:
            continue

        def factory(*args: Any, __obj: Any = obj, **kwargs: Any) -> Any:
            return __obj(*args, **kwargs)

        factory.__name__ = bare
        factory.__doc__ = getattr(obj, "__doc__", None)
        factory.__wrapped__ = obj  # type: ignore[attr-defined]  # signature of the real scorer factory
        registry_add(factory, RegistryInfo(type="scorer", name=bare, metadata=dict(info.metadata)))
        added.append(bare)
    return added


_import_scorers()
register_bare_scorer_names()
