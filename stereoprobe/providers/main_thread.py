"""Scoring off the process's main thread (the causal scorer's :meth:`score`, called from any thread).

torch runs each operation of a forward in parallel over its intra-op threads (2 on the 2-core development
machine), and every parallel operation ends at a barrier where the threads wait for one another. Measured on this
machine (docs/performance.md, "Issue 44, fourth session: the provider worker outside the projection"), the
process's **main** thread pays for those barriers far more than any other thread: the harness's width-64 Llama
spent 10 to 11.5 s per 1,200 sentences outside its output projection on the main thread and about 1 s on a
second thread (or on one intra-op thread), and the default model took 4 to 6 times the CPU seconds on the main
thread, the scores identical bit for bit. The mechanism was not found (every thread reports the same intra-op
thread count). The provider's worker is a thread of its own already; :func:`off_main_thread` gives the direct
callers (``score_texts``/``score_ids`` on the main thread, the scorer process's own loop) the same.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def on_main_thread() -> bool:
    """Whether the caller is the process's main thread."""
    return threading.current_thread() is threading.main_thread()


def off_main_thread(fn: Callable[[], T]) -> T:
    """``fn()`` run on a helper thread while the main thread waits (called from any other thread: run there).

    The process's main thread pays for torch's intra-op barriers far more than any other thread: the default model
    scored 192 bundled sentences in 93.7 and 234.7 s wall (39.8 and 59.9 CPU s) on the main thread, 29.2 and 34.9 s
    (10.1 and 10.2 CPU s) on a second thread, alternating, identical bits (load 9 to 11; docs/performance.md, "Issue
    44, fourth session"). The provider's worker is such a thread already; this gives direct callers
    (``score_texts``, the scorer process) the same."""
    if not on_main_thread():
        return fn()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as ex:  # handed to the caller
            box["error"] = ex

    helper = threading.Thread(target=run, name="stereoprobe-scoring", daemon=True)
    helper.start()
    helper.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
