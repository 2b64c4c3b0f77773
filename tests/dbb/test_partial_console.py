"""``stereoprobe dbb`` on the first part of a split run (``inspect eval --limit``): its console says the run is
partial, how many of the dataset's samples no log holds and which logs it read (issue 28.2); both parts
together are complete and say nothing of the kind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from eval_edit import edit_eval, read_member, sample_members, set_path
from inspect_ai import eval as inspect_eval

from stereoprobe.cli import main

sys.path.insert(0, str(Path(__file__).parents[1]))


@pytest.fixture(scope="module")
def whole_log(tmp_path_factory) -> Path:
    from fake_model import fake_model

    from stereoprobe.tasks.dbb import dbb

    d = tmp_path_factory.mktemp("dbb_whole")
    inspect_eval(dbb(source="bundled", prompt="stereoprobe", faithful=False, categories="ses", limit_templates=3,
                     mode="logprob"), model=fake_model(), log_dir=str(d), display="none")
    return next(d.glob("*.eval"))


def _part(whole: Path, dest: Path, keep: set[str]) -> Path:
    """The log of an ``inspect eval --limit`` / ``--sample-id`` run over the samples ``keep``."""
    names = {n: str(read_member(whole, n)["id"]) for n in sample_members(whole)}
    return edit_eval(whole, dest, drop=lambda n: n in names and names[n] not in keep,
                     header=lambda h: set_path(h, "eval.dataset.sample_ids", sorted(keep)))


def _ids(whole: Path) -> list[str]:
    return sorted({str(read_member(whole, n)["id"]) for n in sample_members(whole)})


def test_the_console_says_a_limit_run_is_partial(whole_log, tmp_path, capsys) -> None:
    ids = _ids(whole_log)
    assert len(ids) == 3
    _part(whole_log, tmp_path / "first" / "first.eval", set(ids[:1]))
    assert main(["dbb", str(tmp_path / "first"), "--out", str(tmp_path / "out"), "--n-boot", "20"]) == 0
    out = capsys.readouterr().out
    [line] = [x for x in out.splitlines() if "PARTIAL RUN" in x]
    assert "2 of the dataset's 3 samples are in no log" in line and "--limit" in line
    assert line.endswith("the figures cover 1 sample (first.eval)")


def test_both_parts_of_a_split_run_are_not_partial(whole_log, tmp_path, capsys) -> None:
    ids = _ids(whole_log)
    _part(whole_log, tmp_path / "both" / "first.eval", set(ids[:1]))
    _part(whole_log, tmp_path / "both" / "second.eval", set(ids[1:]))
    assert main(["dbb", str(tmp_path / "both"), "--out", str(tmp_path / "out"), "--n-boot", "20"]) == 0
    assert "PARTIAL RUN" not in capsys.readouterr().out
