"""The compact score of grouped likelihood scoring, as the eval log stores it: its keys, one text's result
(:class:`TextResult`), the encoder the scorer uses and the reader the post-processing steps use.

The contract as a whole is :mod:`stereoprobe.likelihood` (which re-exports everything here); this part imports
no inspect, so that reading logs (``stereoprobe globalbias``, ``dbb``) does not pay for inspect's import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SCORER = "text_logprobs"
TEXTS_METADATA = "texts"  # sample metadata key of the text items (default of the solver)
N_TEXTS_METADATA = "n_texts"  # sample metadata key: number of texts in the sample

# Score.value keys
VALUE_TEXTS = "texts"
VALUE_UNSCORED = "unscored"
VALUE_MEAN_PPL = "mean_perplexity"
# Score.metadata keys (aligned lists, plus the errors mapping)
IDS = "ids"
SUM_LOGPROB = "sum_logprob"
N_TOKENS = "n_tokens"
N_BYTES = "n_bytes"
ERRORS = "errors"


@dataclass(frozen=True)
class TextResult:
    """One scored text: summed natural-log probability of its scored tokens, their count, the UTF-8 bytes of
    the scored part (the text after its context), or the reason it was not scored."""

    id: str
    sum_logprob: float | None
    n_tokens: int | None
    n_bytes: int
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.sum_logprob is not None and bool(self.n_tokens)

    @property
    def perplexity(self) -> float:
        """Token perplexity ``exp(-sum_logprob / n_tokens)`` (NaN when unscored)."""
        if not self.ok:
            return float("nan")
        return math.exp(-float(self.sum_logprob) / int(self.n_tokens))  # type: ignore[arg-type]


def scored_part(item: Mapping[str, Any]) -> str:
    """The part of a text item whose tokens are summed (the text after its context)."""
    text = str(item["text"])
    ctx = item.get("context")
    return text[len(ctx):] if ctx else text


def encode_results(results: Sequence[TextResult]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Score.value, Score.metadata) of the compact score format for a group's results."""
    ok = [r for r in results if r.ok]
    ppl = [r.perplexity for r in ok]
    value = {
        VALUE_TEXTS: float(len(results)),
        VALUE_UNSCORED: float(len(results) - len(ok)),
        VALUE_MEAN_PPL: sum(ppl) / len(ppl) if ppl else float("nan"),
    }
    meta = {
        IDS: [r.id for r in results],
        SUM_LOGPROB: [r.sum_logprob if r.ok else None for r in results],
        N_TOKENS: [r.n_tokens if r.ok else None for r in results],
        N_BYTES: [r.n_bytes for r in results],
        ERRORS: {str(k): r.error or "not scored" for k, r in enumerate(results) if not r.ok},
    }
    return value, meta


def read_results(score: Mapping[str, Any] | None) -> list[TextResult]:
    """Per-text results of one sample's ``text_logprobs`` score, given as the plain dict of a log sample
    (``sample["scores"][SCORER]``) or an object with ``metadata``. Empty for a missing score."""
    if score is None:
        return []
    meta = score.get("metadata") if isinstance(score, Mapping) else getattr(score, "metadata", None)
    if not isinstance(meta, Mapping) or IDS not in meta:
        return []
    errors = meta.get(ERRORS) or {}
    out = []
    for k, tid in enumerate(meta[IDS]):
        err = errors.get(str(k))
        lp, nt = meta[SUM_LOGPROB][k], meta[N_TOKENS][k]
        out.append(TextResult(id=str(tid), sum_logprob=None if lp is None else float(lp),
                              n_tokens=None if nt is None else int(nt), n_bytes=int(meta[N_BYTES][k]),
                              error=err if err is not None or (lp is not None and nt) else "not scored"))
    return out
