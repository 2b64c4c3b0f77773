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
