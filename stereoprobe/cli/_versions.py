"""One comparability rule for every command that compares runs: the leaderboard's task-version rule.

Results of two runs of one task are comparable only when their task versions share N (``N-X``,
:mod:`stereoprobe.task_versions`). The leaderboard refuses runs of different N unless ``--accept-versions
NOTE`` accepts them (:mod:`stereoprobe.leaderboard.versions`, the rule's owner). Every post-processing command
that puts runs side by side (:data:`COMPARING`: ``dbb``, ``globalbias``, ``associations``, ``profiles``,
``judge-report``) takes the same option and applies the same rule to the inspect logs among its inputs, before
anything is read or written: one line naming the runs, or, accepted, a notice on the console and the note in
``run_info.json`` (``version_note``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["COMPARING", "add_option", "check"]

#: the commands that compare runs (the leaderboard has its own option, with the same rule)
COMPARING = ("dbb", "globalbias", "associations", "profiles", "judge-report")
_INPUTS = ("inputs", "logs")


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--accept-versions", default=None, metavar="NOTE",
                        help="compare runs of one task at different task versions (N of N-X: results not "
                             "comparable) anyway, with NOTE recorded in run_info.json (default: refused in one line)")


def _runs(inputs: list[Any]) -> list[dict[str, str]]:
    """Task, version, model and file of each inspect log among ``inputs`` (lm-eval output and tables have no
    task version: left out, as the leaderboard leaves them out)."""
    from stereoprobe.errors import InputError
    from stereoprobe.inputs import find_logs
    from stereoprobe.logs import read_eval_spec
    from stereoprobe.model_labels import model_label

    try:
        paths = find_logs([i for i in inputs if Path(i).exists()])
    except InputError:
        return []  # the command reports its inputs itself
    runs = []
    for path in paths:
        try:
            spec = read_eval_spec(path)
        except (InputError, OSError, ValueError):
            continue
        runs.append({"task": str(spec.get("task", "")).split("/")[-1], "task_version": str(spec.get("task_version", "")),
                     "model": model_label(str(spec.get("model", ""))), "folder": path.name})
    return runs


def check(args: argparse.Namespace) -> None:
    """Apply the leaderboard's task-version rule to a comparing command's inputs (see the module docstring)."""
    from stereoprobe.console import info
    from stereoprobe.leaderboard.versions import version_note
    from stereoprobe.report.run_info import set_version_note

    if getattr(args, "command", None) not in COMPARING:
        return
    inputs = next((getattr(args, name) for name in _INPUTS if isinstance(getattr(args, name, None), list)), [])
    note = version_note(_runs(inputs), getattr(args, "accept_versions", None), command=args.command)
    set_version_note(note)
    if note:
        info(f"notice: {note}")
