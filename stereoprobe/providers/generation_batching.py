"""Generation batching of the ``transformers`` provider: two faster routes for the requests that allow them.

:func:`fast_generate` is called first for every generation batch (requests sharing one batch key); it returns
``None`` when neither route applies, and the general path (:mod:`.generation`, padded ``model.generate``)
runs. Both routes give what the general path gives for the same request:

- **One greedy token** (``max_tokens=1``, temperature 0 or none: DBB's logprob-mode questions): a single forward
  pass over the right-padded prompts, the last prompt position's logits, argmax and (when asked) the
  log-probabilities and top log-probabilities of that one step (:mod:`.next_token`). No decoding loop, no left
  padding, and the prompts run in the scorer's canonical widths and, with ``-M batch_invariant``, in fixed
  micro-batch shapes (:mod:`.microbatch`), so a question's answer does not depend on the questions batched
  beside it. A grouped request (:mod:`.text_batches`: every question x option order of a DBB template in one
  call) also shares its prompts' common prefixes.
- **Continuous batching** (``-M continuous_batching``, default on for CUDA): transformers' own
  ``generate_batch`` (paged key/value cache; a finished sequence frees its slot for a waiting one instead of
  decoding padding until the longest is done), for plain greedy or sampled requests: one choice, no stop
  strings, penalties, logit bias, grammar, seed or per-token log-probabilities (those take the general path).
  A call that fails there falls back to the general path for that call only, and its outputs' settings
  record says why (:data:`CONTINUOUS_FALLBACK`).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)

from stereoprobe.errors import reason
from stereoprobe.providers.args import WorkerRequest
from stereoprobe.providers.next_token import NextTokens, next_token_logprobs
from stereoprobe.providers.protocol import TransformersProvider

__all__ = ["CONTINUOUS_FALLBACK", "fast_generate", "next_tokens", "one_token_logprobs"]

logger = logging.getLogger(__name__)
#: settings-record field of an output whose continuous-batching call failed and fell back to padded generation
CONTINUOUS_FALLBACK = "continuous_batching_fallback"
def _plain(s: dict[str, Any]) -> bool:
    """No setting that only the general path implements."""
    return (int(s["n"]) == 1 and not s["stop"] and s["schema"] is None and float(s["repetition_penalty"]) == 1.0
            and not s["frequency_penalty"] and not s["presence_penalty"] and not s["logit_bias"])


def fast_generate(api: TransformersProvider, reqs: list[WorkerRequest], config: Any = None,
                  metadata: dict[str, Any] | None = None, record: dict[str, Any] | None = None
                  ) -> list[ModelOutput] | None:
    """Outputs of ``reqs`` by the one-token or the continuous-batching route, or ``None`` (general path).
    ``config``: the batch's resolved ``GenerationConfig`` (continuous batching); ``metadata``: recorded in
    every output. A failed continuous-batching call falls back for this call only (the provider's setting
    stays): the reason goes into ``record`` (the outputs' settings record) under :data:`CONTINUOUS_FALLBACK`."""
    s = reqs[0].payload
    if api.kind != "causal" or not _plain(s):
        return None
    sampling = s["temperature"] is not None and s["temperature"] > 0  # none: greedy (providers.sampling)
    if int(s["max_new_tokens"]) == 1 and not sampling:
        return _one_token_outputs(api, reqs, metadata)
    if (api.continuous_batching and config is not None and not s["logprobs"]
            and s["seed"] is None and hasattr(api.model, "generate_batch")):
        try:
            return _continuous_outputs(api, reqs, config, metadata)
        except Exception as ex:  # noqa: BLE001 - a model or version it does not support: the general path
            why = reason(ex)[:300]
            if record is not None:
                record[CONTINUOUS_FALLBACK] = why
            logger.warning("transformers provider: continuous batching failed (%s); generating this batch with "
                           "padded batches", why)
    return None


def next_tokens(api: TransformersProvider, prompts: list[list[int]], top_k: int = 0,
                groups: list[Any] | None = None, prefix_sharing: bool = False) -> NextTokens:
    """:func:`.next_token.next_token_logprobs` with the provider's batch policy (``-M batch_size``,
    ``batch_tokens``, ``batch_invariant``). Causal models only (the route's eligibility, ``kind == "causal"``)."""
    if api.scorer is None:
        raise ValueError(f"transformers provider: the one-token route needs a causal model; {api.model_name} "
                         f"is {api.kind}")
    return next_token_logprobs(api.scorer, prompts, top_k, api.policy, groups, prefix_sharing)


def one_token_logprobs(api: TransformersProvider, got: NextTokens, b: int, top_k: int) -> Logprobs:
    """Prompt ``b``'s answer token as inspect's ``Logprobs`` (token texts decoded once per id)."""
    top = None
    if top_k:
        top = [TopLogprob(token=api.token_text(int(i)), logprob=float(v))
               for i, v in zip(got.top_ids[b], got.top_logprobs[b])]
    return Logprobs(content=[Logprob(token=api.token_text(int(got.tokens[b])), logprob=float(got.logprobs[b]),
                                     top_logprobs=top)])


def _output(api: TransformersProvider, req: WorkerRequest, gen: list[int], logprobs: Logprobs | None,
            metadata: dict[str, Any] | None) -> ModelOutput:
    """One request's output, as the general path builds it: generation cut at the first stop token."""
    stop_ids = set(api.stop_ids())
    stop_reason = "max_tokens"
    cut = next((j for j, t in enumerate(gen) if t in stop_ids), None)
    if cut is not None:
        gen, stop_reason = gen[:cut], "stop"
        if logprobs is not None:
            logprobs = Logprobs(content=logprobs.content[:cut])
    text = api.tokenizer.decode(gen, skip_special_tokens=True)
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content=text, model=api.model_name, source="generate"),
                                  stop_reason=stop_reason, logprobs=logprobs)
    n_in = len(req.payload["ids"])
    usage = ModelUsage(input_tokens=n_in, output_tokens=len(gen), total_tokens=n_in + len(gen))
    return ModelOutput(model=api.model_name, choices=[choice], usage=usage,
                       metadata=dict(metadata) if metadata is not None else None)


def _one_token_outputs(api: TransformersProvider, reqs: list[WorkerRequest], metadata: dict[str, Any] | None
                       ) -> list[ModelOutput]:
    s = reqs[0].payload
    k = int(s["top_logprobs"] or 0) if s["logprobs"] else 0
    got = next_tokens(api, [list(r.payload["ids"]) for r in reqs], k, groups=list(range(len(reqs))))
    return [_output(api, req, [int(got.tokens[b])], one_token_logprobs(api, got, b, k) if s["logprobs"] else None,
                    metadata) for b, req in enumerate(reqs)]


def _continuous_outputs(api: TransformersProvider, reqs: list[WorkerRequest], config: Any,
                        metadata: dict[str, Any] | None) -> list[ModelOutput]:
    gen_config = copy.deepcopy(config)
    gen_config.return_dict_in_generate = False
    gen_config.output_logits = False
    gen_config.num_return_sequences = 1
    for name, neutral in (("min_p", 0.0), ("epsilon_cutoff", 0.0), ("eta_cutoff", 0.0)):
        if getattr(gen_config, name, None) == neutral:  # the same distribution without a no-op warper, which
            setattr(gen_config, name, None)             # continuous batching would run on every step
    prompts = [list(r.payload["ids"]) for r in reqs]
    results = list(api.model.generate_batch(inputs=prompts, generation_config=gen_config, progress_bar=False,
                                            warmup=False).values())
    if len(results) != len(prompts) or any(getattr(r, "error", None) for r in results):
        errors = [str(r.error) for r in results if getattr(r, "error", None)]
        raise RuntimeError(f"transformers continuous batching returned {len(results)} of {len(prompts)} results"
                           + (f": {errors[0]}" if errors else ""))
    return [_output(api, req, list(res.generated_tokens), None, metadata) for req, res in zip(reqs, results)]
