"""``stereoprobe.outputs``: whole-folder replacement, writers' entries, the lock, a full disk.

Crash injection at each swap step on real command runs: ``tests/cli/test_atomic_runs.py``.
"""

from __future__ import annotations

import errno
import multiprocessing
import threading
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe import outputs
from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.outputs import MANIFEST, atomic_output_dir, atomic_output_file, output_lock, writer


def _entries(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir() if p.is_file() and p.name != MANIFEST}


def test_each_writer_replaces_its_own_entries_and_keeps_the_others(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with writer("associations"), atomic_output_dir(out) as new:
        for name in ("associations.csv", "by_language.csv", "report.html"):
            (new / name).write_text("A1")
    with writer("judge-report"), atomic_output_dir(out) as new:
        (new / "harm_labels.csv").write_text("J1")
        (new / "report.html").write_text("J1")
    (out / "notes.txt").write_text("user")
    assert _entries(out) == {"associations.csv": "A1", "by_language.csv": "A1", "report.html": "J1",
                             "harm_labels.csv": "J1", "notes.txt": "user"}
    with writer("associations"), atomic_output_dir(out) as new:  # an option change: no per-language table
        (new / "associations.csv").write_text("A2")
        (new / "report.html").write_text("A2")
    assert _entries(out) == {"associations.csv": "A2", "report.html": "A2", "harm_labels.csv": "J1",
                             "notes.txt": "user"}  # by_language.csv of the earlier run is gone
    with writer("judge-report"), atomic_output_dir(out) as new:
        (new / "alignment.csv").write_text("J2")
    assert _entries(out) == {"associations.csv": "A2", "report.html": "A2", "alignment.csv": "J2",
                             "notes.txt": "user"}  # report.html: associations wrote it too, so it stays


def test_a_replaced_subfolder_is_replaced_whole_and_links_are_kept_as_links(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with atomic_output_dir(out, owner="a") as new:
        (new / "figs").mkdir()
        (new / "figs" / "old.png").write_text("x")
    (out / "shortcut").symlink_to(tmp_path)
    with atomic_output_dir(out, owner="a") as new:
        (new / "figs").mkdir()
        (new / "figs" / "new.png").write_text("y")
    assert sorted(p.name for p in (out / "figs").iterdir()) == ["new.png"]
    assert (out / "shortcut").is_symlink() and (out / "shortcut").resolve() == tmp_path.resolve()


def test_a_link_to_the_output_folder_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    with atomic_output_dir(real, owner="a") as new:
        (new / "a.csv").write_text("1")
    (tmp_path / "link").symlink_to(real)
    with atomic_output_dir(tmp_path / "link", owner="a") as new:
        (new / "a.csv").write_text("2")
    assert (tmp_path / "link").is_symlink() and (real / "a.csv").read_text() == "2"


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EDQUOT, errno.EROFS])
def test_a_full_disk_is_one_line_naming_the_path_and_keeps_the_earlier_results(tmp_path: Path, code: int) -> None:
    out = tmp_path / "out"
    with atomic_output_dir(out) as new:
        (new / "a.csv").write_text("earlier")
    with pytest.raises(InputError) as info:
        with atomic_output_dir(out) as new:
            (new / "b.csv").write_text("partial")
            raise OSError(code, "No space left on device", str(new / "b.csv"))
    message = str(info.value)
    assert "\n" not in message and str(out / "b.csv") in message and "keeps its earlier results" in message
    assert _entries(out) == {"a.csv": "earlier"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_file_output_replaced_in_one_rename(tmp_path: Path) -> None:
    f = tmp_path / "sub" / "x.jsonl"
    with atomic_output_file(f) as tmp:
        tmp.write_text("one")
    with pytest.raises(InputError, match="no space"):
        with atomic_output_file(f) as tmp:
            tmp.write_text("half")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert f.read_text() == "one" and sorted(p.name for p in f.parent.iterdir()) == ["x.jsonl"]
    with pytest.raises(InputError, match="also an input"):
        with atomic_output_file(f, inputs=[f]):
            pass


def test_threads_into_one_folder_one_builds_the_other_refuses(tmp_path: Path) -> None:
    """Whatever the order, while one thread builds ``out`` another is refused; each run's result is whole."""
    out = tmp_path / "out"
    inside, release = threading.Event(), threading.Event()
    errors: list[str] = []

    def first() -> None:
        with atomic_output_dir(out, owner="w") as new:
            (new / "first.csv").write_text("1")
            inside.set()
            release.wait(60)

    t = threading.Thread(target=first)
    t.start()
    assert inside.wait(60)
    try:
        with atomic_output_dir(out, owner="w") as new:
            (new / "second.csv").write_text("2")
    except InputError as exc:
        errors.append(str(exc))
    finally:
        release.set()
        t.join(60)
    assert len(errors) == 1 and "another stereoprobe run" in errors[0]
    assert _entries(out) == {"first.csv": "1"}


def test_the_command_line_holds_the_lock_for_the_whole_run(tmp_path: Path) -> None:
    """``output_lock`` (taken by the command line before any input is read) is re-entrant for the run's own
    ``atomic_output_dir`` but not for a second build inside it, nor for another thread."""
    out = tmp_path / "out"
    with output_lock(out):
        with atomic_output_dir(out) as new:
            (new / "a.csv").write_text("a")
            with pytest.raises(InputError, match="another stereoprobe run"):
                with atomic_output_dir(out):
                    pass
        seen: list[BaseException] = []

        def other() -> None:
            try:
                with output_lock(out):
                    pass
            except InputError as exc:
                seen.append(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join(60)
        assert len(seen) == 1
    assert _entries(out) == {"a.csv": "a"}


def _build(out: str, report: str) -> None:  # pragma: no cover (runs in a child process)
    try:
        with atomic_output_dir(out, owner="p") as new:
            (new / "t.csv").write_text("child")
        Path(report).write_text("built")
    except InputError as exc:
        Path(report).write_text(f"refused: {exc}")


def test_two_processes_never_both_write(tmp_path: Path) -> None:
    """Two processes start at once; asserted whatever their timing: each one either built its folder whole or
    was refused with the lock's message, at least one built, and nothing is left beside the folder."""
    ctx = multiprocessing.get_context("spawn")
    work = tmp_path / "work"
    work.mkdir()
    reports = [tmp_path / f"report{i}" for i in range(2)]
    procs = [ctx.Process(target=_build, args=(str(work / "out"), str(r))) for r in reports]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    got = [r.read_text() for r in reports]
    assert all(g == "built" or "another stereoprobe run" in g for g in got), got
    assert "built" in got
    assert _entries(work / "out") == {"t.csv": "child"}
    assert sorted(p.name for p in work.iterdir()) == ["out"]


def test_leftovers_of_a_crashed_run_are_removed_under_the_lock(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with atomic_output_dir(out) as new:
        (new / "a.csv").write_text("a")
    for name in (".out.tmp-abcd1234",  # a crashed build
                 ".out.old",  # a completed fallback swap whose old folder was not removed
                 ".out.v-abcd1234",  # a version no link points to
                 ".out.x-abcd1234",  # an exchange test cut short
                 ".outer.tmp-abcd1234"):  # another folder's: kept
        (tmp_path / name).mkdir()
        outputs._mark(tmp_path / name)  # as the run that made it did
    (tmp_path / ".out.link-abcd1234").symlink_to(".out.v-abcd1234")  # a link never renamed into place
    with atomic_output_dir(out) as new:
        (new / "a.csv").write_text("b")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".outer.tmp-abcd1234", "out"]
    assert not (out / outputs.MARKER).exists()


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "link"])
def test_a_users_folders_named_like_leftovers_are_kept(tmp_path: Path, monkeypatch, exchange: bool) -> None:
    """Only folders holding the marker a run wrote are removed as leftovers (issue 34.5): a user's folders
    and links named ``.out.tmp-XXXXXXXX`` (etc.) beside ``out``, or holding a file of the marker's name with
    other text, survive every later run, on a file system that exchanges folders and on one that cannot."""
    if not exchange:
        monkeypatch.setattr(outputs, "exchange_paths", _no_exchange)
    out = tmp_path / "out"
    names = [".out.tmp-abcd1234", ".out.old", ".out.v-abcd1234", ".out.x-abcd1234", ".out.tmp-fake0000"]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "notes.txt").write_text("mine")
    (tmp_path / ".out.tmp-fake0000" / outputs.MARKER).write_text("not the tool's")
    (tmp_path / ".out.link-abcd1234").symlink_to("notes")  # a user's link to something else
    for text in ("a", "b"):
        with atomic_output_dir(out) as new:
            (new / "a.csv").write_text(text)
    kept = {p.name for p in tmp_path.iterdir()} - {"out"} - {p.name for p in tmp_path.glob(".out.v-*")
                                                              if p.name != ".out.v-abcd1234"}
    assert kept == {*names, ".out.link-abcd1234"}
    assert all((tmp_path / n / "notes.txt").read_text() == "mine" for n in names)
    assert _entries(out) == {"a.csv": "b"} and not (out / outputs.MARKER).exists()


def test_full_disk_in_a_command_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    """A write that fails without a file name (as ``write(2)`` reports ENOSPC) names the output folder."""
    import numpy as np
    from leaderboard.conftest import dbb_folder

    folder = dbb_folder(tmp_path / "runs", {"m1": np.linspace(0, 40, 20), "m2": np.linspace(5, 30, 20)})
    out = tmp_path / "lb"
    assert main(["leaderboard", str(folder), "--out", str(out), "--n-boot", "50", "-q"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    rc = main(["leaderboard", str(folder), "--out", str(out), "--n-boot", "60", "-q"])
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "error:" in x]
    assert "Traceback" not in err and rc == 2 and len(lines) == 1, err
    assert str(out) in lines[0] and "no space left on device" in lines[0]
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lb", "runs"]


# ------------------------------------------------------------------ a crash at every step of the swap


def _view(folder: Path) -> dict[str, str] | None:
    """What a reader sees in ``folder``: every file below it (through the link, if it is one); None if absent."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in (MANIFEST, outputs.MARKER)}


def _write(new: Path, tag: str) -> None:
    for i in range(3):
        (new / f"{tag}{i}.csv").write_text(tag)
    (new / "figures").mkdir()
    (new / "figures" / f"{tag}.png").write_text(tag)
    (new / "report.html").write_text(tag)


def _no_exchange(a: Path, b: Path) -> None:
    raise outputs.NoExchange


def _crash_at(out: str, step: int, exchange: bool, report: str) -> None:  # pragma: no cover (a child process)
    """Build ``out`` anew, the process killed (``os._exit``: nothing more runs) at the ``step``-th file-system
    step of the swap: a rename, a link, an exchange or the removal of the old folder."""
    import os
    import shutil

    count = [0]

    def killing(fn):
        def step_fn(*args, **kwargs):
            count[0] += 1
            if count[0] == step:
                os._exit(9)
            return fn(*args, **kwargs)
        return step_fn

    if not exchange:
        outputs.exchange_paths = _no_exchange
    outputs.exchange_paths = killing(outputs.exchange_paths)
    os.rename = killing(os.rename)
    os.replace = killing(os.replace)
    os.symlink = killing(os.symlink)
    shutil.rmtree = killing(shutil.rmtree)
    with atomic_output_dir(out, owner="w") as new:
        _write(new, "new")
        count[0] = 0  # the steps of the swap only
    Path(report).write_text(str(count[0]))


@pytest.mark.parametrize("exchange, earlier", [(True, "folder"), (False, "link"), (False, "folder")],
                         ids=["exchange", "link", "folder-to-link"])
def test_a_crash_at_every_step_of_the_swap_leaves_the_old_or_the_new(tmp_path: Path, monkeypatch, exchange: bool,
                                                                      earlier: str) -> None:
    """For k = 1, 2, ...: the earlier run's folder, then a run killed at its k-th step; a reader then sees the
    whole earlier or the whole new folder, never a mix (``exchange``: the file system exchanges folders;
    ``link``: it cannot, and ``out`` is kept as a link to its version). ``folder-to-link``: a real folder on
    a file system that cannot exchange; its one conversion may leave ``out`` missing for a moment, the earlier
    folder whole beside it, and :func:`recover` puts it back. The next run repairs whatever a crash left."""
    ctx = multiprocessing.get_context("fork")
    old_view = new_view = None
    step = 0
    while True:
        step += 1
        case = tmp_path / f"step{step}"
        case.mkdir()
        out = case / "out"
        with monkeypatch.context() as m:
            if earlier == "link":
                m.setattr(outputs, "exchange_paths", _no_exchange)
            with atomic_output_dir(out, owner="w") as new:
                _write(new, "old")
        assert out.is_symlink() == (earlier == "link")
        old_view = _view(out)
        report = case / "report"
        p = ctx.Process(target=_crash_at, args=(str(out), step, exchange, str(report)))
        p.start()
        p.join(120)
        seen = _view(out)
        if report.exists():  # no k-th step: the run completed
            new_view = seen
            assert p.exitcode == 0 and step == int(report.read_text()) + 1 and new_view != old_view
            break
        assert p.exitcode == 9
        if seen is None:  # only the conversion of a real folder into a link has a window
            assert earlier == "folder" and not exchange and _view(case / ".out.old") == old_view
            outputs.recover(out)
            seen = _view(out)
        assert seen == old_view or (seen is not None and set(seen) == {"new0.csv", "new1.csv", "new2.csv",
                                                                       "figures/new.png", "report.html"}), step
        with atomic_output_dir(out, owner="w") as new:  # the next run repairs and succeeds
            _write(new, "next")
        assert _view(out) == {k.replace("old", "next"): "next" for k in old_view}
        kept = {p.name for p in case.iterdir()} - {"out", "report", ".out.lock"}
        assert all(name.startswith(".out.v-") for name in kept) and len(kept) == (1 if out.is_symlink() else 0)
    assert step >= 3  # the swap has steps to crash in


def test_a_link_kept_folder_is_the_folder_for_the_lock_and_the_checks(tmp_path: Path, monkeypatch) -> None:
    """On a file system that cannot exchange, ``out`` is a link to ``.out.v-XXXXXXXX``: the next run locks
    ``out`` itself (not the version it points to), carries the user's files and removes the old version."""
    monkeypatch.setattr(outputs, "exchange_paths", _no_exchange)
    out = tmp_path / "out"
    with atomic_output_dir(out, owner="w") as new:
        (new / "a.csv").write_text("1")
    first = outputs.version_link_target(out)
    assert out.is_symlink() and first is not None and first.parent == tmp_path
    (out / "notes.txt").write_text("user")
    with output_lock(out):
        with pytest.raises(InputError, match="another stereoprobe run"):
            with _other_thread_lock(out):
                pass
    with atomic_output_dir(out, owner="w") as new:
        (new / "a.csv").write_text("2")
    assert _entries(out) == {"a.csv": "2", "notes.txt": "user"} and not first.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "out") == [outputs.version_link_target(out).name]


class _other_thread_lock:
    def __init__(self, out: Path) -> None:
        self.out = out

    def __enter__(self) -> None:
        seen: list[BaseException] = []

        def take() -> None:
            try:
                with output_lock(self.out):
                    pass
            except InputError as exc:
                seen.append(exc)

        t = threading.Thread(target=take)
        t.start()
        t.join(60)
        if seen:
            raise seen[0]

    def __exit__(self, *exc: object) -> None:
        return None


# ------------------------------------------------------------------------------- the user's umask


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_new_outputs_respect_the_umask(tmp_path: Path, mask: int) -> None:
    import os

    old = os.umask(mask)
    try:
        with atomic_output_dir(tmp_path / "out") as new:
            (new / "a.csv").write_text("1")
        with atomic_output_file(tmp_path / "f.json") as tmp:
            tmp.write_text("{}")
    finally:
        os.umask(old)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o777 & ~mask
    assert (tmp_path / "f.json").stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_replaced_output_keeps_its_permissions(tmp_path: Path) -> None:
    import os

    out, f = tmp_path / "out", tmp_path / "f.json"
    with atomic_output_dir(out) as new:
        (new / "a.csv").write_text("1")
    with atomic_output_file(f) as tmp:
        tmp.write_text("{}")
    os.chmod(out, 0o750)
    os.chmod(f, 0o640)
    with atomic_output_dir(out) as new:
        (new / "a.csv").write_text("2")
    with atomic_output_file(f) as tmp:
        tmp.write_text("[]")
    assert out.stat().st_mode & 0o777 == 0o750 and f.stat().st_mode & 0o777 == 0o640


def test_a_link_to_a_link_kept_folder_locks_and_replaces_the_folder(tmp_path: Path, monkeypatch) -> None:
    """A user's link to ``out`` (kept as a link to its version): the lock is ``out``'s, and the run replaces
    ``out`` (not the version folder it pointed to)."""
    monkeypatch.setattr(outputs, "exchange_paths", _no_exchange)
    out = tmp_path / "out"
    with atomic_output_dir(out, owner="w") as new:
        (new / "a.csv").write_text("1")
    (tmp_path / "mine").symlink_to(out)
    with output_lock(out):
        with pytest.raises(InputError, match="another stereoprobe run"):
            with _other_thread_lock(tmp_path / "mine"):
                pass
    first = outputs.version_link_target(out)
    with atomic_output_dir(tmp_path / "mine", owner="w") as new:
        (new / "a.csv").write_text("2")
    assert (tmp_path / "mine").is_symlink() and out.is_symlink() and outputs.version_link_target(out) != first
    assert _entries(tmp_path / "mine") == {"a.csv": "2"} and not first.exists()
