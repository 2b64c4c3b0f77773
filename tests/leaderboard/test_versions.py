"""Runs of one task at different comparability versions (N of N-X) are not ranked side by side without a note
(issue 35.13): one line naming the runs, or the user's note on the page with --accept-versions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.leaderboard import build_leaderboard
from stereoprobe.leaderboard.versions import version_note

from .conftest import dbb_folder


def _run_info(folder: Path, model: str, version: str | None) -> None:
    run = {"task": "dbb", "model": model, "model_args": {}, "model_roles": {}, "generate_config": {}}
    if version is not None:
        run["task_version"] = version
    (folder / "run_info.json").write_text(json.dumps({"probe": "dbb", "models": [model], "runs": [run]}))


def _folders(tmp_path: Path, old: str | None) -> list[str]:
    rng = np.random.default_rng(0)
    a = dbb_folder(tmp_path / "a", {"m1": rng.uniform(0, 40, 20)})
    b = dbb_folder(tmp_path / "b", {"m2": rng.uniform(0, 40, 20)})
    _run_info(a, "m1", old)
    _run_info(b, "m2", "3-A")
    return [str(a), str(b)]


def test_different_n_is_refused_in_one_line_naming_the_runs(tmp_path: Path) -> None:
    inputs = _folders(tmp_path, "2.0.0")  # a release before the N-X scheme: the changelog places it at 2-A
    with pytest.raises(InputError) as e:
        build_leaderboard(inputs, n_boot=20)
    msg = str(e.value)
    assert "\n" not in msg and "--accept-versions" in msg
    assert f"m1 (2.0.0, {inputs[0]})" in msg and f"m2 (3-A, {inputs[1]})" in msg


def test_accepted_with_a_note_shown_on_the_page(tmp_path: Path) -> None:
    inputs = _folders(tmp_path, "2-A")
    out = tmp_path / "lb"
    assert main(["leaderboard", *inputs, "--out", str(out), "--n-boot", "20", "--quiet",
                 "--accept-versions", "pilot only, rerun pending"]) == 0
    page = (out / "leaderboard.html").read_text()
    assert "accepted with the note: pilot only, rerun pending" in page and "m1 (2-A," in page
    runs = (out / "runs.csv").read_text()
    assert "2-A" in runs and "3-A" in runs


def test_same_n_or_unrecorded_versions_need_no_note(tmp_path: Path) -> None:
    assert build_leaderboard(_folders(tmp_path / "x", "3.0.0"), n_boot=20).version_note is None  # 3.0.0 is 3-A
    assert build_leaderboard(_folders(tmp_path / "y", None), n_boot=20).version_note is None  # older run_info
    assert version_note([{"task": "dbb", "task_version": "3-A"}, {"task": "dbb", "task_version": "3-B"}]) is None
