from __future__ import annotations

from pathlib import Path

from stereoprobe.cli import main


def test_lm_eval_path_points_at_shipped_tasks(capsys) -> None:
    assert main(["lm-eval-path"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.is_dir() and (path / "__init__.py").is_file()


def test_no_command_prints_help(capsys) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_index_links_reports_and_tables(tmp_path: Path) -> None:
    (tmp_path / "dbb").mkdir()
    (tmp_path / "dbb" / "report.html").write_text("<html></html>")
    (tmp_path / "dbb" / "summary.csv").write_text("a\n1\n")
    assert main(["index", str(tmp_path)]) == 0
    text = (tmp_path / "index.html").read_text()
    assert 'href="dbb/report.html"' in text and 'href="dbb/summary.csv"' in text


def test_index_of_empty_folder_is_an_error(tmp_path: Path, capsys) -> None:
    assert main(["index", str(tmp_path)]) == 2  # one line on stderr, exit code 2 (traceback with --debug)
    assert "no HTML report" in capsys.readouterr().err
