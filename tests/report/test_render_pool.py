"""Figures rendered in forked workers (:mod:`stereoprobe.report.render_pool`) are the figures rendered here."""

from __future__ import annotations

import re
import sys
import threading
from typing import Any

import pytest

import stereoprobe.report.render_pool as render_pool
from stereoprobe.report.html import Section, render_png


def _builders() -> list[Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def bars(n: int) -> Any:
        fig, ax = plt.subplots(figsize=(3 + 0.2 * n, 2.5))
        ax.bar(range(n), [((k * 7) % 5) - 2 for k in range(n)])
        ax.set_xticks(range(n), [f"group {k}" for k in range(n)], rotation=70, ha="right", fontsize=7)
        ax.set_title(f"{n} bars")
        fig.tight_layout()
        return fig

    return [lambda n=n: bars(n) for n in (3, 8, 13)]


@pytest.mark.skipif(sys.platform != "linux", reason="figures are forked on Linux only")
def test_forked_figures_are_the_figures_rendered_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    builders = _builders()
    here = [render_png(build()) for build in builders]
    monkeypatch.setattr(render_pool, "workers_for", lambda n: 2)
    forked = render_pool.render_all(builders)
    assert [png for png, _ in forked] == [png for png, _ in here]
    assert [tuple(box.bounds) for _, box in forked] == [tuple(box.bounds) for _, box in here]
    assert render_pool._PENDING == ()  # the builders are not kept


def test_one_figure_or_another_thread_renders_in_process() -> None:
    assert render_pool.workers_for(1) == 0
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert render_pool.workers_for(8) == 0  # a fork would copy the thread's locks in whatever state
    finally:
        stop.set()
        t.join()


def test_an_svg_of_a_figure_rendered_elsewhere_is_drawn_again_the_same() -> None:
    build = _builders()[1]
    direct, elsewhere = Section("a"), Section("b")
    direct.figure(build(), caption="eight")
    png, box = render_png(build())
    elsewhere.rendered(png, box, build, caption="eight")
    assert elsewhere.figures[0].png == direct.figures[0].png

    def undated(svg: bytes) -> str:  # the SVG's metadata carries the time it was written
        return re.sub(r"<dc:date>.*?</dc:date>", "", svg.decode(), flags=re.S)

    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "fixed"}):  # clip-path ids from content, not a random salt
        assert undated(elsewhere.figures[0].svg()) == undated(direct.figures[0].svg())
