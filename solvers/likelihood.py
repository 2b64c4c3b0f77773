"""Grouped likelihood solver: score a sample's texts in one model request (contract:
:mod:`stereoprobe.likelihood`).

``score_texts()`` reads the text items of ``state.metadata["texts"]`` and puts the per-text results in
``state.output.metadata[STATE_KEY]`` (compact columns) for the scorer ``text_logprobs``. A provider that declares
``scores_text_batches`` (stereoprobe's ``transformers``) receives them all in one ``generate()`` call and
batches them on the device; inspect's ``vllm-completions`` gets the texts as prompt lists, a chunk per
``/v1/completions`` request (:mod:`stereoprobe.providers.vllm_batch`); any other provider that returns prompt
log-probabilities gets one request per text, concurrently, the way the per-text tasks did.

Before its first paid call a run sends one probe request (:mod:`stereoprobe.solvers.capability`, once per model
and run, usually when the task is built) and stops with :class:`~stereoprobe.likelihood.LogprobsUnavailable`
when the model returns no prompt log-probabilities; a group whose every text comes back without them (a server
that passed the probe) stops the run with :class:`~stereoprobe.likelihood.MalformedReply`, one line naming the
task, the sample and the field, instead of recording one error per text.

Deterministic per-text failures (a text longer than the context window, no prompt log-probabilities, a
non-finite value, a context that does not tokenize as a prefix) are recorded for that text and the others
are scored; any other error fails the sample, so ``inspect eval-retry`` scores it again.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import anyio

from inspect_ai.model import ChatMessageUser, GenerateConfig, Model, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.errors import reason
from stereoprobe.solvers.capability import PROBE_TEXT, check_logprobs, require_logprobs_setup
from stereoprobe.likelihood import (
    NO_PROMPT_LOGPROBS,
    N_TOKENS,
    REQUEST_KEYS,
    RESULT_ERROR,
    RESULTS_KEY,
    STATE_KEY,
    SUM_LOGPROB,
    TEXTS_KEY,
    TEXTS_REF_KEY,
    TEXTS_METADATA,
    TextResult,
    UNREADABLE_REPLY,
    check_items,
    malformed_reply,
    unreadable_reply,
    encode_results,
    scored_part,
)

SCORING_CONFIG = GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0)


T = TypeVar("T")


async def all_at_once(jobs: Iterable[Awaitable[T]]) -> list[T]:
    """Every job's result, in order, the jobs run at once; the first exception cancels the others and is
    raised itself. ``asyncio.gather`` would leave them running (and sending requests) after their sample
    ended, a malformed reply stopping it (:class:`~stereoprobe.likelihood.MalformedReply`)."""
    todo = list(jobs)
    results: list[Any] = [None] * len(todo)

    async def run(k: int, job: Awaitable[T]) -> None:
        results[k] = await job

    try:
        async with anyio.create_task_group() as group:
            for k, job in enumerate(todo):
                group.start_soon(run, k, job)
    except BaseExceptionGroup as raised:
        first = raised
        while isinstance(first, BaseExceptionGroup):
            first = next((e for e in first.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())),
                         first.exceptions[0])
        raise first from None
    return results


def _request_item(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in REQUEST_KEYS if item.get(k) is not None}


def _n_bytes(item: Mapping[str, Any]) -> int:
    return len(scored_part(item).encode("utf-8"))


def _sum(lps: Sequence[float | None]) -> tuple[float | None, str | None]:
    bad = [i for i, x in enumerate(lps) if x is None or not math.isfinite(x)]
    if bad:
        return None, f"non-finite log-probability at token(s) {bad[:5]}"
    return float(sum(lps)), None  # type: ignore[arg-type]


async def _score_batch(model: Model, items: Sequence[Mapping[str, Any]], config: GenerateConfig) -> list[TextResult]:
    request = [_request_item(it) for it in items]
    stash = getattr(model.api, "stash_texts", None)  # in process: hand the texts over, log only a reference
    meta = {TEXTS_REF_KEY: stash(request)} if callable(stash) else {TEXTS_KEY: request}
    message = ChatMessageUser(content=f"{len(items)} texts to score (the sample's metadata)", metadata=meta)
    out = await model.generate([message], config=config)
    res = (out.metadata or {}).get(RESULTS_KEY)
    if not isinstance(res, Mapping) or len(res.get(SUM_LOGPROB, ())) != len(items):
        raise RuntimeError(f"model {model} answered a batch of {len(items)} texts without per-text results "
                           f"({out.error or 'no ' + RESULTS_KEY + ' in the output metadata'})")
    out_list = []
    for k, it in enumerate(items):
        err = res[RESULT_ERROR][k]
        lp, nt = res[SUM_LOGPROB][k], res[N_TOKENS][k]
        if err is None and (lp is None or not math.isfinite(lp) or not nt):
            err = "no finite log-probability returned"
        out_list.append(TextResult(id=str(it["id"]), sum_logprob=None if err else float(lp),
                                   n_tokens=None if err else int(nt), n_bytes=_n_bytes(it), error=err))
    return out_list


async def _score_one(model: Model, item: Mapping[str, Any], config: GenerateConfig) -> TextResult:
    text, ctx, tid = str(item["text"]), item.get("context"), str(item["id"])

    def fail(reason: str) -> TextResult:
        return TextResult(id=tid, sum_logprob=None, n_tokens=None, n_bytes=_n_bytes(item), error=reason)

    try:
        n_cont = None
        if ctx:
            ids_full, ids_ctx = await asyncio.gather(model.api.tokenize(text), model.api.tokenize(ctx))
            n_cont = len(ids_full) - len(ids_ctx)
            if n_cont <= 0 or list(ids_full[: len(ids_ctx)]) != list(ids_ctx):
                return fail("the context's tokens are not a prefix of the text's tokens")
    except (ValueError, TypeError) as ex:  # deterministic: this text cannot be scored by this model
        return fail(reason(ex))
    meta = {k: item[k] for k in ("encoder_text", "mlm_max_length") if item.get(k) is not None} or None
    try:
        out: ModelOutput = await model.generate([ChatMessageUser(content=text, metadata=meta)], config=config)
    except ValueError as ex:  # deterministic: this text cannot be scored by this model (e.g. too long)
        return fail(reason(ex))
    except UNREADABLE_REPLY as ex:  # a reply the provider could not read: the run stops (MalformedReply)
        raise unreadable_reply(model, ex) from ex
    choice = out.choices[0] if out.choices else None
    plp = choice.prompt_logprobs if choice is not None else None
    if plp is None or not plp.content:
        return fail(out.error or NO_PROMPT_LOGPROBS)
    lps = [lp.logprob for lp in plp.content]
    if n_cont is not None:
        if len(lps) < n_cont:
            return fail(f"prompt_logprobs has {len(lps)} entries, fewer than the continuation's {n_cont} tokens")
        lps = lps[-n_cont:]
    total, err = _sum(lps)
    if err:
        return fail(err)
    return TextResult(id=tid, sum_logprob=total, n_tokens=len(lps), n_bytes=_n_bytes(item))


async def check_prompt_logprobs(model: Model | None = None) -> None:
    """Once per model and run: :func:`stereoprobe.solvers.capability.check_logprobs` for prompt
    log-probabilities (:class:`LogprobsUnavailable`, which stops the run, when the one probe request gets none;
    providers that score text batches are not probed)."""
    await check_logprobs(model, "prompt")


def _stop_if_none_scored(model: Model, results: Sequence[TextResult]) -> None:
    """A group whose every text came back without prompt log-probabilities stops the run: the model does not
    return them, and every further request would be paid for nothing."""
    if results and all(r.error == NO_PROMPT_LOGPROBS for r in results):
        raise malformed_reply(model, f"prompt_logprobs (none for the {len(results)} texts of a group)")


async def score_items(items: Sequence[Mapping[str, Any]], model: Model | None = None,
                      config: GenerateConfig = SCORING_CONFIG) -> list[TextResult]:
    """Score text items (see :mod:`stereoprobe.likelihood`) with ``model`` (default: the task's model): one
    request for a provider with ``scores_text_batches``, else one request per text, after the model's one
    probe request (:func:`check_prompt_logprobs`)."""
    check_items(items)
    if not items:
        return []
    model = model or get_model()
    await check_prompt_logprobs(model)
    results = await _score_all(model, items, config)
    _stop_if_none_scored(model, results)
    return results


async def _score_all(model: Model, items: Sequence[Mapping[str, Any]], config: GenerateConfig) -> list[TextResult]:
    if getattr(model.api, "scores_text_batches", False):
        return await _score_batch(model, items, config)
    from stereoprobe.providers.vllm_batch import prefill_only, score_prompt_list, supports_prompt_list

    if supports_prompt_list(model):  # vllm-completions: a prompt list per request (chunks of texts)
        got = await score_prompt_list(model, items, config)  # None = score that item on its own
        todo = [k for k, r in enumerate(got) if r is None]
        one = prefill_only(config)
        for k, r in zip(todo, await all_at_once(_score_one(model, items[k], one) for k in todo)):
            got[k] = r
        return got  # type: ignore[return-value]
    return await all_at_once(_score_one(model, it, config) for it in items)


@solver
def score_texts(texts_key: str = TEXTS_METADATA) -> Solver:
    """Score the text items of ``state.metadata[texts_key]``; results in ``state.output.metadata[STATE_KEY]``
    (the compact columns of :func:`stereoprobe.likelihood.encode_results`), read by the ``text_logprobs`` scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        results = await score_items(state.metadata[texts_key], model)
        state.output = ModelOutput(model=str(model), choices=[],
                                   metadata={STATE_KEY: encode_results(results)[1]})
        state.completed = True
        return state

    return solve


def require_prompt_logprobs() -> Solver:
    """A task's setup step: the model's one probe request (:func:`check_prompt_logprobs`) before the sample's
    first paid call."""
    return require_logprobs_setup("prompt")
