"""Runs of one task at different comparability versions are not ranked side by side without a note (issue 35.13).

A task's version is ``N-X`` (:mod:`stereoprobe.task_versions`): results of two versions of one task are
comparable only when their N is the same. The leaderboard reads each input folder's runs (their logs' task and
``task_version``, recorded in ``run_info.json``); when one task's runs have two or more different N, it stops
with one line naming the runs, unless the user accepts them with a note (``--accept-versions NOTE``), which the
page then shows above the comparison. A run whose folder recorded no version (written before versions were
recorded) or whose version cannot be placed is not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stereoprobe.errors import InputError

__all__ = ["version_groups", "version_note"]


def version_groups(runs: Iterable[Mapping[str, Any]]) -> dict[str, dict[int, list[str]]]:
    """task -> N -> the runs (``model (version, folder)``) of that comparability version, for the tasks whose
    runs have two or more N."""
    from stereoprobe.task_versions import comparability

    found: dict[str, dict[int, list[str]]] = {}
    for run in runs:
        task, recorded = str(run.get("task") or ""), str(run.get("task_version") or "")
        n = comparability(task, recorded) if task and recorded else None
        if n is None:
            continue
        label = f"{run.get('model', '?')} ({recorded}, {run.get('folder', '?')})"
        names = found.setdefault(task, {}).setdefault(n, [])
        if label not in names:
            names.append(label)
    return {t: g for t, g in found.items() if len(g) > 1}


def _describe(groups: dict[str, dict[int, list[str]]]) -> str:
    return "; ".join(f"{task}: " + " vs ".join(", ".join(runs) for _, runs in sorted(by_n.items()))
                     for task, by_n in sorted(groups.items()))


def version_note(runs: Iterable[Mapping[str, Any]], accepted: str | None = None,
                 command: str = "leaderboard") -> str | None:
    """None when every task's runs share one comparability version; else, with ``accepted`` (the user's
    note), the line the page shows; without it an :class:`InputError` in one line naming the runs. ``command``:
    the command applying the rule (every command that compares runs does: :mod:`stereoprobe.cli._versions`)."""
    groups = version_groups(runs)
    if not groups:
        return None
    what = _describe(groups)
    ranks = command == "leaderboard"
    if accepted is None or not accepted.strip():
        raise InputError(f"{command}: runs of different task versions are not comparable ({what}); rerun them "
                         f"at one version, or {'rank' if ranks else 'compare'} them anyway with --accept-versions "
                         f"'NOTE' ({'shown on the page' if ranks else 'recorded in run_info.json'})")
    return (f"Runs of different task versions {'ranked' if ranks else 'compared'} side by side ({what}); accepted "
            f"with the note: {accepted.strip()}")
