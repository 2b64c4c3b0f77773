"""Stage clocks shared by the task-path benches (``bench/task_path.py``, ``bench/harness_stages.py``): the process's
age at a script's first line and a wrapper that counts a function's calls and their seconds."""

from __future__ import annotations

import os
import time


def process_age() -> float:
    """Seconds since this process started (from /proc; 0 where there is none)."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        return max(0.0, up - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


class Counter:
    """Wraps ``owner.name`` (a function) to count its calls and their seconds; ``first_start`` and ``last_end``
    are the ``perf_counter`` of the first call's start and the last call's end (None before a call)."""

    def __init__(self, owner: object, name: str, is_async: bool = False) -> None:
        self.calls, self.seconds = 0, 0.0
        self.first_start: float | None = None
        self.last_end: float | None = None
        inner = getattr(owner, name)

        def wrapped(*a: object, **k: object) -> object:
            t0 = self._start()
            try:
                return inner(*a, **k)
            finally:
                self._end(t0)

        async def awrapped(*a: object, **k: object) -> object:
            t0 = self._start()
            try:
                return await inner(*a, **k)  # type: ignore[misc]
            finally:
                self._end(t0)

        setattr(owner, name, awrapped if is_async else wrapped)

    def _start(self) -> float:
        self.calls += 1
        t0 = time.perf_counter()
        if self.first_start is None:
            self.first_start = t0
        return t0

    def _end(self, t0: float) -> None:
        self.last_end = time.perf_counter()
        self.seconds += self.last_end - t0
