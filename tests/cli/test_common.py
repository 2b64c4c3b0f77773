"""``stereoprobe.cli.common``: argparse types, help formatter, atomic output folders with a lock, progress."""

from __future__ import annotations

import argparse
import io
import multiprocessing
import time
from pathlib import Path

import pytest

from stereoprobe.cli import common
from stereoprobe.cli.common import atomic_output_dir
from stereoprobe.errors import InputError
from stereoprobe.outputs import MANIFEST

# ------------------------------------------------------------------------------------------------- types

TYPE_CASES = [
    (common.positive_int, "3", 3), (common.positive_int, "1", 1),
    (common.nonnegative_int, "0", 0), (common.nonnegative_int, "12", 12),
    (common.finite_float, "-2.5", -2.5), (common.finite_float, "1e3", 1000.0),
    (common.positive_float, "0.1", 0.1), (common.nonnegative_float, "0", 0.0),
    (common.probability, "0.05", 0.05), (common.probability, "0.999", 0.999),
    (common.unit_interval, "0", 0.0), (common.unit_interval, "1", 1.0),
    (common.comma_list, "a, b,,c", ["a", "b", "c"]),
]

BAD_TYPE_CASES = [
    (common.positive_int, "0", ">= 1"), (common.positive_int, "-3", ">= 1"), (common.positive_int, "2.5", "integer"),
    (common.positive_int, "x", "integer"), (common.nonnegative_int, "-1", ">= 0"), (common.nonnegative_int, "nan", "integer"),
    (common.finite_float, "nan", "finite"), (common.finite_float, "inf", "finite"), (common.finite_float, "-inf", "finite"),
    (common.finite_float, "abc", "number"), (common.positive_float, "0", "> 0"), (common.positive_float, "-1", "> 0"),
    (common.nonnegative_float, "-0.1", ">= 0"), (common.probability, "0", "between 0 and 1"),
    (common.probability, "1", "between 0 and 1"), (common.probability, "1.5", "between 0 and 1"),
    (common.probability, "nan", "finite"), (common.unit_interval, "1.01", "between 0 and 1"),
    (common.comma_list, ",", "comma-separated"),
]


@pytest.mark.parametrize(("fn", "text", "expected"), TYPE_CASES)
def test_types_accept(fn, text, expected):
    assert fn(text) == expected


@pytest.mark.parametrize(("fn", "text", "message"), BAD_TYPE_CASES)
def test_types_refuse(fn, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        fn(text)


def test_path_types(tmp_path):
    f = tmp_path / "f.csv"
    f.write_text("a\n1\n")
    assert common.existing_file(str(f)) == f
    assert common.existing_path(str(tmp_path)) == tmp_path
    assert common.existing_dir(str(tmp_path)) == tmp_path
    assert common.out_dir(str(tmp_path / "new" / "out")) == tmp_path / "new" / "out"
    for fn, arg, message in [
        (common.existing_file, tmp_path / "absent", "no such file"), (common.existing_file, tmp_path, "is a folder"),
        (common.existing_path, tmp_path / "absent", "no such file or folder"),
        (common.existing_dir, f, "not a folder"), (common.existing_dir, tmp_path / "absent", "no such folder"),
        (common.out_dir, f, "exists and is not a folder"), (common.out_dir, f / "sub", "is a file, not a folder"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            fn(str(arg))


def test_help_formatter_shows_defaults_plainly():
    p = argparse.ArgumentParser(prog="x", formatter_class=common.HelpFormatter)
    p.add_argument("--folds", type=common.positive_int, default=5, help="folds of the cross-validation")
    p.add_argument("--seed", type=int, default=None, help="seed")
    p.add_argument("--flag", action="store_true", help="a flag")
    p.add_argument("--alpha", default=0.05, help="level (default: the paper's)")
    text = p.format_help()
    assert "folds of the cross-validation (default: 5)" in text
    assert "seed (default" not in text and "a flag (default" not in text
    assert text.count("default") == 2  # --folds, and --alpha's own wording only


# ---------------------------------------------------------------------------------------- atomic output


def test_atomic_output_dir_creates_and_replaces(tmp_path):
    out = tmp_path / "deep" / "out"
    with atomic_output_dir(out) as tmp:
        assert tmp.parent == out.parent and tmp != out and not out.exists()
        (tmp / "a.csv").write_text("new a")
        (tmp / "figs").mkdir()
        (tmp / "figs" / "p.png").write_text("png")
    assert (out / "a.csv").read_text() == "new a" and (out / "figs" / "p.png").is_file()
    (out / "keep.csv").write_text("another command's table")
    (out / "figs" / "old.png").write_text("stale")
    with atomic_output_dir(out) as tmp:
        (tmp / "a.csv").write_text("newer a")
        (tmp / "figs").mkdir()
        (tmp / "figs" / "q.png").write_text("png")
    assert (out / "a.csv").read_text() == "newer a"
    assert (out / "keep.csv").read_text() == "another command's table"  # files this run did not write stay
    assert sorted(p.name for p in (out / "figs").iterdir()) == ["q.png"]  # a written folder is replaced whole
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]  # no temporary folder or lock left


def test_atomic_output_dir_refuses_the_current_folder(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "old.csv").write_text("kept")
    monkeypatch.chdir(work)
    for out in (".", "", str(tmp_path)):  # the run replaces its folder: never the one the user stands in
        with pytest.raises(InputError, match="current folder|empty path"):
            with atomic_output_dir(out):
                pass
    assert sorted(p.name for p in work.iterdir()) == ["old.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]


def test_atomic_output_dir_keeps_earlier_results_on_failure(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").write_text("earlier")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_output_dir(out) as tmp:
            (tmp / "a.csv").write_text("half")
            raise RuntimeError("boom")
    assert (out / "a.csv").read_text() == "earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_atomic_output_dir_failure_leaves_no_new_folders(tmp_path):
    with pytest.raises(InputError):
        with atomic_output_dir(tmp_path / "x" / "y" / "out"):
            raise InputError("bad input")
    assert list(tmp_path.iterdir()) == []


def test_atomic_output_dir_refuses_a_file(tmp_path):
    f = tmp_path / "out"
    f.write_text("not a folder")
    with pytest.raises(InputError, match="exists and is not a folder"):
        with atomic_output_dir(f):
            pass
    with pytest.raises(InputError, match="is a file, not a folder"):
        with atomic_output_dir(f / "sub"):
            pass


def test_second_run_into_the_same_out_refuses(tmp_path):
    out = tmp_path / "out"
    with atomic_output_dir(out) as tmp:
        (tmp / "a.csv").write_text("first")
        with pytest.raises(InputError, match=r"another stereoprobe run is writing into this folder"):
            with atomic_output_dir(out):
                pass
    assert (out / "a.csv").read_text() == "first"
    with atomic_output_dir(out) as tmp:  # the lock is released afterwards
        (tmp / "b.csv").write_text("second")
    assert sorted(p.name for p in out.iterdir() if p.name != MANIFEST) == ["b.csv"]  # a.csv: the same writer's


def _hold(out: str, started, release) -> None:
    with atomic_output_dir(out) as tmp:
        (tmp / "held.csv").write_text("x")
        started.set()
        release.wait(30)


def test_lock_across_processes(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    started, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold, args=(str(tmp_path / "out"), started, release))
    proc.start()
    try:
        assert started.wait(60)
        with pytest.raises(InputError, match="another stereoprobe run"):
            with atomic_output_dir(tmp_path / "out"):
                pass
    finally:
        release.set()
        proc.join(60)
    assert (tmp_path / "out" / "held.csv").is_file()


def test_crashed_holder_leaves_no_stale_lock(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    started, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold, args=(str(tmp_path / "out"), started, release))
    proc.start()
    assert started.wait(60)
    proc.kill()
    proc.join(60)
    deadline = time.monotonic() + 120  # generous: a loaded machine may be slow to reap the process
    while True:  # the kernel releases the flock with the process
        try:
            with atomic_output_dir(tmp_path / "out") as tmp:
                (tmp / "a.csv").write_text("after crash")
            break
        except InputError:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert (tmp_path / "out" / "a.csv").read_text() == "after crash"


# ---------------------------------------------------------------------------------------------- console


def test_progress_is_silent_without_a_terminal(capsys):
    assert list(common.progress(range(5), description="reading")) == [0, 1, 2, 3, 4]
    with common.spinner("bootstrap"):
        pass
    assert capsys.readouterr().err == ""


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_and_quiet(monkeypatch):
    fake = _TTY()
    monkeypatch.setattr("sys.stderr", fake)
    monkeypatch.delenv("STEREOPROBE_NO_PROGRESS", raising=False)
    assert list(common.progress(iter(range(3)), total=3, description="reading logs")) == [0, 1, 2]
    assert "reading logs" in fake.getvalue()
    quiet = _TTY()
    monkeypatch.setattr("sys.stderr", quiet)
    common.set_quiet(True)
    try:
        assert list(common.progress(range(3), description="reading logs")) == [0, 1, 2]
        common.info("wrote x")
    finally:
        common.set_quiet(False)
    assert quiet.getvalue() == ""


def test_info_prints_unless_quiet(capsys):
    common.info("wrote out/report.html")
    assert capsys.readouterr().out == "wrote out/report.html\n"


@pytest.mark.parametrize("text,ok", [("1", True), ("5", True), ("2.5", True), ("0.99", False), ("5.01", False),
                                     ("nan", False), ("inf", False), ("x", False)])
def test_float_between_is_a_closed_range_of_finite_numbers(text: str, ok: bool) -> None:
    from stereoprobe.cli.common import float_between

    parse = float_between(1, 5)
    if ok:
        assert parse(text) == float(text)
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)
