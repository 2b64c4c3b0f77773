"""`make demo` reports progress off a terminal (issue 42.5): make echoes each step's command as it starts, and
every inspect run of the demo draws plain one-line updates (`--display plain`) when stderr is not a terminal,
rich's live display only on one. Read from `make -n` (prints the recipe, runs nothing)."""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry_run(stderr: int) -> list[str]:
    """The demo's inspect commands as `make -n demo` prints them, with stderr on ``stderr``."""
    done = subprocess.run(["make", "-n", "demo", "DEMO_OUT=/nonexistent/demo"], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=stderr, text=True, timeout=120, check=True)
    joined = done.stdout.replace("\\\n", " ")  # a step's continued lines as one command
    return [line for line in joined.splitlines() if re.search(r"/inspect eval ", line)]


def test_every_inspect_step_of_the_demo_prints_plain_lines_off_a_terminal() -> None:
    runs = _dry_run(subprocess.PIPE)
    assert len(runs) >= 5  # StereoTales, its judge, DBB, GlobalBias twice, profiles
    assert all(re.search(r"--display plain(\s|$)", r) for r in runs), runs


def test_on_a_terminal_the_demo_keeps_inspects_live_display() -> None:
    main, secondary = pty.openpty()
    try:
        runs = _dry_run(secondary)
    finally:
        os.close(main)
        os.close(secondary)
    assert runs and all(re.search(r"--display rich(\s|$)", r) for r in runs), runs
