"""lm-eval ``--log_samples`` rows of the shipped ``dbb_mc`` / ``dbb_sg`` tasks -> DBB response records.

One conversion, shared by the tasks' own aggregation (``stereoprobe/lm_eval_tasks/dbb/utils.py``) and by the
readers of ``stereoprobe dbb`` (:mod:`stereoprobe.dbb.results`) and ``stereoprobe leaderboard``
(:mod:`stereoprobe.dbb.leaderboard`), so a figure computed inside lm-eval and the same figure computed afterwards
from its samples file come from the same rows and the same statistics (:mod:`stereoprobe.dbb.stats`).

One response row per doc (``a`` = the doc's P(A) share in [0, 1], ``valid`` = 1); dbb_mc has two docs per
question (both option orders, ``epoch`` 1 and 2), whose mean is the question's P(A), the estimand of the
inspect task's ``mode=logprob``; the variant is the contract's (:data:`stereoprobe.dbb.contract.LM_EVAL_TASKS`),
with ``source = "lm-eval"``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from stereoprobe.dbb import contract as C
from stereoprobe.errors import InputError

__all__ = ["DOC_KEYS", "RESPONSE_COLUMNS", "instances", "response"]

#: the doc fields a DBB response needs: the question id and the DBB contract's sample metadata keys
DOC_KEYS = ("question_id", *C.META_KEYS)
#: DBB's response columns (the contract's) plus where the row came from
RESPONSE_COLUMNS = [*C.RESPONSE_COLUMNS, "source"]


def _float(x: Any) -> float:
    while isinstance(x, (list, tuple)):
        if not x:
            raise ValueError("empty response")
        x = x[0]
    return float(x)


def response(row: Mapping[str, Any], task: str, model: str = "") -> dict[str, Any]:
    """One DBB response record from one lm-eval sample row (``doc``, ``doc_id``, ``p_a``) of ``dbb_mc`` or
    ``dbb_sg``."""
    if task not in C.LM_EVAL_TASKS:
        raise InputError(f"not a DBB lm-eval task: {task!r} (expected one of {sorted(C.LM_EVAL_TASKS)})")
    doc = row.get("doc") or {}
    missing = [k for k in DOC_KEYS if k not in doc]
    if missing or "p_a" not in row:
        raise InputError(f"lm-eval {task} sample {row.get('doc_id')}: missing field(s) "
                         f"{missing + ([] if 'p_a' in row else ['p_a'])}")
    a = _float(row["p_a"])
    valid = 1.0 if math.isfinite(a) else 0.0
    epoch = (1 if doc.get("a_first", True) else 2) if task == "dbb_mc" else 1
    return {"model": model, "variant": C.LM_EVAL_TASKS[task], "question_id": str(doc["question_id"]), "epoch": epoch,
            **{k: doc[k] for k in DOC_KEYS[1:]}, "a": a if valid else 0.0, "valid": valid,
            "refusal": valid < 0.5, "source": "lm-eval"}


def instances(records: Iterable[Mapping[str, Any]], expected_docs: int = 1) -> pd.DataFrame:
    """Test instances (S per pair of groups) of one model from records with :data:`DOC_KEYS` and ``a``:
    :func:`stereoprobe.dbb.stats.question_table` then :func:`~stereoprobe.dbb.stats.instance_table`, as
    ``stereoprobe dbb`` computes them.

    A question with fewer than ``expected_docs`` docs (dbb_mc: 2, both option orders; a ``--limit`` can cut
    one off) is incomplete: its P(A) is undefined, so its instances have no S, as ``stereoprobe dbb`` does."""
    from stereoprobe.dbb import stats as ST

    df = pd.DataFrame([{"model": "", **{k: r[k] for k in DOC_KEYS}, "a": float(r["a"]), "valid": 1.0}
                       for r in records])
    if df.empty:
        return pd.DataFrame(columns=["s"])
    q = ST.question_table(df)  # mean over the docs of a question (both option orders in dbb_mc)
    q.loc[q["n_responses"] < expected_docs, "p_a"] = float("nan")
    return ST.instance_table(q)
