"""A report's figures rendered side by side: each in a forked process when the machine has cores to spare.

matplotlib draws a figure on one core, and most of a figure's time is its text (every tick label shaped and
hinted glyph by glyph by FreeType), so a report of several figures waits on one core while the others idle.
:func:`render_all` builds and renders each figure (:func:`~stereoprobe.report.html.render_png`, the same
function and the same bytes as in-process) in a pool of forked workers, one per core up to the figure count,
and returns the PNGs and crop boxes in the builders' order. It renders in-process instead where a fork is
not safe or not worth it: one figure, one core, a platform other than Linux (macOS's system libraries are not
fork-safe), or other threads running in this process (a fork copies their locks in whatever state they are).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.transforms import Bbox

__all__ = ["render_all", "workers_for"]

#: the builders of the figures being rendered, read by the forked workers (a fork copies them; closures are not
#: sent through a pipe)
_PENDING: Sequence[Callable[[], MplFigure]] = ()


def workers_for(n_figures: int) -> int:
    """How many processes :func:`render_all` forks for ``n_figures`` figures (0: render in-process)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n_figures < 2 or cores < 2 or sys.platform != "linux" or threading.active_count() > 1:
        return 0
    return min(cores, n_figures)


def _render(index: int) -> tuple[bytes, Bbox]:
    from stereoprobe.report.html import render_png

    return render_png(_PENDING[index]())


def render_all(builders: Sequence[Callable[[], MplFigure]]) -> list[tuple[bytes, Bbox]]:
    """PNG bytes and crop box of each builder's figure, in order: ``render_png(build())`` for each, in
    :func:`workers_for` forked processes (each figure is built and closed in the process that renders it)."""
    global _PENDING
    n = workers_for(len(builders))
    if not n:
        return [_render_in_process(b) for b in builders]
    import multiprocessing

    _PENDING = builders
    try:
        with multiprocessing.get_context("fork").Pool(n) as pool:
            return pool.map(_render, range(len(builders)), chunksize=1)
    finally:
        _PENDING = ()


def _render_in_process(build: Callable[[], MplFigure]) -> tuple[bytes, Bbox]:
    from stereoprobe.report.html import render_png

    return render_png(build())
