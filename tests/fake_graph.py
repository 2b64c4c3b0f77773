"""A stand-in for ``torch.cuda.CUDAGraph`` in the CPU tests of the graph runners (cache-free and cached)."""

from __future__ import annotations

from typing import Any


class FakeGraph:
    """Stands in for torch.cuda.CUDAGraph: replay runs ``fn`` (right or wrong) and counts."""

    def __init__(self, fn: Any) -> None:
        self.fn, self.replays = fn, 0

    def replay(self) -> None:
        self.replays += 1
        self.fn()
