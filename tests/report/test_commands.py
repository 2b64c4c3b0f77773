"""``stereoprobe index`` and ``stereoprobe default-model-path`` through the command line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.report.html import Section, write_report
from stereoprobe.report.run_info import write_run_info


def test_index_command_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "dbb"
    d.mkdir()
    pd.DataFrame({"model": ["m"]}).to_csv(d / "summary.csv", index=False)
    write_report(d / "report.html", "DBB", [Section("S").text("x")])
    write_run_info(d, probe="dbb", models=["m"], settings={"mode": "logprob"})
    assert main(["index", str(tmp_path)]) == 0
    assert (tmp_path / "index.html").is_file() and str(tmp_path / "index.html") in capsys.readouterr().out


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_index_command_bad_input_is_one_line(tmp_path: Path, make: str, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "nope" if make == "missing" else tmp_path
    assert main(["index", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stereoprobe index: error:") and len(err.splitlines()) == 1


@pytest.mark.slow
def test_default_model_path_prints_a_model_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["default-model-path"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file()
