"""Grouped likelihood requests of the ``transformers`` provider (protocol: :mod:`stereoprobe.likelihood`).

A grouped request (the texts of one inspect sample) is prepared on the event-loop thread while the worker
thread runs the model on earlier requests: the texts (and their contexts) are tokenized in one batch call of
the fast tokenizer (its backend's ids alone, :mod:`.token_ids`), checked, and queued as **one** worker request
with one future. The worker plans the texts of each grouped request on their own (:mod:`.planning`), so a
text's result does not depend on the requests it happened to be queued with. The answer carries per-text sums
only (no per-token data).

A grouped **one-token** request (DBB's logprob mode: every question x option order of a template) carries
conversations instead of texts: each is rendered and checked as a single chat request would be
(:meth:`TransformersAPI.generate_request`), all go to the worker as one request, and the next token of every
prompt is computed in one plan in which the prompts of the request share their common prefixes (chat header,
system message, instruction; :mod:`.next_token`). The answer holds, per conversation, the answer token and
its top log-probabilities, as the single-request route returns them.
"""

from __future__ import annotations

import math
from typing import Any

from inspect_ai.model import (ChatCompletionChoice, ChatMessage, ChatMessageAssistant, ChatMessageSystem,
                              ChatMessageUser, GenerateConfig, Logprob, Logprobs, ModelOutput, ModelUsage,
                              TopLogprob)

from stereoprobe.errors import reason
from stereoprobe.likelihood import (ANSWER_LOGPROBS, N_TOKENS, RESULT_ERROR, RESULTS_KEY, SUM_LOGPROB,
                                    is_one_token_request)
from stereoprobe.providers.args import WorkerRequest
from stereoprobe.providers.generation import generation_call
from stereoprobe.providers.generation_batching import next_tokens
from stereoprobe.providers.graphs import CUDA_GRAPHS_KEY
from stereoprobe.providers.protocol import TransformersProvider
from stereoprobe.providers.sampling import EFFECTIVE_SETTINGS_KEY, settings_record
from stereoprobe.providers.scoring import TokenScores
from stereoprobe.providers.token_ids import encode_ids


def prepare_items(api: TransformersProvider, items: list[dict[str, Any]], config: GenerateConfig
                  ) -> tuple[list[dict[str, Any]], list[int], list[int | None], list[str | None]]:
    """(payloads, their item positions, continuation token counts, per-item errors) of a grouped request."""
    n = len(items)
    errors: list[str | None] = [None] * n
    n_conts: list[int | None] = [None] * n
    texts = [str(it.get("text") or "") for it in items]
    with_ctx = [k for k, it in enumerate(items) if it.get("context")]
    if with_ctx:  # the context's tokens must be a prefix of the text's (both without special tokens)
        full = encode_ids(api.tokenizer, [texts[k] for k in with_ctx], add_special_tokens=False)
        ctx = encode_ids(api.tokenizer, [str(items[k]["context"]) for k in with_ctx], add_special_tokens=False)
        for k, f, c in zip(with_ctx, full, ctx):
            n_conts[k] = len(f) - len(c)
            if n_conts[k] <= 0 or f[: len(c)] != c:
                errors[k] = "ValueError: the context's tokens are not a prefix of the text's tokens"
    payloads: list[dict[str, Any]] = []
    positions: list[int] = []
    if api.kind == "causal":
        ids_all = encode_ids(api.tokenizer, texts, add_special_tokens=True)
        prefix = api.prefix_token_id if api.score_first_token else None
        for k, ids in enumerate(ids_all):
            if errors[k] is not None:
                continue
            if prefix is not None and (not ids or ids[0] != prefix):
                ids.insert(0, int(prefix))
            try:
                api.check_length(len(ids), texts[k])
            except ValueError as ex:
                errors[k] = reason(ex)
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
            errors[k] = reason(ex)
            continue
        payloads.append(request.payload)
        positions.append(k)
    return payloads, positions, n_conts, errors


def results_output(model_name: str, n: int, positions: list[int], scores: list[TokenScores],
                   n_conts: list[int | None], errors: list[str | None], graphs: str | None = None) -> ModelOutput:
    """The grouped answer: per-text sums, token counts and errors in ``metadata[RESULTS_KEY]``; ``graphs``: the
    CUDA-graph status (:mod:`.graphs`), recorded in the settings metadata."""
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
                       metadata={RESULTS_KEY: {SUM_LOGPROB: sums, N_TOKENS: counts, RESULT_ERROR: errors},
                                 **({EFFECTIVE_SETTINGS_KEY: {CUDA_GRAPHS_KEY: graphs}} if graphs else {})})


def _conversation(item: Any, k: int) -> list[ChatMessage]:
    messages = item.get("messages") if isinstance(item, dict) else None
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"transformers provider: prompt item {k} needs a non-empty 'messages' list")
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}
    out: list[ChatMessage] = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in kinds or not isinstance(m.get("content"), str):
            raise ValueError(f"transformers provider: prompt item {k}: each message needs role system or user "
                             f"and a content string, got {m!r}"[:300])
        out.append(kinds[m["role"]](content=m["content"]))
    return out


def prepare_prompts(api: TransformersProvider, items: list[Any], config: GenerateConfig
                    ) -> tuple[WorkerRequest | None, list[int], list[str | None], dict[str, Any] | None]:
    """(the worker request, its item positions, per-item errors, the settings record) of a grouped one-token
    request. Only the one-token greedy route is grouped: any other setting is refused in one line."""
    if not is_one_token_request(config):
        raise ValueError("transformers provider: a grouped prompt request asks for one greedy token with "
                         "logprobs (max_tokens=1, temperature 0, logprobs=True) and nothing else")
    errors: list[str | None] = [None] * len(items)
    payloads: list[dict[str, Any]] = []
    positions: list[int] = []
    first: WorkerRequest | None = None
    for k, item in enumerate(items):
        messages = _conversation(item, k)  # malformed: the whole request is refused
        try:
            request = api.generate_request(messages, config)
        except ValueError as ex:  # too long for the context window: this prompt only
            errors[k] = reason(ex)
            continue
        first = first or request
        payloads.append(request.payload)
        positions.append(k)
    if first is None:
        return None, positions, errors, None
    record = settings_record(generation_call(api, [first], False)[0], first.payload)
    top_k = int(config.top_logprobs or 0)
    return WorkerRequest("answer", ("answer", top_k), {"batch": payloads}), positions, errors, record


def run_answers(api: TransformersProvider, reqs: list[WorkerRequest]) -> list[list[list[list[Any]]]]:
    """The worker's part: the next token of every prompt of ``reqs`` in one plan (each request its own planning
    group, prefixes shared within it with ``-M prefix_sharing``); per request, per prompt, the answer's
    ``[token, logprob]`` then the top ``[token, logprob]`` pairs (empty when the answer is a stop token: the
    single-request route cuts it, as generation stops there)."""
    prompts = [list(p["ids"]) for r in reqs for p in r.payload["batch"]]
    groups = [n for n, r in enumerate(reqs) for _ in r.payload["batch"]]
    top_k = int(reqs[0].key[1])
    got = next_tokens(api, prompts, top_k, groups, api.prefix_sharing)
    stop = set(api.stop_ids())
    pairs = [[] if got.tokens[b] in stop else
             [[api.token_text(int(got.tokens[b])), float(got.logprobs[b])]]
             + [[api.token_text(int(i)), float(v)] for i, v in zip(got.top_ids[b], got.top_logprobs[b])]
             for b in range(len(prompts))]
    out, cursor = [], 0
    for r in reqs:
        n = len(r.payload["batch"])
        out.append(pairs[cursor : cursor + n])
        cursor += n
    return out


def answers_output(api: TransformersProvider, n: int, positions: list[int], answers: list[list[list[Any]]],
                   errors: list[str | None], record: dict[str, Any] | None, input_tokens: int) -> ModelOutput:
    """The grouped one-token answer: per-item pairs and errors in ``metadata[RESULTS_KEY]``, the settings record
    as every generation output carries it."""
    per: list[list[list[Any]] | None] = [None] * n
    for k, a in zip(positions, answers):
        per[k] = a
    choice = ChatCompletionChoice(
        message=ChatMessageAssistant(content="", model=api.model_name, source="generate"), stop_reason="max_tokens")
    metadata: dict[str, Any] = {RESULTS_KEY: {ANSWER_LOGPROBS: per, RESULT_ERROR: errors}}
    if record is not None:
        graphs = api.scorer.graphs_status if api.scorer is not None else None
        metadata[EFFECTIVE_SETTINGS_KEY] = {**record, CUDA_GRAPHS_KEY: graphs}
    return ModelOutput(model=api.model_name, choices=[choice], metadata=metadata,
                       usage=ModelUsage(input_tokens=input_tokens, output_tokens=len(positions),
                                        total_tokens=input_tokens + len(positions)))


def score_texts(api: TransformersProvider, texts: list[str], group: bool = False) -> list[TokenScores]:
    """:meth:`TransformersAPI.score_texts`: prompt log-probabilities of raw texts, as ``generate(prompt_logprobs=1)``
    computes them (``group``: as one grouped request, whose texts share prefixes among themselves only)."""
    config = GenerateConfig(prompt_logprobs=1)
    if group and api.kind == "causal":
        payloads, _, _, errors = prepare_items(api, [{"text": t} for t in texts], config)
        if any(errors):
            raise ValueError(next(e for e in errors if e))
        return api.score_ids(payloads, groups=[0] * len(payloads))
    reqs = [api.score_request([ChatMessageUser(content=t)], config) for t in texts]
    return api.score_ids([r.payload for r in reqs])


def to_logprobs(api: TransformersProvider, scores: TokenScores) -> Logprobs:
    """A single text's prompt log-probabilities as inspect's ``Logprobs`` (token texts decoded once per id)."""
    content = []
    for k, (t, lp) in enumerate(zip(scores.targets, scores.logprobs)):
        top = None
        if scores.top is not None:
            top = [TopLogprob(token=api.token_text(i), logprob=v) for i, v in scores.top[k]]
        content.append(Logprob(token=api.token_text(int(t)), logprob=lp, top_logprobs=top))
    return Logprobs(content=content)
