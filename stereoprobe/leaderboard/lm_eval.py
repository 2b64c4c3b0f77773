"""lm-eval ``--log_samples`` output of stereoprobe's shipped lm-eval tasks -> the tables the leaderboard reads.

Each probe that ships lm-eval tasks names them and their reader in its descriptor
(:attr:`stereoprobe.probes.ProbeDescriptor.lm_eval_tasks` and ``lm_eval``, e.g. DBB's
:func:`stereoprobe.dbb.leaderboard.dbb_lm_eval_tables` for ``dbb_mc`` / ``dbb_sg`` and GlobalBias'
:func:`stereoprobe.globalbias.leaderboard.globalbias_lm_eval_tables` for ``globalbias``); this module finds the
samples files of each probe under a folder and calls its reader, so a new probe's lm-eval tasks need no change
here.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["lm_eval_task_names", "lm_eval_tables"]


def lm_eval_task_names() -> list[str]:
    """The shipped lm-eval tasks the leaderboard reads, in the probes' display order."""
    from stereoprobe.probes import registered

    return [t for d in registered() if d.lm_eval is not None for t in d.lm_eval_tasks]


def lm_eval_tables(path: Path, skip: Collection[str] = (), **options: Any) -> dict[str, dict[str, pd.DataFrame]]:
    """probe -> tables from the lm-eval samples files under ``path`` (a folder), for probes not in ``skip``.

    ``options`` (e.g. ``n_boot``, ``seed``, the probes' settings ``threshold`` / ``alpha``, a ``tokenizer``) go
    to each probe's reader, which takes those it names (:meth:`stereoprobe.probes.ProbeDescriptor.call_lm_eval`);
    an option no reader names is ignored, one not given takes the reader's default."""
    from stereoprobe.inputs import find_lm_eval_samples
    from stereoprobe.probes import registered

    out: dict[str, dict[str, pd.DataFrame]] = {}
    if not Path(path).is_dir():
        return out
    for d in registered():
        if d.lm_eval is None or d.name in skip:
            continue
        files = find_lm_eval_samples([path], d.lm_eval_tasks)
        if files:
            out[d.name] = d.call_lm_eval(files, options)
    return out
