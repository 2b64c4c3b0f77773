"""lm-eval ``--log_samples`` rows of the shipped tasks → the records stereoprobe's statistics use.

One conversion per task, shared by the tasks' own aggregations (``utils.py`` of each task folder) and by the
readers of ``stereoprobe dbb`` / ``stereoprobe globalbias`` / ``stereoprobe leaderboard``, so a figure computed
inside lm-eval and the same figure computed afterwards from its samples file come from the same rows and the
same library functions (``stereoprobe.dbb.stats``, ``stereoprobe.globalbias.apx``).

- ``dbb_mc`` / ``dbb_sg``: one response row per doc (``a`` = the doc's P(A) share in [0, 1], ``valid`` = 1);
  dbb_mc has two docs per question (both option orders, ``epoch`` 1 and 2), whose mean is the question's P(A)
  — the estimand of the inspect task's ``mode=logprob``; variant ``mcq-logprob`` / ``sg`` as in
  ``stereoprobe dbb``, with ``source = "lm-eval"``.
- ``globalbias``: one sentence row per doc with its perplexity (byte-normalised, or per token when the doc
  carries a ``tokenizer``), the columns of ``stereoprobe.globalbias.inputs``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from stereoprobe.dbb import contract as DBB
from stereoprobe.errors import InputError
from stereoprobe.globalbias import contract as GB

#: lm-eval task -> the ``variant`` of its responses (the DBB contract's)
DBB_TASKS = DBB.LM_EVAL_TASKS
#: the doc fields a DBB response needs: the question id and the DBB contract's sample metadata keys
DBB_DOC_KEYS = ("question_id", *DBB.META_KEYS)
#: DBB's response columns (the contract's) plus where the row came from
DBB_COLUMNS = [*DBB.RESPONSE_COLUMNS, "source"]
#: GlobalBias' sentence columns (the contract's) plus the perplexity
GB_COLUMNS = [*GB.SENTENCE_COLUMNS, GB.PERPLEXITY]


def task_of_samples_file(path: str | Path) -> str | None:
    """The task name in an lm-eval samples file name (``samples_<task>_<timestamp>.jsonl``), else None."""
    name = Path(path).name
    if not (name.startswith("samples_") and name.endswith(".jsonl")):
        return None
    stem = name[len("samples_"):-len(".jsonl")]
    return stem.rsplit("_", 1)[0] if "_" in stem else stem


def read_samples_file(path: str | Path) -> list[dict[str, Any]]:
    """The JSON rows of one lm-eval samples file (``InputError`` naming the line on a bad row)."""
    path = Path(path)
    rows = []
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise InputError(f"{path}: line {ln}: not JSON ({e.msg})") from None
    return rows


def _float(x: Any) -> float:
    while isinstance(x, (list, tuple)):
        if not x:
            raise ValueError("empty response")
        x = x[0]
    return float(x)


def dbb_response(row: Mapping[str, Any], task: str, model: str = "") -> dict[str, Any]:
    """One DBB response record from one lm-eval sample row of ``dbb_mc`` or ``dbb_sg``."""
    if task not in DBB_TASKS:
        raise InputError(f"not a DBB lm-eval task: {task!r} (expected one of {sorted(DBB_TASKS)})")
    doc = row.get("doc") or {}
    missing = [k for k in DBB_DOC_KEYS if k not in doc]
    if missing or "p_a" not in row:
        raise InputError(f"lm-eval {task} sample {row.get('doc_id')}: missing field(s) "
                         f"{missing + ([] if 'p_a' in row else ['p_a'])}")
    a = _float(row["p_a"])
    valid = 1.0 if math.isfinite(a) else 0.0
    epoch = (1 if doc.get("a_first", True) else 2) if task == "dbb_mc" else 1
    return {"model": model, "variant": DBB_TASKS[task], "question_id": str(doc["question_id"]), "epoch": epoch,
            **{k: doc[k] for k in DBB_DOC_KEYS[1:]}, "a": a if valid else 0.0, "valid": valid,
            "refusal": valid < 0.5, "source": "lm-eval"}


def dbb_responses(rows: Iterable[Mapping[str, Any]], task: str, model: str = "") -> Any:
    """DataFrame of DBB responses (columns ``DBB_COLUMNS``) from lm-eval sample rows of one task."""
    import pandas as pd

    return pd.DataFrame([dbb_response(r, task, model) for r in rows], columns=DBB_COLUMNS)


def dbb_instances(records: Iterable[Mapping[str, Any]], expected_docs: int = 1) -> Any:
    """Test instances (S per pair of groups) of one model from records with ``DBB_DOC_KEYS`` and ``a``:
    ``stereoprobe.dbb.stats.question_table`` then ``instance_table``, as ``stereoprobe dbb`` computes them.

    A question with fewer than ``expected_docs`` docs (dbb_mc: 2, both option orders; a ``--limit`` can cut
    one off) is incomplete: its P(A) is undefined, so its instances have no S, as ``stereoprobe dbb`` does."""
    import pandas as pd

    from stereoprobe.dbb import stats as ST

    df = pd.DataFrame([{"model": "", **{k: r[k] for k in DBB_DOC_KEYS}, "a": float(r["a"]), "valid": 1.0}
                       for r in records])
    if df.empty:
        return pd.DataFrame(columns=["s"])
    q = ST.question_table(df)  # mean over the docs of a question (both option orders in dbb_mc)
    q.loc[q["n_responses"] < expected_docs, "p_a"] = float("nan")
    return ST.instance_table(q)


@lru_cache(maxsize=4)
def load_tokenizer(name: str) -> Any:
    """The Hugging Face tokenizer ``name`` (a hub id or a local folder), as the docs' ``tokenizer`` field names it."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def globalbias_sentence(doc: Mapping[str, Any], loglik: float, model: str = "", tokenizer: Any = None) -> dict:
    """One GlobalBias sentence row (``GB_COLUMNS``) from an lm-eval doc and its summed log-likelihood:
    perplexity per token when a tokenizer is given (or named by the doc's ``tokenizer``), else per byte."""
    from stereoprobe.globalbias.apx import byte_perplexity, token_perplexity

    text = doc["text"]
    tok = tokenizer if tokenizer is not None else (load_tokenizer(doc["tokenizer"]) if doc.get("tokenizer") else None)
    if tok is not None:
        ppl = float(token_perplexity(loglik, len(tok(text, add_special_tokens=False)["input_ids"])))
    else:
        ppl = float(byte_perplexity(loglik, len(text.encode("utf-8"))))
    return {"model": model, "group": doc["group"], "ethnicity": doc["ethnicity"], "gender": doc["gender"],
            "name": f"{doc['name_index']}:{doc['name']}", "descriptor": doc["descriptor"],
            "axis": doc.get("axis") or None, "target": doc.get("target") or None,
            "template": int(doc["template"]), "ppl": ppl}


def globalbias_flag_share(sentences: Any) -> float:
    """Share of (group, descriptor) pairs flagged by the reference rule (GlobalBias' headline), computed by
    ``stereoprobe.globalbias.apx.score_table`` as ``stereoprobe globalbias`` does; NaN when none is tested."""
    from stereoprobe.globalbias import apx as A

    import logging

    log = logging.getLogger(__name__)
    d = sentences.drop(columns=["model"], errors="ignore")
    if len(d) == 0 or d["group"].nunique() < 2:  # e.g. a small lm-eval --limit: one group, nothing to compare
        log.warning("GlobalBias flagged share: fewer than two name groups scored (a --limit?); reporting NaN")
        return float("nan")
    try:
        scores = A.score_table(d, value="ppl")
    except (ValueError, KeyError, ZeroDivisionError) as e:  # a partial selection the statistics cannot score
        log.warning("GlobalBias flagged share not computable on this selection (%s); reporting NaN. "
                    "Select groups/templates through --metadata rather than --limit.", e)
        return float("nan")
    flagged = scores["flagged"].dropna().astype(float)
    return float(flagged.mean()) if len(flagged) else float("nan")
