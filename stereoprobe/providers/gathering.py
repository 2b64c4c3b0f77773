"""How long the ``transformers`` provider's worker waits for concurrent samples to join a batch."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from stereoprobe.providers.args import WorkerRequest

__all__ = ["GATHER_TICK", "gather", "gather_window"]

GATHER_TICK = 0.003  # seconds between two looks at the queue while gathering a batch


def gather_window(queue: list[WorkerRequest]) -> tuple[float, float]:
    """(settle, limit) seconds the worker waits for concurrent samples to join a batch: it takes the queue once
    no request arrived for ``settle`` seconds, or after ``limit``. Scoring: one tick, at most 20 ms (a forward
    pass is short, and the next round picks up late arrivals). Multi-token generation: 50 ms of quiet, at most
    0.5 s, since a request that misses the batch waits for the whole generation (seconds) before it starts;
    inspect's concurrent samples reach the provider over tens of milliseconds."""
    if queue and queue[0].kind == "generate" and int(queue[0].payload.get("max_new_tokens", 1)) > 1:
        return 0.05, 0.5
    return GATHER_TICK, 0.02


def gather(cv: threading.Condition, queue: Callable[[], list[WorkerRequest]]) -> None:
    """Let concurrent samples that are about to submit join the next batch: return once the queue (read under
    ``cv``) has not grown for the settle time of :func:`gather_window`, or after its limit."""
    with cv:
        settle, limit = gather_window(queue())
    waited, size, quiet = 0.0, -1, 0.0
    while waited < limit:
        with cv:
            grew, size = len(queue()) != size, len(queue())
        quiet = 0.0 if grew else quiet + GATHER_TICK
        if quiet >= settle:
            break
        time.sleep(GATHER_TICK)
        waited += GATHER_TICK
