"""Grouped likelihood requests through inspect's ``vllm-completions`` provider: many texts, one HTTP request.

vLLM's ``/v1/completions`` endpoint takes a list of prompts and answers one choice per prompt, in order, each
with its own ``prompt_logprobs`` (github.com/vllm-project/vllm, ``vllm/entrypoints/openai/serving_completion.py``).
inspect's provider sends a single prompt, but the request body can be extended with
``GenerateConfig.extra_body``, which the OpenAI client merges over the body: ``extra_body={"prompt": [...]}``
turns one ``generate()`` call into a request for a whole group of texts. That keeps inspect's per-call costs
(events, log entries) per group instead of per text, while vLLM batches the prompts on the GPU.

:func:`score_prompt_list` scores text items of the grouped likelihood protocol (:mod:`stereoprobe.likelihood`)
this way and returns, per item, its :class:`~stereoprobe.likelihood.TextResult` or ``None`` where the caller
should fall back to one request per text (a chunk the server refused or answered with the wrong number of
choices, an encoder-decoder item).

The requests are prefill-only (:func:`prefill_only`): a likelihood request needs the log-probability of each
prompt token and nothing else, so it asks vLLM for ``prompt_logprobs`` 0 (the prompt token's own log-probability,
no top alternatives: vLLM's ``SamplingParams``, ``vllm/sampling_params.py``; inspect's ``GenerateConfig`` accepts
1 to 20, so the 0 travels in ``extra_body``), ``max_tokens`` 1 (vLLM's minimum: the one token is sampled from the
prefill's last logits, no decode step runs) and no completion ``logprobs``. What was applied is in each request
the eval log records (the model call's ``extra_body`` and ``max_tokens``) and in the server's request log.
vLLM keeps prefix caching on by default but does not read the cache for a request with ``prompt_logprobs``
(``skip_reading_prefix_cache``: cached positions would have no logits), so every prompt is computed in full.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import GenerateConfig, Model

from stereoprobe.likelihood import TextResult, scored_part

CHUNK = 256
"""Texts per request."""


PREFILL_PROMPT_LOGPROBS = 0
"""vLLM's ``prompt_logprobs`` of a prefill-only request: the prompt token's log-probability only."""


def prefill_only(config: GenerateConfig) -> GenerateConfig:
    """``config`` as a prefill-only vLLM request when it asks for the prompt tokens' log-probabilities only
    (``prompt_logprobs`` 1, no completion ``logprobs``): ``prompt_logprobs`` 0 through ``extra_body``,
    ``max_tokens`` 1 unless set. A request that asks for more (top alternatives, completion log-probabilities)
    or sets ``prompt_logprobs`` in its own ``extra_body`` is returned unchanged."""
    extra = dict(config.extra_body or {})
    if config.prompt_logprobs != 1 or config.logprobs or config.top_logprobs or "prompt_logprobs" in extra:
        return config
    extra["prompt_logprobs"] = PREFILL_PROMPT_LOGPROBS
    return config.model_copy(update={"prompt_logprobs": None, "extra_body": extra,
                                     "max_tokens": 1 if config.max_tokens is None else config.max_tokens})


def keep_prefill_only(config: GenerateConfig) -> None:
    """In place, on the final configuration of a vLLM request (the hook of :mod:`.vllm_neutral`): inspect merges
    the task's ``prompt_logprobs`` 1 into a :func:`prefill_only` request, and would send it over the
    ``extra_body`` 0; a request carrying both (only :func:`prefill_only` makes one: inspect's configuration
    cannot say 0) drops the 1."""
    if config.prompt_logprobs == 1 and (config.extra_body or {}).get("prompt_logprobs") == PREFILL_PROMPT_LOGPROBS:
        config.prompt_logprobs = None


def supports_prompt_list(model: Model) -> bool:
    """True for inspect's ``vllm-completions`` provider (and subclasses)."""
    return any(c.__name__ == "VLLMCompletionsAPI" for c in type(model.api).__mro__)


async def _continuation_tokens(model: Model, item: Mapping[str, Any]) -> int | str | None:
    """Tokens of ``text`` after its ``context`` (None: no context), or the reason they cannot be isolated."""
    ctx = item.get("context")
    if not ctx:
        return None
    full, head = await asyncio.gather(model.api.tokenize(str(item["text"])), model.api.tokenize(str(ctx)))
    n = len(full) - len(head)
    if n <= 0 or list(full[: len(head)]) != list(head):
        return "the context's tokens are not a prefix of the text's tokens"
    return n


async def _chunk(model: Model, items: Sequence[Mapping[str, Any]], config: GenerateConfig) -> list[TextResult | None]:
    texts = [str(it["text"]) for it in items]
    conts = await asyncio.gather(*(_continuation_tokens(model, it) for it in items))
    config = prefill_only(config)
    extra = dict(config.extra_body or {})
    extra["prompt"] = texts
    try:
        out = await model.generate(texts[0], config=config.merge(GenerateConfig(extra_body=extra)))
    except Exception:  # noqa: BLE001 - e.g. one text longer than the context window: score these one by one
        return [None] * len(items)
    if out.error or len(out.choices) != len(items):
        return [None] * len(items)
    results: list[TextResult | None] = []
    for it, choice, n in zip(items, out.choices, conts):
        tid, n_bytes = str(it["id"]), len(scored_part(it).encode("utf-8"))

        def fail(reason: str, tid: str = tid, n_bytes: int = n_bytes) -> TextResult:
            return TextResult(id=tid, sum_logprob=None, n_tokens=None, n_bytes=n_bytes, error=reason)

        if isinstance(n, str):
            results.append(fail(n))
            continue
        plp = choice.prompt_logprobs
        if plp is None or not plp.content:
            results.append(fail("no prompt_logprobs returned"))
            continue
        lps = [x.logprob for x in plp.content]
        if n is not None:
            if len(lps) < n:
                results.append(fail(f"prompt_logprobs has {len(lps)} entries, fewer than the continuation's {n} tokens"))
                continue
            lps = lps[-n:]
        bad = [k for k, x in enumerate(lps) if x is None or not math.isfinite(x)]
        if bad:
            results.append(fail(f"non-finite log-probability at token(s) {bad[:5]}"))
            continue
        results.append(TextResult(id=tid, sum_logprob=float(sum(lps)), n_tokens=len(lps), n_bytes=n_bytes))
    return results


async def score_prompt_list(model: Model, items: Sequence[Mapping[str, Any]], config: GenerateConfig,
                            chunk: int = CHUNK) -> list[TextResult | None]:
    """Score text items with one ``/v1/completions`` request per ``chunk`` texts (see the module docstring);
    ``None`` marks items to score one by one (with :func:`prefill_only`'s request too). Per-text sums equal
    those of one request per text."""
    out: list[TextResult | None] = [None] * len(items)
    plain = [k for k, it in enumerate(items) if it.get("encoder_text") is None]
    parts = [plain[s : s + chunk] for s in range(0, len(plain), chunk)]
    done = await asyncio.gather(*(_chunk(model, [items[k] for k in part], config) for part in parts))
    for part, res in zip(parts, done):
        for k, r in zip(part, res):
            out[k] = r
    return out
