"""``stereoprobe plan --epochs`` applies the bound a task puts on its epochs (params.EpochsBoundTask), as
``inspect eval --epochs`` does: a run the task would refuse is refused in one line, not priced."""

from __future__ import annotations

import json

import pytest
from inspect_ai.dataset import MemoryDataset, Sample

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.params import EpochsBoundTask
from stereoprobe.plan import plan_task

DBB_SAMPLED = ["plan", "dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "categories=ses",
               "-T", "mode=sampled", "--model", "openai/gpt-4o"]


def _task(low: int) -> EpochsBoundTask:
    return EpochsBoundTask(min_epochs=low, why="each question needs its answers",
                           dataset=MemoryDataset([Sample(input="q", target="a")]), epochs=low)


def test_plan_task_refuses_epochs_below_the_bound() -> None:
    with pytest.raises(InputError, match=r"--epochs\) must be at least 10 .*got epochs=2"):
        plan_task(_task(10), epochs=2, count=len)
    assert plan_task(_task(10), epochs=12, count=len).epochs == 12
    assert plan_task(_task(10), count=len).epochs == 10


def test_sampled_dbb_with_two_epochs_is_refused_in_one_line(tmp_path, capsys) -> None:
    assert main([*DBB_SAMPLED, "--epochs", "2", "--json", str(tmp_path / "plan.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--epochs" in err[0] and "at least 10" in err[0] and "got epochs=2" in err[0], err
    assert not (tmp_path / "plan.json").exists()


def test_sampled_dbb_with_twelve_epochs_is_priced(tmp_path) -> None:
    assert main([*DBB_SAMPLED, "--epochs", "12", "--json", str(tmp_path / "plan.json"), "-q"]) == 0
    assert json.loads((tmp_path / "plan.json").read_text())["epochs"] == 12


def test_zero_epochs_is_refused_by_the_option(capsys) -> None:
    assert main([*DBB_SAMPLED, "--epochs", "0"]) == 2
    assert "--epochs" in capsys.readouterr().err


@pytest.mark.parametrize("arg, says", [
    ("epochs=99999999999", "epochs must be an integer >= 1 and <= 10000"),
    ("categories=", "no value"),  # inspect would run every category: refused instead of priced
    ("epochs= ", "no value"),
])
def test_absurd_or_empty_task_arguments_are_refused(arg: str, says: str, capsys) -> None:
    assert main(["plan", "dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", arg]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
