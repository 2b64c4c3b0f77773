"""The command line's shutdown without the collector's full passes (issue 44): the collector is frozen at exit in
inspect's command line, once, and nowhere else (a script or a test importing stereoprobe keeps the plain exit).

Each case runs a fresh interpreter whose first atexit handler (so the last to run) prints whether the collector
was frozen by then."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = ("import atexit, gc, sys\n"
         "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0, flush=True))\n")


def _run(body: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", PROBE + body], capture_output=True, text=True, env=env, timeout=600)


def test_freeze_at_exit_freezes_once_at_exit_and_not_before() -> None:
    done = _run("from stereoprobe.process_exit import freeze_at_exit\n"
                "n = atexit._ncallbacks()\n"
                "freeze_at_exit(); freeze_at_exit()\n"
                "print('handlers added:', atexit._ncallbacks() - n, 'frozen now:', gc.get_freeze_count() > 0)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["handlers added: 1 frozen now: False", "frozen at exit: True"]


def test_without_it_the_exit_is_the_interpreters_own() -> None:
    done = _run("import stereoprobe._registry  # a script importing the entry point: not inspect's command line\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["frozen at exit: False"]


@pytest.mark.slow  # imports inspect's command line and the entry point in a fresh interpreter
def test_inspect_eval_freezes_at_exit_after_its_checks() -> None:
    # a refused command line still says its one line, and exits through the frozen shutdown
    done = _run("from inspect_ai._cli.main import main\n"
                "sys.argv = ['inspect', 'eval', 'stereoprobe/globalbais', '--model', 'transformers/default',\n"
                "            '--display', 'none']\n"
                "main()\n")
    assert done.returncode == 1
    assert "stereoprobe has no task 'globalbais'" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout.splitlines()[-1] == "frozen at exit: True", done.stdout
