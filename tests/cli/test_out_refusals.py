"""Table-driven: every command that writes refuses an output path it must not write, before reading anything.

Classes (each case is one of them, for each command that writes a folder or a file): the output is an input
(the same path, or the same folder through a symbolic link); it lies inside an input folder; it is empty, the
file-system root, the current folder or one above it; it is a device, a pipe, a dangling link or (for a file)
a symbolic link; two outputs of one run overlap. Each case asserts exit code 2, one error line naming the
problem, no traceback, and that nothing under the test folder changed (no output, lock or temporary folder;
the inputs byte for byte).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stereoprobe.cli import main

FOLDER_COMMANDS = {  # command -> argv before --out; {IN} is an input folder, {F} an input file in it
    "associations": ["associations", "{IN}"],
    "judge-report": ["judge-report", "{IN}"],
    "dbb": ["dbb", "{IN}"],
    "dbb-build-export": ["dbb-build-export", "{IN}"],
    "globalbias": ["globalbias", "{IN}"],
    "profiles": ["profiles", "{IN}"],
    "leaderboard": ["leaderboard", "label={IN}"],
}
FILE_COMMANDS = {  # command -> (argv with {OUT} where the output goes)
    "rater-sheet": ["rater-sheet", "{F}", "--out", "{OUT}"],
    "dbb-export-lm-eval": ["dbb-export-lm-eval", "--variant", "mc", "--source", "{F}", "--out", "{OUT}"],
    "taxonomy": ["taxonomy", "{F}", "--prompts", "{OUT}"],
    "plan": ["plan", "dbb", "--prices", "{F}", "--json", "{OUT}"],
}

FOLDER_OUTS = [  # (--out, expected fragment, commands it does not apply to)
    ("{IN}", "is also an input", ()),
    ("{LINK}", "is also an input", ()),  # the input folder through a symbolic link
    ("{IN}/results", "inside the input folder", ("leaderboard",)),
    ("{IN}/a/b", "inside the input folder", ("leaderboard",)),
    ("", "empty path", ()),
    ("/", "file-system root", ()),
    (".", "current folder", ()),
    ("..", "current folder", ()),
    ("/dev/null", "device", ()),
    ("{T}/fifo", "named pipe", ()),
    ("{T}/dangling", "symbolic link to nothing", ()),
    ("{F}", "not a folder", ()),
]
FILE_OUTS = [
    ("{F}", "is also an input"),
    ("{T}/link_to_file", "symbolic link"),
    ("/dev/full", "device"),
    ("{T}/fifo", "named pipe"),
    ("{IN}", "is a folder"),
    ("", "empty path"),
    (".", "current folder"),
    ("{F}/x.json", "is a file, not a folder"),
]

CASES = [
    pytest.param([*argv, "--out", out], fragment, id=f"{cmd} --out {out or repr(out)}")
    for cmd, argv in FOLDER_COMMANDS.items() for out, fragment, skip in FOLDER_OUTS if cmd not in skip
] + [
    pytest.param([a.replace("{OUT}", out) for a in argv], fragment, id=f"{cmd} -> {out or repr(out)}")
    for cmd, argv in FILE_COMMANDS.items() for out, fragment in FILE_OUTS
] + [
    pytest.param(["leaderboard", "{IN}", "--out", "{T}/lb", "--hub-eval-results", "{T}/lb"], "other output folder",
                 id="leaderboard hub == out"),
    pytest.param(["leaderboard", "{IN}", "--out", "{T}/lb", "--hub-eval-results", "{T}/lb/hub"],
                 "other output folder", id="leaderboard hub inside out"),
]


def _tree(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            key = str(p.relative_to(root))
            if p.is_symlink():
                out[key] = "-> " + os.readlink(p)
            elif p.is_file():
                out[key] = p.read_bytes()
            else:
                out[key] = "dir" if p.is_dir() else "other"
    return out


@pytest.fixture
def place(tmp_path: Path, monkeypatch) -> Path:
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "data.csv").write_text("model,x\nm,1\n")
    os.symlink(inp, tmp_path / "link_to_in")
    os.symlink(inp / "data.csv", tmp_path / "link_to_file")
    os.symlink(tmp_path / "absent", tmp_path / "dangling")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    return tmp_path


@pytest.mark.parametrize("argv, fragment", CASES)
def test_refused_output(argv: list[str], fragment: str, place: Path, capsys) -> None:
    filled = [a.replace("{IN}", str(place / "in")).replace("{LINK}", str(place / "link_to_in"))
              .replace("{F}", str(place / "in" / "data.csv")).replace("{T}", str(place)) for a in argv]
    before = _tree(place)
    rc = main(filled)
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error:" in line]
    assert "Traceback" not in captured.err + captured.out
    assert rc == 2, captured.err
    assert len(errors) == 1, captured.err
    assert fragment in errors[0], errors[0]
    assert _tree(place) == before  # nothing written, no lock or temporary folder, inputs unchanged


# ----------------------------------------------------------------------- a second run into a held output

HELD = [  # (argv with {OUT}, the output another process holds, whether it is a file)
    *[pytest.param([*argv, "--out", "{OUT}"], False, id=f"{cmd} folder held") for cmd, argv in FOLDER_COMMANDS.items()],
    *[pytest.param(argv, True, id=f"{cmd} file held") for cmd, argv in FILE_COMMANDS.items()],
    pytest.param(["leaderboard", "label={IN}", "--out", "{T}/lb", "--hub-eval-results", "{OUT}"], False,
                 id="leaderboard hub folder held"),
    pytest.param(["index", "{IN}"], True, id="index page held"),
]


def _hold(out: str, file: bool, ready, release) -> None:  # pragma: no cover (runs in another process)
    from stereoprobe.outputs import output_lock

    with output_lock(out, file=file):
        ready.set()
        release.wait(120)


@pytest.mark.parametrize("argv, file", HELD)
def test_a_second_run_is_refused_before_it_reads_anything(argv: list[str], file: bool, place: Path,
                                                           capsys) -> None:
    """Another process holds the output (its lock): this run stops with one line, exit code 2, before it reads
    an input. The inputs here would fail to be read (``data.csv`` is no table of any command), so the line
    being the lock's shows the claim came first. No timing is involved: the holder has taken the lock before
    the run starts, and keeps it until the run has ended."""
    import multiprocessing

    out = place / "out.json" if file else place / "out"
    if argv[0] == "index":
        out = place / "in" / "index.html"
    filled = [a.replace("{OUT}", str(out)).replace("{IN}", str(place / "in")).replace("{T}", str(place))
              .replace("{F}", str(place / "in" / "data.csv")) for a in argv]
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(str(out), file, ready, release))
    holder.start()
    try:
        assert ready.wait(120)
        rc = main(filled)
    finally:
        release.set()
        holder.join(120)
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if "error:" in line]
    assert rc == 2 and len(errors) == 1 and "Traceback" not in captured.err, captured.err
    assert "another stereoprobe run is writing into this" in errors[0], errors[0]
    assert not out.exists()
