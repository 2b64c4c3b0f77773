"""Grouped likelihood requests of the ``transformers`` provider (protocol: :mod:`stereoprobe.likelihood`).

A grouped request (the texts of one inspect sample) is prepared on the event-loop thread while the worker
thread runs the model on earlier requests: the texts (and their contexts) are tokenized in one batch call of
the fast tokenizer, checked, and queued as **one** worker request with one future. The worker plans the texts
of each grouped request on their own (:mod:`.planning`), so a text's result does not depend on the requests
it happened to be queued with. The answer carries per-text sums only (no per-token data).
"""

from __future__ import annotations

import math
from typing import Any

from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ChatMessageUser, GenerateConfig, ModelOutput, ModelUsage

from stereoprobe.likelihood import N_TOKENS, RESULT_ERROR, RESULTS_KEY, SUM_LOGPROB
from stereoprobe.providers.scoring import TokenScores


def prepare_items(api: Any, items: list[dict[str, Any]], config: GenerateConfig
                  ) -> tuple[list[dict[str, Any]], list[int], list[int | None], list[str | None]]:
    """(payloads, their item positions, continuation token counts, per-item errors) of a grouped request."""
    n = len(items)
    errors: list[str | None] = [None] * n
    n_conts: list[int | None] = [None] * n
    texts = [str(it.get("text") or "") for it in items]
    with_ctx = [k for k, it in enumerate(items) if it.get("context")]
    if with_ctx:  # the context's tokens must be a prefix of the text's (both without special tokens)
        tok = api.tokenizer
        full = tok([texts[k] for k in with_ctx], add_special_tokens=False).input_ids
        ctx = tok([str(items[k]["context"]) for k in with_ctx], add_special_tokens=False).input_ids
        for k, f, c in zip(with_ctx, full, ctx):
            n_conts[k] = len(f) - len(c)
            if n_conts[k] <= 0 or list(f[: len(c)]) != list(c):
                errors[k] = "ValueError: the context's tokens are not a prefix of the text's tokens"
    payloads: list[dict[str, Any]] = []
    positions: list[int] = []
    if api.kind == "causal":
        ids_all = api.tokenizer(texts, add_special_tokens=True).input_ids
        prefix = api.prefix_token_id if api.score_first_token else None
        for k, ids in enumerate(ids_all):
            if errors[k] is not None:
                continue
            ids = list(ids)
            if prefix is not None and (not ids or ids[0] != prefix):
                ids.insert(0, int(prefix))
            try:
                api.check_length(len(ids), texts[k])
            except ValueError as ex:
                errors[k] = f"{type(ex).__name__}: {ex}"
                continue
            payloads.append({"ids": ids})
            positions.append(k)
        return payloads, positions, n_conts, errors
    for k, it in enumerate(items):  # masked and encoder-decoder models: the single-text path
        if errors[k] is not None:
            continue
        meta = {m: it[m] for m in ("encoder_text", "mlm_max_length") if it.get(m) is not None} or None
        try:
            request = api.score_request([ChatMessageUser(content=texts[k], metadata=meta)], config)
        except ValueError as ex:
            errors[k] = f"{type(ex).__name__}: {ex}"
            continue
        payloads.append(request.payload)
        positions.append(k)
    return payloads, positions, n_conts, errors


def results_output(model_name: str, n: int, positions: list[int], scores: list[TokenScores],
                   n_conts: list[int | None], errors: list[str | None]) -> ModelOutput:
    """The grouped answer: per-text sums, token counts and errors in ``metadata[RESULTS_KEY]``."""
    sums: list[float | None] = [None] * n
    counts: list[int | None] = [None] * n
    tokens = 0
    for k, sc in zip(positions, scores):
        n_cont = n_conts[k]
        if n_cont is not None and len(sc.logprobs) < n_cont:
            errors[k] = f"{len(sc.logprobs)} scored tokens, fewer than the continuation's {n_cont}"
            continue
        lps = sc.logprobs if n_cont is None else sc.logprobs[-n_cont:]
        total = float(sum(lps))
        if not lps or not math.isfinite(total):
            bad = [i for i, x in enumerate(lps) if not math.isfinite(x)]
            errors[k] = f"non-finite log-probability at token(s) {bad[:5]}" if bad else "no tokens to score"
            continue
        sums[k], counts[k] = total, len(lps)
        tokens += len(sc.logprobs) + 1
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content="", model=model_name, source="generate"), stop_reason="max_tokens")
    return ModelOutput(model=model_name, choices=[choice],
                       usage=ModelUsage(input_tokens=tokens, output_tokens=0, total_tokens=tokens),
                       metadata={RESULTS_KEY: {SUM_LOGPROB: sums, N_TOKENS: counts, RESULT_ERROR: errors}})
