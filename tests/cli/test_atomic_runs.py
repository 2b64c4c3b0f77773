"""Real runs of ``associations``, ``dbb`` and ``leaderboard`` with a crash injected at each step of the final
swap, stale tables of an earlier run, and a second run while one holds the output folder.

What is guaranteed (and asserted): after a crash at any step, ``--out`` holds exactly the earlier run's
entries or exactly the new run's entries (after the next run's repair), never a mix; an entry that the
previous run of the same command wrote and this run does not is gone; a run into a folder that another run
holds stops with one line and exit code 2 before it reads its inputs. No assertion depends on timing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from stereoprobe import outputs
from stereoprobe.cli import main
from stereoprobe.outputs import MANIFEST, atomic_output_dir

sys.path.insert(0, str(Path(__file__).parents[1] / "stereotales"))
from _stories_fixtures import ATTRS, planted_stories, release_rows  # noqa: E402


class Crash(BaseException):
    """Stands for the process being killed: nothing after it runs (``finally`` cleanup is disabled)."""


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    from fake_model import fake_model
    from stereoprobe.dbb import data as D
    from stereoprobe.tasks.dbb import dbb

    d = tmp_path_factory.mktemp("atomic_inputs")
    release_rows(planted_stories(per_cell=12), ATTRS).to_parquet(d / "stories.parquet")
    qs = D.expand(D.bundled_templates(), categories=["ses"])
    a_texts = {q.option_a for q in qs}
    p = {q.context: (0.9 if q.group == "poor" else 0.2) for q in qs}
    inspect_eval(dbb(source="bundled", prompt="stereoprobe", faithful=False,
                     categories="ses", limit_templates=2, mode="logprob"),
                 model=fake_model(p_a=lambda c: p[c], is_a=lambda o: o in a_texts), display="none",
                 log_dir=str(d / "dbb_logs"), log_realtime=False)
    assert main(["dbb", str(d / "dbb_logs"), "--out", str(d / "dbb_a"), "--n-boot", "50", "-q"]) == 0
    assert main(["dbb", str(d / "dbb_logs"), "--out", str(d / "dbb_b"), "--n-boot", "60", "-q"]) == 0
    return {"stories": d / "stories.parquet", "dbb_logs": d / "dbb_logs", "dbb_a": d / "dbb_a", "dbb_b": d / "dbb_b"}


# Each command twice into the same folder: a first run, then a second one with other settings, whose tables
# differ from the first run's (the crash tests tell old from new by content).
RUNS: dict[str, Callable[[dict[str, Path], Path], tuple[list[str], list[str]]]] = {
    "associations": lambda i, out: (
        ["associations", str(i["stories"]), "--out", str(out), "--resamples", "2000", "--no-report", "-q",
         "--by-language"],
        ["associations", str(i["stories"]), "--out", str(out), "--resamples", "3000", "--no-report", "-q"]),
    "dbb": lambda i, out: (
        ["dbb", str(i["dbb_logs"]), "--out", str(out), "--n-boot", "50", "-q"],
        ["dbb", str(i["dbb_logs"]), "--out", str(out), "--n-boot", "70", "--seed", "3", "-q"]),
    "leaderboard": lambda i, out: (
        ["leaderboard", f"a={i['dbb_a']}", f"b={i['dbb_b']}", "--out", str(out), "--n-boot", "50", "-q"],
        ["leaderboard", f"a={i['dbb_a']}", "--out", str(out), "--n-boot", "60", "-q"]),
}


def _two_runs(cmd: str, inputs: dict[str, Path], out: Path) -> tuple[dict[str, bytes], list[str]]:
    first, second = RUNS[cmd](inputs, out)
    assert main(first) == 0
    return _snapshot(out), second


def _fresh(cmd: str, inputs: dict[str, Path], tmp_path: Path) -> dict[str, bytes]:
    """The entries of a clean run of the second command line (into a folder of its own)."""
    clean = tmp_path / "clean" / "out"
    _, second = RUNS[cmd](inputs, clean)
    assert main(second) == 0
    return _snapshot(clean)


def _same_files(a: dict[str, bytes], b: dict[str, bytes]) -> bool:
    """Same entries; contents compared for the tables that do not carry a date or a timing."""
    if set(a) != set(b):
        return False
    stable = [k for k in a if k.endswith(".csv") and "run_info" not in k]
    return all(a[k] == b[k] for k in stable)


@pytest.mark.parametrize("cmd", sorted(RUNS))
def test_crash_before_the_swap_keeps_the_earlier_run_whole(cmd, inputs, tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    before, second = _two_runs(cmd, inputs, out)

    def crash(a: Path, b: Path) -> None:
        raise Crash

    monkeypatch.setattr(outputs, "exchange_paths", crash)
    monkeypatch.setattr(outputs, "_discard", lambda folder: None)  # killed: no cleanup
    with pytest.raises(Crash):
        main(second)
    assert _snapshot(out) == before  # every entry of the earlier run, byte for byte, nothing new
    monkeypatch.undo()
    assert main(second) == 0  # the next run removes the crashed run's leftovers and succeeds
    assert _same_files(_snapshot(out), _fresh(cmd, inputs, tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []


@pytest.mark.parametrize("cmd", sorted(RUNS))
def test_crash_after_the_swap_leaves_the_new_run_whole(cmd, inputs, tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    before, second = _two_runs(cmd, inputs, out)

    def crash(folder: Path) -> None:
        raise Crash

    monkeypatch.setattr(outputs, "_discard", crash)
    with pytest.raises(Crash):
        main(second)
    monkeypatch.undo()
    fresh = _fresh(cmd, inputs, tmp_path)
    assert _same_files(_snapshot(out), fresh)  # only the new run's entries: no stale table of the first run
    assert _snapshot(out) != before
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]  # the old folder, beside, whole
    assert main(second) == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


@pytest.mark.parametrize("cmd", sorted(RUNS))
def test_crash_between_the_two_renames_of_the_fallback_is_repaired(cmd, inputs, tmp_path, monkeypatch) -> None:
    """Where the file system cannot exchange two folders, a real ``out`` is moved aside, then a link to the new
    version takes its name (from then on ``out`` is a link, swapped in one rename)."""
    out = tmp_path / "out"
    before, second = _two_runs(cmd, inputs, out)
    real_replace = outputs.os.replace

    def no_exchange(a: Path, b: Path) -> None:
        raise outputs.NoExchange

    def replace(src, dst) -> None:
        if Path(dst) == out and Path(src).name.startswith(".out.link-"):
            raise Crash  # killed after ``out`` was moved aside, before the new version's link took its name
        real_replace(src, dst)

    monkeypatch.setattr(outputs, "exchange_paths", no_exchange)
    monkeypatch.setattr(outputs.os, "replace", replace)
    monkeypatch.setattr(outputs, "_discard", lambda folder: None)
    with pytest.raises(Crash):
        main(second)
    monkeypatch.undo()
    assert not out.exists() and (tmp_path / ".out.old").is_dir()
    outputs._recover(out)  # what the next run does first, under the lock
    assert _snapshot(out) == before
    monkeypatch.setattr(outputs, "exchange_paths", no_exchange)
    assert main(second) == 0  # the fallback swap, uninterrupted
    assert _same_files(_snapshot(out), _fresh(cmd, inputs, tmp_path))
    assert out.is_symlink() and [p for p in tmp_path.iterdir() if p.name.startswith(".out")] == [
        outputs.version_link_target(out)]


@pytest.mark.parametrize("cmd", sorted(RUNS))
def test_a_run_into_a_held_folder_stops_at_once(cmd, inputs, tmp_path, capsys) -> None:
    """Another run (a thread here; processes in tests/test_outputs.py) holds ``out``: this one exits 2 with
    one line, whatever the order in which the two were started, and the holder's results are the ones kept."""
    out = tmp_path / "out"
    first, second = RUNS[cmd](inputs, out)
    held, release, done = threading.Event(), threading.Event(), threading.Event()

    def holder() -> None:
        with atomic_output_dir(out, owner="holder") as tmp:
            (tmp / "holder.csv").write_text("x\n")
            held.set()
            release.wait(60)
        done.set()

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert held.wait(60)
        capsys.readouterr()
        assert main(second) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "another stereoprobe run" in err[0], err
    finally:
        release.set()
        t.join(60)
    assert done.is_set() and _names(out) == {"holder.csv", MANIFEST}


def test_stale_tables_of_an_earlier_run_are_gone_and_other_commands_tables_stay(inputs, tmp_path) -> None:
    out = tmp_path / "out"
    by_language, plain = RUNS["associations"](inputs, out)
    assert main(by_language) == 0
    per_language = {n for n in _names(out) if "language" in n or "jaccard" in n}
    assert per_language  # the --by-language tables
    (out / "notes.txt").write_text("the user's notes")  # not written by associations: kept
    assert main(plain) == 0
    assert not per_language & _names(out)
    assert (out / "notes.txt").read_text() == "the user's notes"


# ------------------------------------------- leaderboard --hub-eval-results: two folders, one swap (issue 28.7)


def _hub_runs(inputs: dict[str, Path], out: Path, hub: Path) -> tuple[list[str], list[str]]:
    hub_args = ["--hub-eval-results", str(hub), "--hub-source-url", "https://example.org/logs", "-q"]
    return (["leaderboard", f"a={inputs['dbb_a']}", f"b={inputs['dbb_b']}", "--out", str(out), "--n-boot", "50",
             *hub_args],
            ["leaderboard", f"a={inputs['dbb_a']}", "--out", str(out), "--n-boot", "60", *hub_args])


def _seen(out: Path, hub: Path) -> tuple[bytes | None, dict[str, bytes]]:
    """What a reader sees: the leaderboard table of --out and the Hub files through HUB."""
    table = out / "leaderboard.csv"
    return (table.read_bytes() if table.is_file() else None), (_snapshot(hub) if hub.is_dir() else {})


def _as_an_earlier_version_left_it(hub: Path) -> None:
    """HUB as a folder of its own (what a version before the link wrote), with the same files."""
    import shutil

    real = hub.resolve()
    hub.unlink()
    shutil.copytree(real, hub)


STEPS = ("rename", "replace", "symlink")  # the file-system calls of the final move (and exchange_paths below)


@pytest.mark.parametrize("earlier", ["link", "folder"])
def test_hub_files_and_out_change_together_at_every_step(earlier, inputs, tmp_path, monkeypatch) -> None:
    """A crash at each file-system step of the move of a leaderboard run with --hub-eval-results leaves the
    Hub files seen through HUB and the tables of --out from the same run: both earlier or both new."""
    import os

    from stereoprobe import output_links

    calls: list[str] = []

    def counted(name: str, real: Callable, crash_at: int | None) -> Callable:
        def step(*args, **kwargs):
            calls.append(name)
            if crash_at is not None and len(calls) > crash_at:
                raise Crash  # killed: this step and every later one never happen
            return real(*args, **kwargs)
        return step

    def run_second(root: Path, crash_at: int | None) -> tuple[Path, Path, tuple, tuple, list[str]]:
        out, hub = root / "out", root / "hub"
        first, second = _hub_runs(inputs, out, hub)
        assert main(first) == 0
        if earlier == "folder":
            _as_an_earlier_version_left_it(hub)
        before = _seen(out, hub)
        calls.clear()
        with monkeypatch.context() as m:
            for name in STEPS:
                m.setattr(os, name, counted(name, getattr(os, name), crash_at))
            m.setattr(outputs, "exchange_paths", counted("exchange", outputs.exchange_paths, crash_at))  # output_links' too
            m.setattr(outputs, "_discard", counted("discard", outputs._discard, crash_at))
            m.setattr(output_links, "_remove", counted("remove", output_links._remove, crash_at))
            if crash_at is None:
                assert main(second) == 0
            else:
                with pytest.raises(Crash):
                    main(second)
        return out, hub, before, _seen(out, hub), second

    *_, new, _ = run_second(tmp_path / "clean", None)
    steps = len(calls)
    assert steps >= 2 and new[0] is not None and new[1]
    for k in range(steps):
        out, hub, before, seen, second = run_second(tmp_path / f"crash{k}", k)
        assert seen in (before, new), (k, calls)  # never the tables of one run beside the Hub files of the other
        assert main(second) == 0  # the next run repairs what the crash left and replaces both
        assert _seen(out, hub) == new and hub.is_symlink()


# ------------------------------------------------ rater-sheet: the sheet and its questions (issue 28.7)

ASSOCIATIONS = ("model,slice,base_attribute,base_value,compared_attribute,compared_value\n"
                "m,all,income_level,low,education,basic\nm,all,age,child,employment_status,student\n"
                "m,all,gender,woman,occupation,nurse\n")


@pytest.mark.parametrize("questions_before", ["same", "missing"])
def test_rater_sheet_crash_at_every_step_leaves_one_sheet_beside_its_questions(questions_before, tmp_path,
                                                                               monkeypatch) -> None:
    """A crash at each rename of a second rater-sheet run leaves the earlier sheet or the new one, whole,
    beside the study's questions: a re-run renames one file (the questions, the same text, are kept)."""
    import os

    source = tmp_path / "associations.csv"
    source.write_text(ASSOCIATIONS)
    calls: list[str] = []

    def run(folder: Path, crash_at: int | None) -> tuple[tuple, tuple, Path]:
        sheet = folder / "sheet.csv"
        questions = folder / "sheet.csv.questions.txt"
        assert main(["rater-sheet", str(source), "--out", str(sheet), "-q"]) == 0
        if questions_before == "missing":
            questions.unlink()  # removed by the user: written again, before the sheet
        before = (sheet.read_bytes(), questions.read_bytes() if questions.exists() else None)
        real = os.replace
        calls.clear()

        def replace(src, dst):
            calls.append(str(dst))
            if crash_at is not None and len(calls) > crash_at:
                raise Crash
            real(src, dst)

        with monkeypatch.context() as m:
            m.setattr(os, "replace", replace)
            argv = ["rater-sheet", str(source), "--out", str(sheet), "--shuffle-seed", "7", "-q"]
            if crash_at is None:
                assert main(argv) == 0
            else:
                with pytest.raises(Crash):
                    main(argv)
        return before, (sheet.read_bytes(), questions.read_bytes() if questions.exists() else None), sheet

    before, new, _ = run(tmp_path / "clean", None)
    assert new != before and new[1] is not None
    steps = len(calls)
    assert steps == (1 if questions_before == "same" else 2)
    for k in range(steps):
        earlier, seen, sheet = run(tmp_path / f"crash{k}", k)
        assert seen[0] in (earlier[0], new[0]) and seen[1] in (earlier[1], new[1])
        assert seen[1] == new[1] or seen[0] == earlier[0]  # a new sheet never beside missing questions
        assert not [p.name for p in sheet.parent.iterdir() if p.name.endswith(".tmp")]


def test_hub_keeps_the_users_files_and_drops_a_model_no_longer_compared(inputs, tmp_path) -> None:
    out, hub = tmp_path / "out", tmp_path / "hub"
    hub.mkdir()
    (hub / "README.md").write_text("the user's notes")  # a folder of the user's before the first run
    first, second = _hub_runs(inputs, out, hub)
    assert main(first) == 0
    assert hub.is_symlink() and {"a", "b", "README.md"} <= _names(hub)
    assert main(second) == 0  # model b is no longer compared: its Hub files go, the user's notes stay
    assert "b" not in _names(hub) and {"a", "README.md"} <= _names(hub)
    assert (hub / "README.md").read_text() == "the user's notes"
