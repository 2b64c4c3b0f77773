"""lm-eval ``--log_samples`` output of stereoprobe's shipped lm-eval tasks -> the tables the leaderboard reads.

``dbb_mc`` / ``dbb_sg``: the per-document ``p_a`` values become DBB responses
(:func:`stereoprobe.lm_eval_tasks.records.dbb_response`), then the ``summary`` and ``instances`` tables of
``stereoprobe dbb`` (:func:`stereoprobe.dbb.results.compute_tables`). ``globalbias``: the summed
log-likelihoods become sentence perplexities through the reader of ``stereoprobe globalbias``
(:func:`stereoprobe.globalbias.inputs.load`; byte-normalised unless a tokenizer is given, since the samples
carry no token counts), then its tables per model (:func:`stereoprobe.globalbias.report.analyse`). A run cut
with ``--limit`` leaves (group, descriptor) units without some of their names x templates: as in
``stereoprobe globalbias``, they are left out of the statistics
(:func:`stereoprobe.globalbias.completeness.split_complete`) and counted in an ``incomplete_units`` table; an
:class:`~stereoprobe.errors.InputError` when no complete unit remains.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pandas as pd

DBB_LM_EVAL_TASKS = ("dbb_mc", "dbb_sg")
GB_LM_EVAL_TASK = "globalbias"


def _dbb(path: Path, threshold: float, n_boot: int, seed: int) -> dict[str, pd.DataFrame]:
    from stereoprobe.dbb.results import compute_tables
    from stereoprobe.inputs import iter_lm_eval_samples
    from stereoprobe.lm_eval_tasks.records import DBB_COLUMNS, dbb_response

    rows = [dbb_response({"doc": r.doc, "doc_id": r.doc_id, "p_a": r.metrics.get("p_a")}, r.task, r.model)
            for r in iter_lm_eval_samples([path], DBB_LM_EVAL_TASKS)]
    t = compute_tables(pd.DataFrame(rows, columns=DBB_COLUMNS), threshold=threshold, n_boot=n_boot, seed=seed)
    return {"summary": t["summary"], "instances": t["instances"]}


def _globalbias(files: list[Path], tokenizer: Any, alpha: float) -> dict[str, pd.DataFrame]:
    from stereoprobe.errors import InputError
    from stereoprobe.globalbias.completeness import split_complete
    from stereoprobe.globalbias.inputs import load
    from stereoprobe.globalbias.report import analyse

    sentences, _ = load(files, measure="token" if tokenizer is not None else "byte", tokenizer=tokenizer)
    sentences, incomplete = split_complete(sentences)
    if sentences.empty:
        raise InputError(f"{files[0].parent}: no complete GlobalBias group x descriptor unit in the lm-eval samples "
                         f"({len(incomplete)} incomplete; every name of a group under every template is needed)")
    out: dict[str, list[pd.DataFrame]] = {"incomplete_units": [incomplete]}
    for model, sub in sentences.groupby("model", sort=True):
        for name, df in analyse(sub, alpha=alpha).items():
            if name in ("bias_scores", "validation", "validation_detail"):
                out.setdefault(name, []).append(df.assign(model=model))
    return {k: pd.concat(v, ignore_index=True) for k, v in out.items()}


def lm_eval_tables(path: Path, skip: Collection[str] = (), threshold: float = 20.0, n_boot: int = 2000,
                   seed: int = 0, alpha: float = 0.05, tokenizer: Any = None) -> dict[str, dict[str, pd.DataFrame]]:
    """probe -> tables from the lm-eval samples files under ``path`` (a folder), for probes not in ``skip``."""
    from stereoprobe.inputs import find_lm_eval_samples

    out: dict[str, dict[str, pd.DataFrame]] = {}
    if not Path(path).is_dir():
        return out
    if "dbb" not in skip and find_lm_eval_samples([path], DBB_LM_EVAL_TASKS):
        out["dbb"] = _dbb(Path(path), threshold, n_boot, seed)
    gb = find_lm_eval_samples([path], GB_LM_EVAL_TASK) if "globalbias" not in skip else []
    if gb:
        out["globalbias"] = _globalbias(gb, tokenizer, alpha)
    return out
