"""The temp-folder marker is a regular file the tool wrote, with content it verifies (issue 41.5).

A folder named like a run's temporary folder (``.out.tmp-XXXXXXXX``) is removed by the next run only when its
``.stereoprobe-temporary`` is a regular file holding the header and the folder's own device and inode. A marker
that is a link (even to a file with the right text), a FIFO (never opened: it would block) or a copy of another
folder's marker keeps the folder, does not stop the run, and gives one notice.
"""

from __future__ import annotations

import builtins
import io
import os
from pathlib import Path

import pytest

from stereoprobe import output_marker, outputs
from stereoprobe.outputs import atomic_output_dir

NAME = ".out.tmp-abcd1234"


def _run(out: Path, text: str) -> None:
    with atomic_output_dir(out) as new:
        (new / "a.csv").write_text(text)


def _notices(err: str, folder: Path) -> list[str]:
    return [line for line in err.splitlines() if "notice" in line and str(folder) in line]


def test_a_folder_the_run_marked_is_removed(tmp_path: Path, capsys) -> None:
    folder = tmp_path / NAME
    folder.mkdir()
    output_marker.mark(folder)
    assert output_marker.is_marked(folder)
    _run(tmp_path / "out", "a")
    assert not folder.exists() and not _notices(capsys.readouterr().err, folder)


def test_a_marker_linked_to_a_file_with_the_right_text_keeps_the_folder(tmp_path: Path, capsys) -> None:
    folder = tmp_path / NAME
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    text = tmp_path / "marker.txt"
    output_marker.mark(folder)  # the text the tool would write into this very folder ...
    (folder / output_marker.MARKER).rename(text)
    (folder / output_marker.MARKER).symlink_to(text)  # ... reached through a link
    _run(tmp_path / "out", "a")
    _run(tmp_path / "out", "b")
    assert (folder / "notes.txt").read_text() == "mine" and text.exists()
    notices = _notices(capsys.readouterr().err, folder)
    assert len(notices) == 2 and "a link" in notices[0]  # one per run


def test_a_fifo_marker_is_never_opened_and_keeps_the_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    folder = tmp_path / NAME
    folder.mkdir()
    fifo = folder / output_marker.MARKER
    os.mkfifo(fifo)
    opened: list[str] = []

    def guarded(real):
        def open_(path, *args, **kwargs):  # opening a FIFO with no writer blocks: record it and refuse instead
            if isinstance(path, (str, bytes, os.PathLike)) and os.fspath(path) == os.fspath(fifo):
                opened.append(os.fspath(path))
                raise OSError("opened the FIFO")
            return real(path, *args, **kwargs)
        return open_

    for module, name in ((builtins, "open"), (io, "open"), (os, "open")):
        monkeypatch.setattr(module, name, guarded(getattr(module, name)))
    _run(tmp_path / "out", "a")
    monkeypatch.undo()
    assert not opened and folder.is_dir() and fifo.exists()
    notices = _notices(capsys.readouterr().err, folder)
    assert len(notices) == 1 and "a FIFO" in notices[0]


@pytest.mark.parametrize("content", ["copied", "old text", "header only"])
def test_a_marker_with_foreign_content_keeps_the_folder(tmp_path: Path, content: str, capsys) -> None:
    folder, other = tmp_path / NAME, tmp_path / "other"
    folder.mkdir()
    other.mkdir()
    output_marker.mark(other)
    text = {"copied": (other / output_marker.MARKER).read_text(),  # the marker of another folder
            "old text": "made by stereoprobe for one run; removed by the next run into the folder beside it\n",
            "header only": output_marker.HEADER}[content]
    (folder / output_marker.MARKER).write_text(text)
    _run(tmp_path / "out", "a")
    assert folder.is_dir()
    assert len(_notices(capsys.readouterr().err, folder)) == 1


def test_the_marker_follows_its_folder_through_a_rename(tmp_path: Path) -> None:
    """Build folders are renamed into version folders, and an exchange swaps two folders: the marker names
    the folder itself, not its path."""
    a = tmp_path / "a"
    a.mkdir()
    output_marker.mark(a)
    a.rename(tmp_path / "b")
    assert output_marker.is_marked(tmp_path / "b")
    assert outputs.MARKER == output_marker.MARKER
