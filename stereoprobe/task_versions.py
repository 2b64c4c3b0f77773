"""Task versions, read in one place: inspect_evals' ``N-X`` scheme and each task's changelog.

A task's version (``tasks/<probe>.eval.yaml``, :func:`stereoprobe.listings.task_version`, written into every
log as ``task_version``) is ``N-X``, as inspect_evals' task-versioning guide sets it: ``N`` (1, 2, 3, ...)
changes only when results stop being comparable with those of earlier versions (scoring, data, prompts,
parameters that change what a model is asked); ``X`` (A, B, C, ...) changes when the task's interface does
(a ``-T`` parameter renamed, added or removed). Neither part ever decreases.

Each listed task has a ``changelog`` (the task entry's, else the listing's): one entry per release, newest
first, with ``version``, ``numbers`` (``changed`` when N moved, ``same`` otherwise), ``note`` and, for the
releases before this scheme, ``was`` (the ``1.2.0``-style version their logs record), so that an older log is
still placed. Every reader of versions uses this module: the leaderboard (runs of different N are not ranked
side by side without a note) and the log readers (a log of a future version is noticed).

>>> parse_version("3-A")
TaskVersion(comparability=3, interface='A')
>>> str(parse_version(" 12-AB "))
'12-AB'
>>> parse_version("1.2.0") is None, parse_version(0) is None, parse_version("0-A") is None
(True, True, True)
>>> parse_version("2-B") < parse_version("2-C") < parse_version("3-A") < parse_version("3-AA")
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["TaskVersion", "Status", "changelog", "comparability", "current_version", "log_version",
           "parse_version", "version_status"]

_PATTERN = re.compile(r"([1-9][0-9]*)-([A-Z]+)")

#: where a log's recorded version stands against the installed task's
Status = Literal["current", "older", "future", "unknown"]


@dataclass(frozen=True)
class TaskVersion:
    """One ``N-X`` version: ``comparability`` is N, ``interface`` is X; ordered by N, then X (``Z`` < ``AA``)."""

    comparability: int
    interface: str

    def __str__(self) -> str:
        return f"{self.comparability}-{self.interface}"

    def _key(self) -> tuple[int, int, str]:
        return self.comparability, len(self.interface), self.interface

    def __lt__(self, other: TaskVersion) -> bool:
        return self._key() < other._key()

    def __le__(self, other: TaskVersion) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: TaskVersion) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: TaskVersion) -> bool:
        return self._key() >= other._key()


def parse_version(value: Any) -> TaskVersion | None:
    """The :class:`TaskVersion` of an ``N-X`` text; None for anything else (a ``1.2.0``-style version of
    the releases before this scheme, a number, inspect's default ``0``)."""
    if not isinstance(value, str):
        return None
    m = _PATTERN.fullmatch(value.strip())
    return TaskVersion(int(m.group(1)), m.group(2)) if m else None


def _entry(task: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(listing, task entry)`` of the listing naming ``task``; None for a task no listing names."""
    from stereoprobe.errors import InputError
    from stereoprobe.listings import listing_names, load_listing

    try:
        names = listing_names()
    except InputError:
        return None
    for probe in names:
        listing = load_listing(probe)
        for entry in listing.get("tasks") or []:
            if isinstance(entry, dict) and entry.get("name") == task:
                return listing, entry
    return None


def current_version(task: str) -> TaskVersion:
    """The installed version of ``task`` (its listing's); an :class:`~stereoprobe.errors.InputError` when the
    task is listed nowhere or its version is not ``N-X``."""
    from stereoprobe.errors import InputError
    from stereoprobe.listings import task_version

    text = task_version(task)
    version = parse_version(text)
    if version is None:
        raise InputError(f"task {task!r}: version {text!r} in its listing is not N-X (e.g. '1-A')")
    return version


def changelog(task: str) -> list[dict[str, Any]]:
    """The changelog entries of ``task``, newest first (``[]`` for a task no listing names)."""
    found = _entry(task)
    if found is None:
        return []
    listing, entry = found
    log = entry.get("changelog", listing.get("changelog")) or []
    return [dict(e) for e in log if isinstance(e, dict)]


def log_version(task: str, recorded: Any) -> TaskVersion | None:
    """The ``N-X`` version of a log of ``task`` that recorded ``recorded``: itself when it is ``N-X``, the
    changelog's entry whose ``was`` it is for an older ``1.2.0``-style version, else None (unknown)."""
    version = parse_version(recorded)
    if version is not None:
        return version
    text = str(recorded).strip()
    for entry in changelog(task):
        was = entry.get("was")
        if text and (text == str(was) or (isinstance(was, list) and text in [str(w) for w in was])):
            return parse_version(entry.get("version"))
    return None


def comparability(task: str, recorded: Any) -> int | None:
    """N of a log's recorded version (:func:`log_version`); None when unknown. Results of two runs of one
    task are comparable when both are known and equal."""
    version = log_version(task, recorded)
    return None if version is None else version.comparability


def version_status(task: str, recorded: Any) -> Status:
    """``current``, ``older`` or ``future`` (newer than the installed task: the log was written by a later
    release, whose results this one may misread) for a log of ``task`` that recorded ``recorded``;
    ``unknown`` when the task is listed nowhere or the version cannot be placed."""
    from stereoprobe.errors import InputError

    version = log_version(task, recorded)
    if version is None:
        return "unknown"
    try:
        ours = current_version(task)
    except InputError:
        return "unknown"
    if version == ours:
        return "current"
    return "future" if version > ours else "older"
