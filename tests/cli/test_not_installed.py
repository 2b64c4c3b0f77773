"""``python -m stereoprobe`` in a Python that cannot run it says so in one line (issue 42.7), each case in a
subprocess: stereoprobe not installed (``python -S``: no site-packages, the source tree only), a dependency
missing; and from the clone's parent folder, where the clone's folder comes first under the name
``stereoprobe``, the clone's root ``__init__.py`` hands the import to the installed package."""

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
    """From the clone's parent folder the clone's root ``__init__.py`` hands the import to the installed package:
    ``python -m stereoprobe`` runs the command line (it used to stop with the shadowing line)."""
    (tmp_path / "stereoprobe").symlink_to(ROOT, target_is_directory=True)  # a clone named stereoprobe
    done = _run(["-m", "stereoprobe", "tasks"], tmp_path)
    assert done.returncode == 0 and "stereoprobe/globalbias" in done.stdout, done.stderr[-2000:]


def test_the_python_api_from_the_clone_parent_folder_with_a_logs_folder(tmp_path) -> None:
    """The README's Python import run from the parent of a clone that holds a pilot's ``logs/`` folder: without
    the root ``__init__.py`` the clone was a namespace package and ``stereoprobe.logs`` the ``logs/`` folder
    ("cannot import name 'LogInfo' from 'stereoprobe.logs' (unknown location)")."""
    clone = tmp_path / "stereoprobe"
    (clone / "logs" / "pilot_st").mkdir(parents=True)
    (clone / "__init__.py").write_text((ROOT / "__init__.py").read_text())
    code = "from stereoprobe.logs import LogInfo; import stereoprobe; print(LogInfo.__module__, stereoprobe.__file__)"
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    module, origin = done.stdout.split()
    assert module == "stereoprobe.logs" and Path(origin).resolve() != (clone / "__init__.py").resolve()


def test_the_clone_shadowing_with_no_package_installed(tmp_path) -> None:
    """No stereoprobe installed (``python -S``: no site-packages): the import fails with a line naming the folder."""
    clone = tmp_path / "stereoprobe"
    clone.mkdir()
    (clone / "__init__.py").write_text((ROOT / "__init__.py").read_text())
    done = _run(["-S", "-c", "import stereoprobe"], tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and last.startswith("ImportError: stereoprobe: the folder") and str(clone) in last
    assert "shadows the package" in last and "not installed in this Python" in last, done.stderr[-2000:]
