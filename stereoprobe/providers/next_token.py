"""The next token after each prompt, in one plan: the one-token generation route of the ``transformers`` provider.

DBB's logprob-mode questions ask for one greedy token and its top log-probabilities. The prompts go through the
scorer's planner (:mod:`.planning`) and its public batch API (:meth:`.scoring.CausalScorer.last_rows`,
:meth:`~.scoring.CausalScorer.project_logprobs`) exactly as scored texts do: canonical widths, at least
``MIN_ROWS`` rows per product, fixed micro-batch shapes with ``-M batch_invariant``, and, within a grouped
request (one DBB template: every question x option order), **prefix sharing**: the tokens the prompts share
(chat header, system message, instruction, the question's context) run once and the rest continues from their
key/value cache. A prompt's result then depends on its own request only, never on the requests queued with it.

Without sharing (``prefix_sharing=False``, or one group per prompt) the computation is the one of a prompt run
alone at its canonical width; on CPU in float32 its numbers are bit-identical whatever the grouping
(``tests/providers/test_next_token.py``). With sharing, the same quantity is computed in other shapes: it
agrees within float32 noise.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import torch

from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.scoring import CausalScorer

__all__ = ["NextTokens", "next_token_logprobs"]


@dataclass(frozen=True)
class NextTokens:
    """Per prompt (prompt order): the most likely next token, its float32 log-probability, and the ``top_k``
    most likely tokens with theirs (empty lists when ``top_k`` is 0)."""

    tokens: list[int]
    logprobs: list[float]
    top_ids: list[list[int]]
    top_logprobs: list[list[float]]


@torch.inference_mode()
def next_token_logprobs(scorer: CausalScorer, prompts: Sequence[Sequence[int]], top_k: int = 0,
                        policy: BatchPolicy = BatchPolicy(), groups: Sequence[Hashable] | None = None,
                        prefix_sharing: bool = False) -> NextTokens:
    """The next token of every prompt (at least one token each). ``groups[i]``: the planning group of prompt
    ``i`` (prefixes are shared within a group only; ``None``: one group); ``policy``: the forward batches' size
    or token budget, or fixed micro-batches (:class:`.planning.BatchPolicy`). One transfer to the host for all
    prompts."""
    order: list[int] = []
    best, best_lp, top_i, top_v = [], [], [], []
    for chunk in policy.plan(prompts, prefix_sharing, groups):
        rows = scorer.last_rows([prompts[i] for i in chunk.indices], chunk.prefix_lens, chunk.shape)
        logp = scorer.project_logprobs(rows, chunk.shape.project_rows)[: len(chunk.indices)]
        token = logp.argmax(dim=-1)
        best.append(token)
        best_lp.append(logp.gather(1, token[:, None])[:, 0])
        if top_k:
            top = logp.topk(top_k, dim=-1)
            top_i.append(top.indices)
            top_v.append(top.values)
        order += chunk.indices
    position = {i: k for k, i in enumerate(order)}
    back = [position[i] for i in range(len(prompts))]
    tokens = torch.cat(best).tolist() if best else []  # the synchronisation: every batch has been launched
    lps = torch.cat(best_lp).tolist() if best_lp else []
    idx = torch.cat(top_i).tolist() if top_i else [[] for _ in order]
    vals = torch.cat(top_v).tolist() if top_v else [[] for _ in order]
    return NextTokens([tokens[k] for k in back], [lps[k] for k in back], [idx[k] for k in back],
                      [vals[k] for k in back])
