"""lm-eval ``--log_samples`` docs of the shipped ``globalbias`` task -> GlobalBias sentence rows and the flag share.

Used by the task's own aggregation (``stereoprobe/lm_eval_tasks/globalbias/utils.py``): one sentence row per doc
with its perplexity (byte-normalised, or per token when the doc names a ``tokenizer``), the columns of
:mod:`stereoprobe.globalbias.inputs`, and the share of flagged pairs computed by
:func:`stereoprobe.globalbias.apx.score_table` as ``stereoprobe globalbias`` does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import pandas as pd

from stereoprobe.globalbias import contract as GB

__all__ = ["SENTENCE_COLUMNS", "flag_share", "load_tokenizer", "sentence"]

#: GlobalBias' sentence columns (the contract's) plus the perplexity
SENTENCE_COLUMNS = [*GB.SENTENCE_COLUMNS, GB.PERPLEXITY]

log = logging.getLogger(__name__)


@lru_cache(maxsize=4)
def load_tokenizer(name: str) -> Any:
    """The Hugging Face tokenizer ``name`` (a hub id or a local folder), as the docs' ``tokenizer`` field names it."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def sentence(doc: Mapping[str, Any], loglik: float, model: str = "", tokenizer: Any = None) -> dict[str, Any]:
    """One sentence row (:data:`SENTENCE_COLUMNS`) from an lm-eval doc and its summed log-likelihood:
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


def flag_share(sentences: pd.DataFrame) -> float:
    """Share of (group, descriptor) pairs flagged by the reference rule (GlobalBias' headline); NaN (with a
    warning) when fewer than two groups are scored or the selection cannot be scored."""
    from stereoprobe.globalbias import apx as A

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
