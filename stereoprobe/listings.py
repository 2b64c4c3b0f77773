"""The probes' ``eval.yaml`` listings, kept beside their tasks (``tasks/<probe>.eval.yaml``).

A listing follows inspect_evals' ``eval.yaml`` (title, description, arxiv, group, version, tasks, external
assets, metadata) plus what a reader needs to rerun the probe (data, metrics, parameters, reproduce) and the
``hub`` section the leaderboard's Hub export reads. It is the one place of a task's version: the task modules
pass :func:`task_version` to inspect's ``Task(version=...)``. Unknown keys are kept as they are, so a listing
can grow new sections (e.g. a Hugging Face Hub benchmark card) without a code change here.

    from stereoprobe.listings import load_listing, task_version
    load_listing("dbb")["title"]      # 'DBB: Description-based Bias Benchmark'
    task_version("dbb_sg")            # the listing's version, or the task entry's own
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError

__all__ = ["LISTING_SUFFIX", "listing_names", "listing_path", "load_listing", "task_version", "tasks_dir"]

#: file name of a listing beside its task module: ``tasks/<probe>.eval.yaml``
LISTING_SUFFIX = ".eval.yaml"


def tasks_dir() -> Path:
    """The installed ``tasks/`` folder (the package ``stereoprobe.tasks``), found without importing it."""
    spec = importlib.util.find_spec("stereoprobe.tasks")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the stereoprobe.tasks package is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def listing_path(probe: str) -> Path:
    """``tasks/<probe>.eval.yaml`` (whether or not it exists)."""
    return tasks_dir() / f"{probe}{LISTING_SUFFIX}"


def listing_names() -> list[str]:
    """Probes with a listing, sorted."""
    return sorted(p.name[: -len(LISTING_SUFFIX)] for p in tasks_dir().glob(f"*{LISTING_SUFFIX}"))


@lru_cache(maxsize=None)
def _load(path: str) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise InputError(f"{path}: not a listing (a mapping with a 'tasks' list)")
    return data


def load_listing(probe: str) -> dict[str, Any]:
    """The ``eval.yaml`` listing of ``probe`` (a copy: callers may change it)."""
    import copy

    p = listing_path(probe)
    if not p.is_file():
        raise InputError(f"{p}: no listing for probe {probe!r}")
    return copy.deepcopy(_load(str(p)))


def task_version(task: str) -> str:
    """The version of inspect task ``task``: its entry's ``version`` in the listing naming it, else the
    listing's ``version``. A task named by no listing is an error (every shipped task is listed)."""
    for probe in listing_names():
        listing = _load(str(listing_path(probe)))
        for entry in listing["tasks"]:
            if isinstance(entry, dict) and entry.get("name") == task:
                version = entry.get("version", listing.get("version"))
                if not version:
                    raise InputError(f"{listing_path(probe)}: no version for task {task!r}")
                return str(version)
    raise InputError(f"task {task!r} is in no listing ({', '.join(str(listing_path(p)) for p in listing_names())})")
