"""``python -m stereoprobe`` in a Python that cannot run it says so in one line (issue 42.7), each case in a
subprocess: stereoprobe not installed (``python -S``: no site-packages, the source tree only), a dependency
missing, and the clone's own folder shadowing the package when ``python -m stereoprobe`` runs from the clone's
parent folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode != 0 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return lines[0]


def test_not_installed_in_this_python() -> None:
    line = _one_line(_run(["-S", "-m", "stereoprobe", "tasks"], ROOT))
    assert line.startswith("stereoprobe is not installed in this Python") and "pip install -e ." in line


def test_a_missing_dependency() -> None:
    code = ("import runpy, sys; sys.modules['inspect_ai'] = None; "
            "sys.argv = ['stereoprobe', 'plan', 'globalbias', '-T', 'source=bundled', '--model', 'transformers/x']; "
            "runpy.run_module('stereoprobe', run_name='__main__')")
    line = _one_line(_run(["-c", code], ROOT))
    assert "a module it needs is missing in this Python" in line and "inspect_ai" in line


def test_the_clone_shadowing_the_package_from_its_parent_folder(tmp_path) -> None:
    (tmp_path / "stereoprobe").symlink_to(ROOT, target_is_directory=True)  # a clone named stereoprobe
    line = _one_line(_run(["-m", "stereoprobe", "tasks"], tmp_path))
    assert "shadows the installed package" in line and str(tmp_path / "stereoprobe") in line, line
