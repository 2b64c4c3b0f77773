"""Labels that try to leave the output folders (``LABEL=PATH`` inputs): every file stays inside ``--out`` and
``--hub-eval-results``, one file per label, and plot text is drawn literally."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
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
