"""Generation batching of the ``transformers`` provider: two faster routes for the requests that allow them.

:func:`fast_generate` is called first for every generation batch (requests sharing one batch key); it returns
``None`` when neither route applies, and the general path (:mod:`.generation`, padded ``model.generate``)
runs. Both routes give what the general path gives for the same request:

- **One greedy token** (``max_tokens=1``, temperature 0 or none: DBB's logprob-mode questions): a single forward
  pass over the right-padded prompts, the last prompt position's logits, argmax and (when asked) the
  log-probabilities and top log-probabilities of that one step. No decoding loop, no left padding, and the
  prompts run in the scorer's canonical widths and, with ``-M batch_invariant``, in fixed micro-batch shapes
  (:mod:`.microbatch`), so a question's answer does not depend on the questions batched beside it.
- **Continuous batching** (``-M continuous_batching``, default on for CUDA): transformers' own
  ``generate_batch`` (paged key/value cache; a finished sequence frees its slot for a waiting one instead of
  decoding padding until the longest is done), for plain greedy or sampled requests: one choice, no stop
  strings, penalties, logit bias, grammar, seed or per-token log-probabilities (those take the general path).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import torch
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)

from stereoprobe.providers.planning import bucket_width

__all__ = ["GATHER_TICK", "fast_generate", "gather_window", "next_token_logprobs"]

logger = logging.getLogger(__name__)
MIN_ROWS = 16  # as the scorer: every product has at least this many rows (row-independent CPU kernels)
GATHER_TICK = 0.003  # seconds between two looks at the queue while gathering a batch


def gather_window(queue: list[Any]) -> tuple[float, float]:
    """(settle, limit) seconds the worker waits for concurrent samples to join a batch: it takes the queue once
    no request arrived for ``settle`` seconds, or after ``limit``. Scoring: one tick, at most 20 ms (a forward
    pass is short, and the next round picks up late arrivals). Multi-token generation: 50 ms of quiet, at most
    0.5 s, since a request that misses the batch waits for the whole generation (seconds) before it starts;
    inspect's concurrent samples reach the provider over tens of milliseconds."""
    if queue and queue[0].kind == "generate" and int(queue[0].payload.get("max_new_tokens", 1)) > 1:
        return 0.05, 0.5
    return GATHER_TICK, 0.02


def _plain(s: dict[str, Any]) -> bool:
    """No setting that only the general path implements."""
    return (int(s["n"]) == 1 and not s["stop"] and s["schema"] is None and float(s["repetition_penalty"]) == 1.0
            and not s["frequency_penalty"] and not s["presence_penalty"] and not s["logit_bias"])


def fast_generate(api: Any, reqs: list[Any], config: Any = None,
                  metadata: dict[str, Any] | None = None) -> list[ModelOutput] | None:
    """Outputs of ``reqs`` by the one-token or the continuous-batching route, or ``None`` (general path).
    ``config``: the batch's resolved ``GenerationConfig`` (continuous batching); ``metadata``: recorded in
    every output."""
    s = reqs[0].payload
    if api.kind != "causal" or not _plain(s):
        return None
    sampling = s["temperature"] is not None and s["temperature"] > 0  # none: greedy (providers.sampling)
    if int(s["max_new_tokens"]) == 1 and not sampling:
        return _one_token_outputs(api, reqs, metadata)
    if (getattr(api, "continuous_batching", False) and config is not None and not s["logprobs"]
            and s["seed"] is None and hasattr(api.model, "generate_batch")):
        try:
            return _continuous_outputs(api, reqs, config, metadata)
        except Exception as ex:  # noqa: BLE001 - a model or version it does not support: the general path
            api.continuous_batching = False
            logger.warning("transformers provider: continuous batching failed (%s: %s); generating with padded "
                           "batches from now on", type(ex).__name__, ex)
    return None


@torch.inference_mode()
def next_token_logprobs(api: Any, prompts: list[list[int]], top_k: int = 0
                        ) -> tuple[list[int], list[float], list[list[int]], list[list[float]]]:
    """The most likely next token after each prompt, its float32 log-probability, and the ``top_k`` most likely
    tokens with theirs (prompt order; one transfer to the host for all prompts).

    Prompts are grouped by canonical width, right-padded (a causal model never attends to padding after the
    last real token), and run ``rows`` at a time: the fixed micro-batch rows of ``api.shape`` when set, else
    all prompts of a width (at least ``MIN_ROWS`` tokens per forward, copies of the first prompt)."""
    scorer, shape = api.scorer, getattr(api, "shape", None)
    by_width: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_width.setdefault(bucket_width(len(p)), []).append(i)
    order: list[int] = []
    best, best_lp, top_i, top_v = [], [], [], []
    for width, members in sorted(by_width.items(), reverse=True):
        rows = shape.rows(0, width) if shape is not None else max(len(members), -(-MIN_ROWS // width))
        for start in range(0, len(members), rows):
            part = members[start : start + rows]
            batch = [prompts[i] for i in part]
            batch += [batch[0]] * (rows - len(batch))
            ids = scorer._to_device([list(p) + [api.pad_id] * (width - len(p)) for p in batch])
            hidden, _ = scorer._forward(ids)
            last = scorer._to_device([len(p) - 1 for p in batch])
            rows_last = hidden[torch.arange(len(batch), device=hidden.device), last]
            logp = _project_logprobs(scorer, rows_last, shape.project_rows if shape is not None else 0)[: len(part)]
            token = logp.argmax(dim=-1)
            best.append(token)
            best_lp.append(logp.gather(1, token[:, None])[:, 0])
            if top_k:
                top = logp.topk(top_k, dim=-1)
                top_i.append(top.indices)
                top_v.append(top.values)
            order += part
    position = {i: k for k, i in enumerate(order)}
    back = [position[i] for i in range(len(prompts))]
    tokens = torch.cat(best).tolist() if best else []  # the synchronisation: every batch has been launched
    lps = torch.cat(best_lp).tolist() if best_lp else []
    idx = torch.cat(top_i).tolist() if top_i else [[] for _ in order]
    vals = torch.cat(top_v).tolist() if top_v else [[] for _ in order]
    return ([tokens[k] for k in back], [lps[k] for k in back], [idx[k] for k in back], [vals[k] for k in back])


def _project_logprobs(scorer: Any, rows: torch.Tensor, slice_rows: int) -> torch.Tensor:
    """Log-softmax (float32) of the projected rows, in products of ``slice_rows`` rows (fixed shapes) or of
    at least ``MIN_ROWS`` rows."""
    n = rows.shape[0]
    size = slice_rows or max(n, MIN_ROWS)
    padded = -(-n // size) * size
    if padded > n:
        rows = torch.cat([rows, rows.new_zeros((padded - n, *rows.shape[1:]))])
    parts = [torch.log_softmax(scorer._project(rows[s : s + size]).float(), dim=-1) for s in range(0, padded, size)]
    return torch.cat(parts)[:n]


def _output(api: Any, req: Any, gen: list[int], logprobs: Logprobs | None,
            metadata: dict[str, Any] | None) -> ModelOutput:
    """One request's output, as the general path builds it: generation cut at the first stop token."""
    stop_ids = set(api._stop_ids())
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


def _one_token_outputs(api: Any, reqs: list[Any], metadata: dict[str, Any] | None) -> list[ModelOutput]:
    s = reqs[0].payload
    k = int(s["top_logprobs"] or 0) if s["logprobs"] else 0
    best, best_lp, top_i, top_v = next_token_logprobs(api, [list(r.payload["ids"]) for r in reqs], k)
    outputs = []
    for b, req in enumerate(reqs):
        token = int(best[b])
        logprobs = None
        if s["logprobs"]:
            top = None
            if k:
                top = [TopLogprob(token=api._token_text(int(i)), logprob=float(v)) for i, v in zip(top_i[b], top_v[b])]
            logprobs = Logprobs(content=[Logprob(token=api._token_text(token), logprob=float(best_lp[b]),
                                                 top_logprobs=top)])
        outputs.append(_output(api, req, [token], logprobs, metadata))
    return outputs


def _continuous_outputs(api: Any, reqs: list[Any], config: Any, metadata: dict[str, Any] | None
                        ) -> list[ModelOutput]:
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
