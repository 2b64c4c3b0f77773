"""Console output of the post-processing: result lines, progress bars and spinners, all silenced by ``--quiet``.

Progress is drawn on stderr with rich (the look of inspect's console) and only when stderr is a terminal, so
logs of CI jobs and pipes stay clean. ``stereoprobe --quiet`` calls :func:`set_quiet`. Only the command line
calls them (``stereoprobe.cli.common`` re-exports them): library functions take a ``progress`` / ``step``
callback (:data:`stereoprobe.inputs.Progress`, :data:`stereoprobe.inputs.Step`, silent by default) that the
command line fills with :func:`progress` / :func:`spinner`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")

# Set by ``stereoprobe --quiet`` (``stereoprobe.cli.main``) through :func:`set_quiet`.
QUIET = False


def set_quiet(quiet: bool) -> None:
    """Silence (or restore) :func:`info`, :func:`progress` and :func:`spinner`."""
    global QUIET
    QUIET = bool(quiet)


def is_quiet() -> bool:
    """Whether console output is silenced (``--quiet``)."""
    return QUIET


def info(message: str) -> None:
    """Print a result line on stdout (e.g. "wrote DIR/report.html"), unless ``--quiet``; credentials redacted
    (:func:`stereoprobe.redact.redact_text`: a key inside a model name, a base URL or a log path)."""
    if not QUIET:
        from stereoprobe.redact import redact_text

        print(redact_text(str(message)), flush=True)


_WARNED: set[str] = set()


def warn(message: str) -> None:
    """A warning line on stderr, once per process (credentials redacted): the one path of stereoprobe's own
    warnings to the console. A task is built twice in one ``inspect eval`` when the check before the run
    cannot hand its build on (:mod:`stereoprobe.preflight.built`), once before inspect's logging starts: a
    logged warning then showed twice, as Python's plain last-resort line and as inspect's log record. Not
    silenced by ``--quiet`` (a warning is no progress line)."""
    from stereoprobe.redact import redact_text

    text = redact_text(str(message))
    if text in _WARNED:
        return
    _WARNED.add(text)
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed or gone: a warning is not worth a traceback
        pass


def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
    """A replacement of :func:`warnings.showwarning` (the command line installs it for the length of a
    command): Python's own format, credentials redacted, on stderr. A warning of a library quoting a run's
    settings (``base_url='https://user:pw@...'``) shows no key."""
    import warnings

    from stereoprobe.redact import redact_text

    text = redact_text(warnings.formatwarning(message, category, filename, lineno, line))
    stream = sys.stderr if file is None else file
    try:
        stream.write(text)
    except (OSError, ValueError):  # stderr closed or gone: a warning is not worth a traceback
        pass


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


@contextlib.contextmanager
def step_line(description: str) -> Iterator[None]:
    """One plain line on stderr when a long step starts and one when it ends, with its duration, on a terminal
    or not (a CI log or a pipe sees progress too, unlike :func:`spinner`); silent with ``--quiet``."""
    import time

    if QUIET:
        yield
        return
    start = time.monotonic()
    print(f"{description} …", file=sys.stderr, flush=True)
    yield
    print(f"{description}: done in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)

