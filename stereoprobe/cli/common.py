"""Shared pieces of every ``stereoprobe`` subcommand: argparse types, the help formatter, safe output folders,
console lines and progress bars.

- Argparse types with ranges (``type=positive_int`` ...): a bad value becomes argparse's one-line error and
  exit code 2, before any work starts.
- :class:`HelpFormatter`: plain text, defaults shown (``(default: 20.0)``), as ``argparse``'s
  ``ArgumentDefaultsHelpFormatter``; the command line installs it on every subcommand.
- :func:`atomic_output_dir`: the results of a run appear in ``--out`` all at once, or not at all.
- :func:`progress` / :func:`spinner` / :func:`info`: console output on stderr / stdout that ``--quiet``
  silences (progress is also silent when stderr is not a terminal, e.g. in CI logs or pipes).
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from stereoprobe.errors import InputError

T = TypeVar("T")

# Set by ``stereoprobe --quiet`` (``stereoprobe.cli.main``); library callers may set it too.
QUIET = False


def set_quiet(quiet: bool) -> None:
    """Silence (or restore) :func:`info`, :func:`progress` and :func:`spinner`."""
    global QUIET
    QUIET = bool(quiet)


# ---------------------------------------------------------------------------------------------------------
# argparse types: each raises argparse.ArgumentTypeError, which argparse prints as one line (exit code 2)


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {'an integer' if kind is int else 'a number'}"
        ) from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (e.g. ``--folds``, ``--n-boot``)."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be an integer >= 1")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (e.g. ``--permutations``, ``--examples``; 0 usually means "off")."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be an integer >= 0")
    return value


def finite_float(text: str) -> float:
    """Any finite number (no ``nan``, ``inf``)."""
    return float(_number(text, float))


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number > 0")
    return value


def nonnegative_float(text: str) -> float:
    """A finite number >= 0."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number >= 0")
    return value


def probability(text: str) -> float:
    """A number strictly between 0 and 1 (e.g. ``--alpha``, a confidence level)."""
    value = finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number strictly between 0 and 1")
    return value


def unit_interval(text: str) -> float:
    """A number in [0, 1] (e.g. a share or a p-value filter where 0 and 1 are meaningful)."""
    value = finite_float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number between 0 and 1")
    return value


def existing_file(text: str) -> Path:
    """A path to an existing file (not a folder)."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"{text}: is a folder, expected a file")
    return p


def existing_path(text: str) -> Path:
    """A path to an existing file or folder."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file or folder")
    return p


def existing_dir(text: str) -> Path:
    """A path to an existing folder."""
    p = Path(text)
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such folder" if not p.exists() else f"{text}: not a folder")
    return p


def out_dir(text: str) -> Path:
    """An output folder: may exist (then it must be a folder) or not yet (created at the end of the run)."""
    p = Path(text)
    if p.exists() and not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: exists and is not a folder")
    for parent in p.parents:
        if parent.exists() and not parent.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: {parent} is a file, not a folder")
    return p


def comma_list(text: str) -> list[str]:
    """``a,b,c`` -> ``["a", "b", "c"]`` (blanks dropped); an empty list is an error."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a comma-separated list")
    return items


# ---------------------------------------------------------------------------------------------------------
# Help


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Plain-text help with defaults: ``(default: X)`` after each option that has a meaningful default
    (not for flags, ``None`` defaults or help texts that already name their default)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default" in text.lower()
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction,
                                   argparse._VersionAction))
            or not (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE))
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


# ---------------------------------------------------------------------------------------------------------
# Safe output folders


class _Lock:
    """An exclusive, non-blocking ``flock`` on ``path`` (released when the process ends, even on a crash)."""

    def __init__(self, path: Path, out: Path) -> None:
        self.path, self.out, self.fd = path, out, -1

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover (Windows): exclusive creation instead of a lock
            try:
                self.fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                raise self._busy() from None
            return
        while True:
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise self._busy() from None
            try:  # the holder before us may have removed the file between our open and our lock
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self.fd = fd
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                return
            os.close(fd)

    def _busy(self) -> InputError:
        return InputError(f"{self.out}: another stereoprobe run is writing into this folder (lock {self.path}); "
                          "wait for it to finish or choose another --out")

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self.fd)
            self.fd = -1


def _replace(src: Path, dst: Path, trash: Path) -> None:
    """Move ``src`` to ``dst``, replacing a file or folder already there (a folder goes to ``trash`` first)."""
    if dst.is_dir() and not dst.is_symlink():
        os.replace(dst, trash / dst.name)
    os.replace(src, dst)


@contextlib.contextmanager
def atomic_output_dir(out: str | Path) -> Iterator[Path]:
    """Build a run's results in a temporary folder beside ``out``; move them into ``out`` only on success.

    Yields the temporary folder: write every file of the run into it. On normal exit, each top-level file or
    folder written there replaces the entry of the same name in ``out`` (``out`` is created if needed);
    **files in ``out`` that this run did not write are kept** (e.g. the tables of another command sharing
    the folder). Each file is replaced with ``os.replace`` (atomic on one file system); a replaced folder is
    swapped as a whole. On an exception nothing in ``out`` changes, the temporary folder is removed (and so
    are parent folders this call created), and the exception propagates.

    Concurrency: a lock file ``.<name>.lock`` beside ``out`` is held for the whole run; a second run into
    the same ``out`` raises :class:`InputError` at once (one line) instead of mixing tables. The lock is an
    ``flock``: a crashed run never leaves a stale lock behind.

    Raises :class:`InputError` if ``out`` (or one of its parents) exists and is not a folder.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder (--out must be a folder)")
    created: list[Path] = []
    for parent in reversed(out.absolute().parents):
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{out}: {parent} is a file, not a folder")
            continue
        parent.mkdir()
        created.append(parent)
    lock = _Lock(out.parent / f".{out.name}.lock", out)
    try:
        lock.acquire()
    except BaseException:
        _remove_created(created)
        raise
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
        if not out.exists():
            os.replace(tmp, out)
        else:
            trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            try:
                for entry in sorted(tmp.iterdir()):
                    _replace(entry, out / entry.name, trash)
            finally:
                shutil.rmtree(trash, ignore_errors=True)
    except BaseException:
        if not out.exists():
            _remove_created(created)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        lock.release()
        if not out.exists():
            _remove_created(created)


def _remove_created(created: list[Path]) -> None:
    for parent in reversed(created):
        with contextlib.suppress(OSError):
            parent.rmdir()  # only if still empty


# ---------------------------------------------------------------------------------------------------------
# Console


def info(message: str) -> None:
    """Print a result line on stdout (e.g. "wrote DIR/report.html"), unless ``--quiet``."""
    if not QUIET:
        print(message, flush=True)


def _show_progress() -> bool:
    if QUIET or os.environ.get("STEREOPROBE_NO_PROGRESS"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress(iterable: Iterable[T], total: int | None = None, description: str = "working") -> Iterator[T]:
    """Iterate ``iterable`` with a progress bar on stderr (rich, the look of inspect's console).

    ``total`` defaults to ``len(iterable)`` when it has one; without a total the bar shows a count and the
    elapsed time. Silent (a plain pass-through) with ``--quiet`` or when stderr is not a terminal.
    """
    if not _show_progress():
        yield from iterable
        return
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    columns = [SpinnerColumn(), TextColumn("[progress.description]{task.description}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn()]
    if total is not None:
        columns.append(TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in iterable:
            yield item
            bar.advance(task)


@contextlib.contextmanager
def spinner(description: str) -> Iterator[None]:
    """A spinner with elapsed time on stderr for a step without a natural count (a bootstrap, a report).

    Silent with ``--quiet`` or when stderr is not a terminal.
    """
    if not _show_progress():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(description):
        yield
