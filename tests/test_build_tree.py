"""`inspect list tasks` from a clone lists each task once: build trees go where inspect's walk does not look."""

from __future__ import annotations

import configparser
from pathlib import Path

from inspect_ai._eval.list import is_task_path_excluded, list_tasks

ROOT = Path(__file__).resolve().parents[1]


def test_build_trees_are_outside_inspect_task_discovery():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    base = cfg.get("build", "build_base")
    assert is_task_path_excluded(Path(base).parts[0]), f"build_base {base!r} is walked by inspect list tasks"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "rm -rf build/lib" in makefile  # a stale tree of an earlier build is removed on install


def test_a_stale_copy_in_the_build_base_is_not_listed(tmp_path):
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    base = cfg.get("build", "build_base")
    (tmp_path / "tasks").mkdir()
    task = "from inspect_ai import task\n\n@task\ndef toy():\n    pass\n"
    (tmp_path / "tasks" / "toy.py").write_text(task, encoding="utf-8")
    stale = tmp_path / base / "lib" / "stereoprobe" / "tasks"
    stale.mkdir(parents=True)
    (stale / "toy.py").write_text(task, encoding="utf-8")
    listed = [t.file for t in list_tasks(root_dir=tmp_path)]
    assert listed == ["tasks/toy.py"]
