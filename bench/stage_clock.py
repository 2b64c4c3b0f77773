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
    """Wraps ``owner.name`` (a function) to count its calls and their seconds."""

    def __init__(self, owner: object, name: str, is_async: bool = False) -> None:
        self.calls, self.seconds = 0, 0.0
        inner = getattr(owner, name)

        def wrapped(*a: object, **k: object) -> object:
            self.calls += 1
            t0 = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t0

        async def awrapped(*a: object, **k: object) -> object:
            self.calls += 1
            t0 = time.perf_counter()
            try:
                return await inner(*a, **k)  # type: ignore[misc]
            finally:
                self.seconds += time.perf_counter() - t0

        setattr(owner, name, awrapped if is_async else wrapped)
