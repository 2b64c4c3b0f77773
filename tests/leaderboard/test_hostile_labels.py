"""Labels that try to leave the output folders (``LABEL=PATH`` inputs): every file stays inside ``--out`` and
``--hub-eval-results``, one file per label, and plot text is drawn literally."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.outputs import MANIFEST

from .conftest import dbb_folder

HOSTILE = ["../../escaped", "/tmp/absolute", "..", "a/../../b", "$\\frac{1}{0}$", "x" * 300, "org/model",
           "org__model", "~/home", "nul\0byte"]


def _files(root: Path) -> set[Path]:
    return {Path(dp) / f for dp, _, fs in os.walk(root) for f in fs}


@pytest.mark.parametrize("label", HOSTILE, ids=[repr(x)[:20] for x in HOSTILE])
def test_a_hostile_label_writes_inside_the_folders(label: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    folder = dbb_folder(tmp_path / "runs", {"m1": rng.uniform(0, 40, 20)})
    other = dbb_folder(tmp_path / "runs_other", {"m1": rng.uniform(0, 40, 20)})  # a folder is read once
    work = tmp_path / "work"
    work.mkdir()
    out, hub = work / "lb", work / "hub"
    outside_before = _files(tmp_path) - _files(work)
    rc = main(["leaderboard", f"{label}={folder}", f"other={other}", "--out", str(out), "--hub-eval-results",
               str(hub), "--n-boot", "50", "-q"])
    if "\0" in label:  # the label cannot name a file; refused or renamed, never a traceback
        assert rc in (0, 2)
    else:
        assert rc == 0
    assert _files(tmp_path) - _files(work) == outside_before  # nothing written outside work/
    assert not (tmp_path / "escaped").exists() and not Path("/tmp/absolute").exists()
    if rc == 0:
        summaries = sorted((out / "summary").iterdir())
        assert len(summaries) == 2 and all(p.parent == out / "summary" for p in summaries)
        assert all(p.resolve().is_relative_to(hub.resolve()) for p in _files(hub))
        hub_files = {p for p in _files(hub) if p.name != MANIFEST}
        assert len({p.parent.parent for p in hub_files}) == 2  # one Hub folder per label


def test_a_300_character_model_name_is_a_readable_two_line_tick():
    import matplotlib

    matplotlib.use("Agg")
    from stereoprobe.leaderboard.headline import METRIC_COLUMNS
    from stereoprobe.leaderboard.report import TICK_WIDTH, _forest, tick_label
    from stereoprobe.report.plot_text import bound_figure

    name = "$x^2$ model " + "abcdefghij" * 29  # 300 characters with mathtext
    label = tick_label(name)
    lines = label.split("\n")
    assert len(lines) == 2 and all(len(line) <= TICK_WIDTH for line in lines) and label.endswith("…")
    assert label.startswith("$x^2$ model")  # literal text, not a formula
    rows = [(name, "dbb", "count_s_ge_20", 3.0, 1.0, 5.0, 100, "lower", ""),
            ("short $5", "dbb", "count_s_ge_20", 6.0, 4.0, 8.0, 100, "lower", "")]
    fig = _forest(pd.DataFrame([dict(zip(METRIC_COLUMNS, r)) for r in rows]), "dbb")
    bound_figure(fig)
    fig.canvas.draw()
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert label in ticks and "short $5" in ticks
    assert all(not t.get_parse_math() for t in fig.axes[0].get_yticklabels())
