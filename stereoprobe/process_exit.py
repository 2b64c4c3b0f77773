"""The end of a command-line process: the interpreter's shutdown without its repeated full garbage collections.

When the interpreter exits it clears every module and runs the cyclic garbage collector over all the objects
still tracked, several times. After torch, transformers and inspect are imported that is hundreds of thousands
of objects: about 3.4 CPU seconds after an ``inspect eval`` of the ``transformers`` provider, paid after the
log is written and before the command returns (issue 44). :func:`freeze_at_exit` registers
:func:`gc.freeze` to run at exit: the atexit handlers still run and every object without a reference cycle is
still freed as before; objects in reference cycles are left to the operating system, which reclaims the
process's memory anyway. Nothing is written after the run's own atexit handlers (inspect closes its logs
before ``eval`` returns; the standard streams are flushed by the interpreter whatever the collector does).
"""

from __future__ import annotations

import atexit
import gc

__all__ = ["freeze_at_exit"]

_REGISTERED: list[bool] = []


def freeze_at_exit() -> None:
    """Freeze the collector's objects when the process exits (once per process, whatever the calls)."""
    if not _REGISTERED:
        atexit.register(gc.freeze)
        _REGISTERED.append(True)
