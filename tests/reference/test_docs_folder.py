"""``stereoprobe reference --docs DIR`` checks DIR before the run (issue 34.6: given a log folder it ran for
minutes and then failed): a folder without the documentation files is one line, exit 2, nothing run or written."""

from __future__ import annotations

from pathlib import Path

import pytest

from stereoprobe import reference
from stereoprobe.cli import main
from stereoprobe.reference.docs import DOC_FILES


def test_a_log_folder_as_docs_is_refused_before_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "2026-01-01T00-00-00_globalbias_x.eval").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.setattr(reference, "run_reference", lambda *a, **k: pytest.fail("the run started"))
    out = tmp_path / "out"
    assert main(["reference", "--out", str(out), "--docs", str(logs)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"--docs {logs}: not the documentation folder" in line and "globalbias.md" in line
    assert not out.exists()


def test_the_project_docs_folder_passes() -> None:
    from stereoprobe.reference.docs import check_docs_dir

    docs = Path(__file__).resolve().parents[2] / "docs"
    assert all((docs / n).is_file() for n in DOC_FILES)
    check_docs_dir(docs)
