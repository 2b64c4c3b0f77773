"""A run stopped by a malformed reply (:class:`~stereoprobe.likelihood.MalformedReply`) ends ``inspect eval``
with its one line and exit code 1 (issue 41.2).

inspect records a sample's exception as the task's error, shows it as a traceback and exits 0 (its command
line reports a run that ended in error by the log's status only). For the one error that means "the server's
replies broke after the capability probe passed", :func:`install` (called by :func:`stereoprobe.preflight.install`
on inspect's command line only) shows the task's error as its one line (:func:`stereoprobe.errors.reason`)
instead of the traceback, and, when the command ends, prints that line on stderr and exits 1.
"""

from __future__ import annotations

import sys
from typing import Any

from stereoprobe.errors import reason
from stereoprobe.likelihood import MalformedReply

__all__ = ["install"]


def _line(exc: BaseException) -> str:
    return reason(exc, fold=True)


def _exit_if_stopped() -> None:
    """At the command's end: the first malformed reply's line on stderr, exit 1 (nothing when none)."""
    if MalformedReply.raised:
        try:
            print(MalformedReply.raised[0], file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass
        raise SystemExit(1)


def install(ctx: Any) -> None:
    """On inspect's command line (``ctx``: click's root context): the display and the exit code above."""
    from stereoprobe.inspect_internals import render_task_error_as_line

    render_task_error_as_line(MalformedReply, _line)
    ctx.call_on_close(_exit_if_stopped)
