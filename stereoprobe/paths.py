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


CACHE_ENV = "STEREOPROBE_CACHE"
_NOTICED: set[str] = set()


def cache_root() -> Path:
    """``$STEREOPROBE_CACHE`` (default ``~/.cache/stereoprobe``) as an absolute folder. A leading ``~`` is
    expanded, with one notice on stderr (a shell did not expand it: quoted, or set in a file); set but empty,
    or relative (it would put the cache in whatever folder a run starts from) is one
    :class:`~stereoprobe.errors.InputError` line naming the setting."""
    import sys

    from stereoprobe.errors import InputError

    value = os.environ.get(CACHE_ENV)
    if value is None:
        return Path.home() / ".cache" / "stereoprobe"
    if not value.strip():
        raise InputError(f"${CACHE_ENV} is set but empty; unset it for the default ~/.cache/stereoprobe, or give "
                         "an absolute folder")
    root = Path(value).expanduser() if value.startswith("~") else Path(value)
    if not root.is_absolute():
        raise InputError(f"${CACHE_ENV}={value}: a relative folder (the cache would move with the folder a run "
                         "starts from); give an absolute folder")
    if value.startswith("~") and value not in _NOTICED:
        _NOTICED.add(value)
        print(f"stereoprobe: notice: ${CACHE_ENV}={value} read as {root} (~ expanded)", file=sys.stderr)
    return root


def cache_dir(*parts: str) -> Path:
    """stereoprobe's cache folder (:func:`cache_root`), created on demand; a folder that cannot be created (a
    read-only home, a full disk) is one :class:`~stereoprobe.errors.InputError` line naming it, the cause and
    ``$STEREOPROBE_CACHE``."""
    from stereoprobe.errors import InputError

    path = cache_root().joinpath(*parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{exc.filename or path}: cannot create stereoprobe's cache folder "
                         f"({(exc.strerror or str(exc)).lower()}); set $STEREOPROBE_CACHE to a writable "
                         "folder") from exc
    return path
