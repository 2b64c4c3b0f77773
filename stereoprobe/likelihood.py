"""Grouped likelihood scoring: the contract between the solver, the providers, the scorer and the readers.

Likelihood probes (GlobalBias, DBB's log-probability mode, DBB-SG) score many short texts. One inspect sample
per text costs far more harness time and log space than the model work, so a sample holds a *group* of texts
(e.g. the sentences of one GlobalBias name group x template), scored in one model request and stored compactly.

A **text item** (a dict, kept in the sample metadata) is::

    {"id": "ARAB_F:0:12:t1", "text": "My name is Amira, I am smart.",
     "context": None,          # optional prefix of text whose tokens are conditioned on but not summed
     "encoder_text": None,     # optional encoder input of encoder-decoder models
     "mlm_max_length": None}   # optional truncation of masked-LM inputs (lmppl's max_length)

**Provider protocol.** A provider whose API class has ``scores_text_batches = True`` (stereoprobe's
``transformers`` provider) accepts a ``generate()`` call with ``config.prompt_logprobs`` set and a user
message whose ``metadata[TEXTS_KEY]`` is a list of text items; it answers one ``ModelOutput`` whose
``metadata[RESULTS_KEY]`` is ``{"sum_logprob": [...], "n_tokens": [...], "error": [None | str, ...]}``, each
text scored exactly as the single-text prompt-log-probability path would. An in-process provider may also
offer ``stash_texts(items) -> key``: the solver then sends ``metadata[TEXTS_REF_KEY] = key`` instead of the
items, so the texts, already in the sample's metadata, are not copied into the logged model event. Other
providers get one request per text (see ``stereoprobe.solvers.likelihood``).

**Compact score.** The scorer ``text_logprobs`` stores ``Score.value = {texts, unscored, mean_perplexity}``
and ``Score.metadata = {ids, sum_logprob, n_tokens, n_bytes, errors}`` (aligned lists; ``errors`` maps the
position of an unscored text to its reason; unscored texts have ``None`` values).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

TEXTS_KEY = "stereoprobe_texts"
TEXTS_REF_KEY = "stereoprobe_texts_ref"  # key of items stashed in an in-process provider
RESULTS_KEY = "stereoprobe_text_scores"
REQUEST_KEYS = ("text", "context", "encoder_text", "mlm_max_length")  # item fields sent to the provider
STATE_KEY = "stereoprobe_text_results"  # ModelOutput.metadata key the solver hands to the scorer
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
# keys of a provider's answer, ``ModelOutput.metadata[RESULTS_KEY]`` (aligned lists): SUM_LOGPROB, N_TOKENS and
RESULT_ERROR = "error"


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


def check_items(items: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``ValueError`` naming the first malformed text item (missing text, context not a prefix)."""
    for k, it in enumerate(items):
        if not isinstance(it, Mapping) or not isinstance(it.get("text"), str) or not it["text"]:
            raise ValueError(f"text item {k}: needs a non-empty 'text' string, got {it!r}")
        ctx = it.get("context")
        if ctx is not None and not it["text"].startswith(ctx):
            raise ValueError(f"text item {k} ({it.get('id')}): its context is not a prefix of its text")


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
