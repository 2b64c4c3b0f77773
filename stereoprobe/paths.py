"""Where stereoprobe finds its bundled data and keeps its caches."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path


def datasets_dir() -> Path:
    """The installed ``datasets/`` folder (project-authored YAML/JSON/CSV data).

    ``datasets/`` is installed as package data of ``stereoprobe.datasets`` without an ``__init__.py``;
    it sits beside ``stereoprobe.tasks`` both in an editable install and in a wheel.
    """
    return Path(str(files("stereoprobe.tasks"))).parent / "datasets"


def dataset_file(*parts: str) -> Path:
    """Path of a bundled data file, e.g. ``dataset_file("dbb", "descriptors.yaml")``; clear error if absent."""
    path = datasets_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"bundled data file not found: {path} (is stereoprobe installed completely?)")
    return path


def cache_dir(*parts: str) -> Path:
    """stereoprobe's cache folder (``$STEREOPROBE_CACHE`` or ``~/.cache/stereoprobe``), created on demand; a
    folder that cannot be created (a read-only home, a full disk) is one :class:`~stereoprobe.errors.InputError`
    line naming it, the cause and ``$STEREOPROBE_CACHE``."""
    from stereoprobe.errors import InputError

    root = Path(os.environ.get("STEREOPROBE_CACHE", Path.home() / ".cache" / "stereoprobe"))
    path = root.joinpath(*parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{exc.filename or path}: cannot create stereoprobe's cache folder "
                         f"({(exc.strerror or str(exc)).lower()}); set $STEREOPROBE_CACHE to a writable "
                         "folder") from exc
    return path
