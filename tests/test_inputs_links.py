"""Inputs are never left out without a word (issue 28.2): a symbolic link to a folder of logs is followed (each
real folder walked once, so a loop ends), a link to nothing is one line naming it, and a run whose logs list
fewer samples than its dataset holds (the first half of an ``inspect eval --limit`` split run) is reported as
partial, while its two halves together are complete."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from eval_edit import edit_eval, set_path
from test_inputs_structure import _log

from stereoprobe.errors import InputError
from stereoprobe.inputs import ReadStats, find_logs, iter_samples, partition


@pytest.fixture(scope="module")
def real_log(tmp_path_factory) -> Path:
    return _log(tmp_path_factory.mktemp("real"))


def _copy(real_log: Path, dest: Path) -> Path:
    return edit_eval(real_log, dest)


def test_a_linked_subfolder_of_logs_is_followed(real_log, tmp_path):
    elsewhere = _copy(real_log, tmp_path / "elsewhere" / "run.eval").parent
    root = tmp_path / "logs"
    root.mkdir()
    os.symlink(elsewhere, root / "linked")
    assert find_logs([root]) == [root / "linked" / "run.eval"]
    assert partition([root], ("logs",)).logs == [root / "linked" / "run.eval"]
    stats = ReadStats()
    assert sum(1 for _ in iter_samples([root], "tiny", stats=stats)) == 3 and stats.samples == 3


def test_a_second_link_to_a_folder_counts_each_log_once(real_log, tmp_path):
    root = tmp_path / "logs"
    _copy(real_log, root / "a" / "run.eval")
    os.symlink(root / "a", root / "again")  # a second way into a folder already walked
    found = find_logs([root])
    assert len(found) == 1 and found[0].name == "run.eval"


@pytest.mark.parametrize("target", ["top", "root"])
def test_a_link_loop_is_one_line_naming_the_link(real_log, tmp_path, target):
    root = tmp_path / "logs"
    _copy(real_log, root / "a" / "run.eval")
    os.symlink(root if target == "top" else "/", root / "a" / "back")  # a loop; "/" holds every folder
    with pytest.raises(InputError, match=r"a/back: a symbolic link to .*, a folder holding it \(a loop\)"):
        find_logs([root])


def test_a_link_to_nothing_is_one_line_naming_it(real_log, tmp_path):
    root = tmp_path / "logs"
    _copy(real_log, root / "run.eval")
    os.symlink(tmp_path / "moved_away", root / "more_logs")
    with pytest.raises(InputError, match=r"more_logs: a symbolic link to .*moved_away.*does not exist"):
        find_logs([root])


def _limited(real_log: Path, dest: Path, keep: list[str]) -> Path:
    """A copy as ``inspect eval --limit`` writes it: the header lists only ``keep``, the dataset holds 3."""
    return edit_eval(real_log, dest, drop=lambda n: n.startswith("samples/") and n.split("/")[1].split("_")[0] not in keep,
                     header=lambda h: set_path(h, "eval.dataset.sample_ids", keep))


def test_the_first_half_of_a_limit_run_is_reported_partial(real_log, tmp_path):
    first = _limited(real_log, tmp_path / "half" / "first.eval", ["s0", "s1"])
    stats = ReadStats()
    assert sum(1 for _ in iter_samples([first.parent], "tiny", stats=stats)) == 2
    [run] = stats.partial_runs
    assert (run["task"], run["listed"], run["dataset_samples"]) == ("tiny", 2, 3)
    assert "covers 2 of the dataset's 3 samples (1 in no log" in stats.summary()
    assert stats.as_dict()["partial_runs"][0]["files"] == [str(first)]


def test_both_halves_of_a_split_run_are_complete(real_log, tmp_path):
    _limited(real_log, tmp_path / "both" / "first.eval", ["s0", "s1"])
    _limited(real_log, tmp_path / "both" / "second.eval", ["s2"])
    stats = ReadStats()
    assert sum(1 for _ in iter_samples([tmp_path / "both"], "tiny", stats=stats)) == 3
    assert stats.partial_runs == [] and "dataset" not in stats.summary()
