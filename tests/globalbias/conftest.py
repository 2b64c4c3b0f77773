"""Tables computed once per test run from the upstream GlobalBias outputs, shared by the reproduction tests.

``stereoprobe globalbias results/3_llama_3_results.csv`` (about 20 s) and ``stereoprobe profiles
data/10a_*_full.csv`` (about 200 s of SVM fits on one core) are each computed once per run, also under
pytest-xdist: the first worker that needs a table builds it in the run's shared temporary folder under a file
lock, the others wait for it and read it. Each fixture skips when its upstream file is absent (``refdata``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from stereoprobe.cli import main

APX_FILE = "GlobalBias/results/3_llama_3_results.csv"
PROFILE_MODELS = ["llama3", "gpt3", "claude", "gpt4o"]  # the paper's column order


def _once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``build(folder)`` once per test run (all xdist workers); the finished folder."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, shared by its workers
    folder = root / f"shared_{name}"
    with FileLock(str(folder) + ".lock"):
        if not (folder / ".complete").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            (folder / ".complete").touch()
    return folder


def _apx(refdata: Path, tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    src = refdata / APX_FILE
    if not src.is_file():
        return None

    def build(folder: Path) -> None:
        assert main(["globalbias", str(src), "--out", str(folder / "out"), "--quiet"]) == 0

    return _once(tmp_path_factory, "gb_apx", build) / "out"


@pytest.fixture(scope="session")
def gb_apx_out(refdata: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``stereoprobe globalbias 3_llama_3_results.csv --out DIR`` (the reference roundings are the default)."""
    out = _apx(refdata, tmp_path_factory)
    if out is None:
        pytest.skip(f"no upstream copy of {APX_FILE}")
    return out


@pytest.fixture(scope="session")
def gb_profiles_out(refdata: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``stereoprobe profiles 10a_*_full.csv --apx DIR`` (``--apx`` only when the APX file is there)."""
    files = [refdata / "GlobalBias" / "data" / f"10a_{m}_full.csv" for m in PROFILE_MODELS]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        pytest.skip(f"no upstream copy of {', '.join(missing)}")
    apx = _apx(refdata, tmp_path_factory)

    def build(folder: Path) -> None:
        cmd = ["profiles", *map(str, files), "--out", str(folder / "p"), "--permutations", "1", "--folds", "2",
               "--quiet"]
        assert main(cmd + (["--apx", str(apx)] if apx is not None else [])) == 0

    return _once(tmp_path_factory, "gb_profiles" + ("_apx" if apx is not None else ""), build) / "p"
