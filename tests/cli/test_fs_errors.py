"""Every refusal of the file system is one line naming the path and the cause, exit code 2, nothing
half-written: a read-only or full file system, a used-up quota, no inodes, an unreadable input or subfolder,
wherever it arises (the lock, the temporary folder or file, the index page, plan --json, rater-sheet,
default-model-path's conversion).

Tests run as root, where ``chmod`` stops nothing: the file system's error is injected where the system call
is made (``os.open`` of the lock file, ``tempfile.mkdtemp`` / ``mkstemp``, ``os.scandir`` ...), with the errno and
message the kernel gives.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from stereoprobe.cli import main

CODES = [errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS]


def _one_line(capsys, rc: int) -> str:
    captured = capsys.readouterr()
    lines = [x for x in captured.err.splitlines() if x.strip()]
    assert rc == 2 and "Traceback" not in captured.err and len(lines) == 1, captured.err
    assert ": error: " in lines[0]
    return lines[0]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def dbb_results(tmp_path: Path) -> Path:
    from leaderboard.conftest import dbb_folder

    return dbb_folder(tmp_path / "runs", {"m1": np.linspace(0, 40, 20), "m2": np.linspace(5, 30, 20)})


@pytest.mark.parametrize("code", CODES)
def test_lock_file_cannot_be_created(code: int, dbb_results: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if str(path).endswith(".lock"):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    out = tmp_path / "new" / "lb"
    line = _one_line(capsys, main(["leaderboard", str(dbb_results), "--out", str(out), "--n-boot", "50"]))
    assert str(tmp_path / "new" / ".lb.lock") in line and os.strerror(code).lower() in line
    assert not (tmp_path / "new").exists()  # the parent it created is gone again


@pytest.mark.parametrize("code", CODES)
def test_build_folder_cannot_be_created(code: int, dbb_results: Path, tmp_path: Path, monkeypatch,
                                        capsys) -> None:
    out = tmp_path / "lb"
    assert main(["leaderboard", str(dbb_results), "--out", str(out), "--n-boot", "50", "-q"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(tmp_path / ".lb.tmp-abcdefgh"))

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    line = _one_line(capsys, main(["leaderboard", str(dbb_results), "--out", str(out), "--n-boot", "60"]))
    assert str(tmp_path) in line and os.strerror(code).lower() in line and "keeps its earlier results" in line
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert _leftovers(tmp_path) == []


def test_out_of_inodes_is_named(dbb_results: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """ENOSPC with free bytes but no free inodes: the line says so."""
    import pandas as pd

    class Full:
        f_files, f_favail, f_bavail = 1000, 0, 10**6

    def no_inode(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(os, "statvfs", lambda path: Full())
    monkeypatch.setattr(pd.DataFrame, "to_csv", no_inode)
    out = tmp_path / "lb"
    line = _one_line(capsys, main(["leaderboard", str(dbb_results), "--out", str(out), "--n-boot", "50"]))
    assert "no space left on device" in line and str(out) in line
    assert not out.exists() and _leftovers(tmp_path) == []


def test_an_unreadable_subfolder_is_one_line(dbb_results: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    real_scandir = os.scandir
    blocked = dbb_results.parent / "locked"
    blocked.mkdir()

    def scandir(path="."):
        if Path(path) == blocked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    line = _one_line(capsys, main(["dbb", str(dbb_results.parent), "--out", str(tmp_path / "o")]))
    assert str(blocked) in line and "permission denied" in line.lower()


@pytest.mark.parametrize("code", CODES)
def test_plan_json_into_an_unwritable_folder(code: int, tmp_path: Path, monkeypatch, capsys) -> None:
    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(tmp_path / ".plan.json.x.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    rc = main(["plan", "dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "categories=ses", "--model",
               "transformers/default", "--json", str(tmp_path / "plan.json")])
    line = _one_line(capsys, rc)
    assert str(tmp_path) in line and os.strerror(code).lower() in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("code", CODES)
def test_rater_sheet_into_an_unwritable_folder(code: int, tmp_path: Path, monkeypatch, capsys) -> None:
    import pandas as pd

    from stereoprobe.stereotales.judge import human

    src = tmp_path / "in"
    src.mkdir()
    assoc = pd.DataFrame({"model": ["m"], "slice": ["all"], "scenario_key": ["s"], "base_attribute": ["gender"],
                          "base_value": ["woman"], "compared_attribute": ["age"], "compared_value": ["adult"]})
    assoc.to_csv(src / "associations.csv", index=False)
    real = pd.DataFrame.to_csv

    def refuse(self, path=None, *args, **kwargs):
        if path is not None and Path(str(path)).parent == tmp_path / "out":
            raise OSError(code, os.strerror(code), str(path))
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", refuse)
    monkeypatch.setattr(human, "rater_sheet", lambda *a, **k: assoc)
    rc = main(["rater-sheet", str(src / "associations.csv"), "--out", str(tmp_path / "out" / "sheet.csv")])
    line = _one_line(capsys, rc)
    assert str(tmp_path / "out") in line and os.strerror(code).lower() in line
    assert not (tmp_path / "out" / "sheet.csv").exists()


class SafetensorError(Exception):
    """Stands for safetensors' own error type, which carries the OS error in its message."""


@pytest.mark.parametrize("error", [
    OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/cache/models/x/model.safetensors"),
    SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left '
                    'on device" })'),
])
def test_default_model_path_on_a_full_disk_says_what_it_needs(error: Exception, monkeypatch, capsys) -> None:
    from stereoprobe.providers import default_model

    def convert():
        raise error

    monkeypatch.setattr(default_model, "default_model_dir", convert)
    line = _one_line(capsys, main(["default-model-path"]))
    assert "0.5 GB" in line and "STEREOPROBE_CACHE" in line


def test_default_model_path_other_errors_keep_their_traceback(monkeypatch) -> None:
    from stereoprobe.providers import default_model

    def convert():
        raise SafetensorError("an unrelated bug")

    monkeypatch.setattr(default_model, "default_model_dir", convert)
    with pytest.raises(SafetensorError):
        main(["default-model-path"])


def test_an_unreadable_log_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    import zipfile

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "run.eval").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    real = zipfile.ZipFile.__init__

    def refuse(self, file, *args, **kwargs):
        if str(file).endswith("run.eval"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real(self, file, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "__init__", refuse)
    line = _one_line(capsys, main(["dbb", str(logs), "--out", str(tmp_path / "out")]))
    assert str(logs / "run.eval") in line and "permission denied" in line.lower()
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("planted", ["link", "folder"])
def test_a_planted_lock_path_is_one_line_and_never_followed(planted: str, dbb_results: Path, tmp_path: Path,
                                                            capsys) -> None:
    """``.lb.lock`` planted as a link to another file (which the lock must never open, let alone change) or as
    a folder: one line, nothing written."""
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    lock = tmp_path / ".lb.lock"
    if planted == "link":
        lock.symlink_to(target)
    else:
        lock.mkdir()
    line = _one_line(capsys, main(["leaderboard", str(dbb_results), "--out", str(tmp_path / "lb")]))
    assert str(lock) in line and "nothing was written" in line
    assert target.read_text() == "keep me" and not (tmp_path / "lb").exists()


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_a_cache_folder_that_cannot_be_created_is_one_line(code: int, tmp_path: Path, monkeypatch, capsys) -> None:
    real_mkdir = Path.mkdir
    cache = tmp_path / "home" / ".cache"

    def refuse(self, *args, **kwargs):
        if str(self).startswith(str(cache)):
            raise OSError(code, os.strerror(code), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setenv("STEREOPROBE_CACHE", str(cache))
    monkeypatch.setattr(Path, "mkdir", refuse)
    line = _one_line(capsys, main(["default-model-path"]))
    assert str(cache) in line and os.strerror(code).lower() in line and "STEREOPROBE_CACHE" in line
