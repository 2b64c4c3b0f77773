"""The one-token route through the planner (stereoprobe.providers.next_token): against a hand-written loop
(one prompt alone, full logits), bit-identical whatever the grouping without prefix sharing, within float32
noise with it, in fixed shapes too; the shared prefix really runs once."""

from __future__ import annotations

import random

import torch

from stereoprobe.providers.microbatch import MicroBatchShape
from stereoprobe.providers.next_token import next_token_logprobs
from stereoprobe.providers.planning import BatchPolicy, plan_chunks
from stereoprobe.providers.scoring import CausalScorer


def _prompts(seed: int) -> tuple[list[list[int]], list[int]]:
    """Two requests; in each, prompts share a long opening (a chat header and instruction) and then a question
    context per pair of option orders."""
    rng = random.Random(seed)
    prompts, groups = [], []
    for g in range(2):
        head = [2] + [rng.randrange(5, 30) for _ in range(7)]
        for _ in range(4):
            ctx = [rng.randrange(5, 30) for _ in range(rng.randrange(1, 4))]
            for _ in range(2):
                prompts.append(head + ctx + [rng.randrange(5, 30) for _ in range(rng.randrange(1, 3))])
                groups.append(g)
    return prompts, groups


@torch.inference_mode()
def test_next_token_alone_grouped_and_shared(tiny_models):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    scorer = CausalScorer(model, pad_id=0)
    prompts, groups = _prompts(1)
    # by hand: each prompt alone through the full model, log-softmax of the last position in float64
    want = [torch.log_softmax(model(torch.tensor([p])).logits[0, -1].double(), -1) for p in prompts]
    alone = [next_token_logprobs(scorer, [p], top_k=3) for p in prompts]
    for a, w in zip(alone, want):
        assert a.tokens[0] == int(w.argmax()) and abs(a.logprobs[0] - float(w.max())) < 1e-5
        assert a.top_ids[0] == w.topk(3).indices.tolist()
    # no prefix sharing: bit-identical to one prompt at a time, whatever the batch size or grouping
    for kwargs in ({"policy": BatchPolicy(3)}, {"policy": BatchPolicy(None, 64)}, {"groups": groups}):
        got = next_token_logprobs(scorer, prompts, top_k=3, **kwargs)
        assert got.logprobs == [a.logprobs[0] for a in alone] and got.top_logprobs == [a.top_logprobs[0] for a in alone]
    # prefix sharing within each request: the shared opening runs once, the same numbers within float32 noise
    assert any(c.shared for c in plan_chunks(prompts, None, True, groups=groups, max_tokens=4096))
    shared = next_token_logprobs(scorer, prompts, top_k=3, groups=groups, prefix_sharing=True)
    assert shared.tokens == [a.tokens[0] for a in alone]
    assert max(abs(x - a.logprobs[0]) for x, a in zip(shared.logprobs, alone)) <= 5e-5
    # fixed shapes: one request's answers are bit-identical alone and beside the other request
    shape = MicroBatchShape(tokens=48, project_rows=16)
    both = next_token_logprobs(scorer, prompts, 3, BatchPolicy(shape=shape), groups, prefix_sharing=True)
    first = [i for i, g in enumerate(groups) if g == 0]
    one = next_token_logprobs(scorer, [prompts[i] for i in first], 3, BatchPolicy(shape=shape), [0] * len(first),
                              prefix_sharing=True)
    assert one.logprobs == [both.logprobs[i] for i in first]
    assert one.top_logprobs == [both.top_logprobs[i] for i in first]
