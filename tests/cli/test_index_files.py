"""``stereoprobe index DIR`` links only what lies inside DIR, replaces only an index page it wrote, and a
folder it cannot write is one line."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.report.html import Section, write_report
from stereoprobe.report.index import MARKER
from stereoprobe.report.run_info import write_run_info


def _report_folder(root: Path, name: str = "dbb") -> Path:
    d = root / name
    d.mkdir(parents=True)
    pd.DataFrame({"model": ["m"]}).to_csv(d / "summary.csv", index=False)
    write_report(d / "report.html", "DBB", [Section("S").text("x")])
    write_run_info(d, probe="dbb", models=["m"], settings={"mode": "logprob"})
    return d


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("stereoprobe index: error:"), err
    return err[0]


def test_links_to_outside_the_folder_are_left_out(tmp_path: Path) -> None:
    root = tmp_path / "results"
    d = _report_folder(root)
    outside = _report_folder(tmp_path / "elsewhere", "secret_report")
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    os.symlink("/", d / "root.csv")  # a link to the file-system root
    os.symlink(tmp_path / "passwd", d / "passwd.csv")
    os.symlink(tmp_path / "passwd", root / "passwd.html")
    os.symlink(outside, root / "linked_folder")  # a report folder outside, linked in
    os.symlink(d / "summary.csv", d / "inside_link.csv")  # a link that stays inside: kept
    assert main(["index", str(root)]) == 0
    page = (root / "index.html").read_text()
    # the tables column links the folder (issue 35.9); it counts only the tables inside: summary, inside_link
    assert 'href="dbb/report.html"' in page and 'href="dbb/"' in page and "(2 tables)" in page
    for name in ("root.csv", "passwd.csv", "passwd.html", "linked_folder", "secret_report"):
        assert name not in page, name


def test_a_users_own_index_page_is_refused_and_kept(tmp_path: Path, capsys) -> None:
    _report_folder(tmp_path)
    own = "<html><body>my own landing page</body></html>"
    (tmp_path / "index.html").write_text(own)
    assert main(["index", str(tmp_path)]) == 2
    assert "not written by stereoprobe" in _one_error_line(capsys)
    assert (tmp_path / "index.html").read_text() == own


def test_its_own_index_page_is_replaced(tmp_path: Path) -> None:
    _report_folder(tmp_path)
    assert main(["index", str(tmp_path)]) == 0
    first = (tmp_path / "index.html").read_text()
    assert MARKER in first
    _report_folder(tmp_path, "second")
    assert main(["index", str(tmp_path)]) == 0
    assert "second/report.html" in (tmp_path / "index.html").read_text()


def test_an_index_link_is_refused(tmp_path: Path, capsys) -> None:
    _report_folder(tmp_path)
    (tmp_path / "target.html").write_text("x")
    os.symlink(tmp_path / "target.html", tmp_path / "index.html")
    assert main(["index", str(tmp_path)]) == 2
    _one_error_line(capsys)
    assert (tmp_path / "target.html").read_text() == "x"


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOSPC, errno.EDQUOT])
def test_an_unwritable_folder_is_one_line(tmp_path: Path, capsys, monkeypatch, code: int) -> None:
    """Tests run as root, where chmod does not stop a write: the file system's refusal is injected where the
    page's temporary file is created."""
    import tempfile

    _report_folder(tmp_path)

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(tmp_path / ".index.html.x.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["index", str(tmp_path)]) == 2
    line = _one_error_line(capsys)
    assert str(tmp_path) in line and os.strerror(code).lower() in line
    assert not (tmp_path / "index.html").exists()


def _as_link_kept(folder: Path, monkeypatch) -> None:
    """Rewrite ``folder`` as a file system that cannot exchange folders keeps it: a link to its version."""
    import shutil

    from stereoprobe import outputs

    def no_exchange(a, b):
        raise outputs.NoExchange

    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    shutil.rmtree(folder)
    with monkeypatch.context() as m:
        m.setattr(outputs, "exchange_paths", no_exchange)
        with outputs.atomic_output_dir(folder, owner="test") as new:
            for name, data in files.items():
                (new / name).write_bytes(data)
    assert folder.is_symlink()


def test_a_folder_kept_as_a_link_is_indexed_under_its_name(tmp_path: Path, monkeypatch) -> None:
    d = _report_folder(tmp_path)
    _as_link_kept(d, monkeypatch)
    assert main(["index", str(tmp_path)]) == 0
    page = (tmp_path / "index.html").read_text()
    assert 'href="dbb/report.html"' in page and 'href="dbb/"' in page and ".dbb.v-" not in page


def test_the_leaderboard_reads_a_folder_kept_as_a_link(tmp_path: Path, monkeypatch) -> None:
    import numpy as np
    from leaderboard.conftest import dbb_folder

    folder = dbb_folder(tmp_path / "results", {"m1": np.linspace(0, 40, 20), "m2": np.linspace(5, 30, 20)})
    plain = tmp_path / "plain"
    assert main(["leaderboard", str(tmp_path / "results"), "--out", str(plain), "--n-boot", "50", "-q"]) == 0
    _as_link_kept(folder, monkeypatch)
    linked = tmp_path / "linked"
    assert main(["leaderboard", str(tmp_path / "results"), "--out", str(linked), "--n-boot", "50", "-q"]) == 0
    assert (linked / "leaderboard.csv").read_text() == (plain / "leaderboard.csv").read_text()


def test_the_file_system_root_is_refused(capsys) -> None:
    assert main(["index", "/"]) == 2
    assert "file-system root" in capsys.readouterr().err
    assert not Path("/index.html").exists() and not Path("/.index.html.lock").exists()


def test_a_folder_too_large_to_be_results_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from stereoprobe.report import index

    _report_folder(tmp_path)
    for i in range(5):
        (tmp_path / f"d{i}").mkdir()
    monkeypatch.setattr(index, "MAX_FOLDERS", 3)
    assert main(["index", str(tmp_path)]) == 2
    assert "more than 3 folders" in _one_error_line(capsys)
    assert not (tmp_path / "index.html").exists()
