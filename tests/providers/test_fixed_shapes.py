"""Fixed micro-batch shapes (stereoprobe.providers.microbatch): every forward pass and every output-projection
product of the causal scorer has a shape that depends on the plan key alone, never on the companions, the
batch size or the concurrency (the property that makes GPU kernels batch-invariant); on CPU float32 the
per-token results are bit-identical across all of them and agree with the default path."""

from __future__ import annotations

import asyncio
import random

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.likelihood import RESULTS_KEY, SUM_LOGPROB, TEXTS_KEY
from stereoprobe.providers.microbatch import FIXED_TOKENS, MicroBatchShape, resolve_shape
from stereoprobe.providers.planning import BatchPolicy, bucket_width, plan_chunks, prefix_rows
from stereoprobe.providers.scoring import CausalScorer

SHAPE = MicroBatchShape(tokens=48, project_rows=16)
CONFIG = GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0)


def _grouped_seqs(seed: int, n_groups: int = 8, vocab: int = 30) -> tuple[list[list[int]], list[int]]:
    rng = random.Random(seed)
    seqs, groups = [], []
    for g in range(n_groups):
        prefix = [2] + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 6))]
        for _ in range(rng.randrange(1, 12)):
            seqs.append(prefix + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 9))])
            groups.append(g)
    return seqs, groups


def test_resolve_shape_settings():
    assert resolve_shape(None, None, "cuda") == MicroBatchShape() and MicroBatchShape().tokens == FIXED_TOKENS
    assert resolve_shape("auto", None, "cpu") is None and resolve_shape("false", 64, "cuda") is None
    assert resolve_shape("true", "64", "cpu") == MicroBatchShape(tokens=64, project_rows=64)
    assert MicroBatchShape(tokens=100).rows(8, 12) == 5 and MicroBatchShape(tokens=10).rows(0, 64) == 1
    with pytest.raises(ValueError, match="batch_invariant"):
        resolve_shape("sometimes", None, "cpu")
    with pytest.raises(ValueError, match="microbatch_tokens"):
        resolve_shape("true", "many", "cpu")


def test_fixed_plan_bounds_the_prefixes_of_every_batch():
    """With fanout keys, a batch of rows(key) sequences meets at most prefix_rows(rows, fanout) distinct
    prefixes, and the fanout of a sequence is a function of its own request."""
    for seed in range(6):
        seqs, groups = _grouped_seqs(seed, n_groups=12)
        for tokens in (24, 48, 200):
            shape = MicroBatchShape(tokens=tokens, project_rows=16)
            plan = plan_chunks(seqs, None, True, groups=groups, max_tokens=tokens, shape=shape)
            assert sorted(i for c in plan for i in c.indices) == list(range(len(seqs)))
            for c in plan:
                rows = shape.rows(c.prefix_width, c.width)
                assert len(c.indices) <= rows and (c.shape.rows, c.shape.project_rows) == (rows, 16)  # carried
                distinct = {(groups[i], tuple(seqs[i][:p])) for i, p in zip(c.indices, c.prefix_lens) if p}
                assert len(distinct) <= (prefix_rows(rows, c.fanout) if c.fanout else 0)
            first = [i for i, g in enumerate(groups) if g == 0]
            alone = plan_chunks([seqs[i] for i in first], None, True, groups=[0] * len(first), max_tokens=tokens,
                                shape=shape)
            fan = {i: c.fanout for c in plan for i in c.indices}
            assert [fan[first[k]] for c in alone for k in c.indices] == [c.fanout for c in alone for _ in c.indices]


class _ShapeLog:
    """Records the input shape of every body forward and the row count of every head product of a scorer."""

    def __init__(self, scorer: CausalScorer) -> None:
        self.forwards: list[tuple[int, ...]] = []
        self.heads: list[int] = []
        scorer.body.register_forward_hook(lambda m, a, kw, out: self.forwards.append(tuple(kw["input_ids"].shape)),
                                          with_kwargs=True)
        scorer.head.register_forward_hook(lambda m, a, out: self.heads.append(int(a[0].shape[0])))
        if scorer.blocked is not None:  # CPU: the head's products in vocabulary blocks (.projection)
            blocked_logits = scorer.blocked.logits

            def logits(rows: torch.Tensor) -> torch.Tensor:
                self.heads.append(int(rows.shape[0]))
                return blocked_logits(rows)

            scorer.blocked.logits = logits  # type: ignore[method-assign]
            fused = scorer.blocked.target_logprobs  # no top-k: the products fused per vocabulary chunk

            def target_logprobs(rows: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
                self.heads.append(int(rows.shape[0]))
                return fused(rows, targets)

            scorer.blocked.target_logprobs = target_logprobs  # type: ignore[method-assign]


@torch.inference_mode()
def test_every_kernel_shape_is_fixed_and_results_are_bit_identical(tiny_models):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    scorer = CausalScorer(model, pad_id=0)
    assert scorer.split
    log = _ShapeLog(scorer)
    seqs, groups = _grouped_seqs(3)
    ref = scorer.score(seqs, BatchPolicy(shape=SHAPE), prefix_sharing=True, groups=groups)
    main_rows = {SHAPE.rows(pw, w) for pw in range(0, 16, 4) for w in range(4, 16, 4)}
    allowed_rows = main_rows | {prefix_rows(r, 1 << k) for r in main_rows for k in range(6)}
    for share in (True, False):
        for policy in (BatchPolicy(1, shape=SHAPE), BatchPolicy(64, shape=SHAPE), BatchPolicy(None, 4096, SHAPE)):
            log.forwards.clear()
            log.heads.clear()
            got = scorer.score(seqs, policy, prefix_sharing=share, groups=groups)
            if share:
                assert [g.logprobs for g in got] == [r.logprobs for r in ref]  # bit for bit
            # every forward: exactly rows(key) sequences at a canonical width; every head product: 16 rows
            assert log.forwards and all(w == bucket_width(w) and b in allowed_rows for b, w in log.forwards)
            assert set(log.heads) == {SHAPE.project_rows}
        for g in (0, 5):  # one request alone: the same bits as beside the others
            idx = [i for i, x in enumerate(groups) if x == g]
            alone = scorer.score([seqs[i] for i in idx], BatchPolicy(shape=SHAPE), prefix_sharing=share,
                                 groups=[g] * len(idx))
            full = ref if share else scorer.score(seqs, BatchPolicy(shape=SHAPE), prefix_sharing=False, groups=groups)
            assert [a.logprobs for a in alone] == [full[i].logprobs for i in idx]
    default = scorer.score(seqs, BatchPolicy(64), prefix_sharing=True, groups=groups)
    worst = max(abs(a - b) for s, p in zip(ref, default) for a, b in zip(s.logprobs, p.logprobs))
    assert worst <= 5e-4  # the same quantity in other shapes (tests/tolerances.py: float32 scoring noise)


def test_provider_fixed_shapes_independent_of_batch_size_and_concurrency(tiny_models):
    path = f"transformers/{tiny_models['llama']}"
    words = ["alice", "bob", "wei", "olga"]
    traits = ["kind.", "very clever.", "a nurse from the city.", "not lazy.", "rude and clever."]
    requests = [[{"id": f"{g}:{k}", "text": f"my name is {words[g % 4]}, i was {t}"}
                 for k, t in enumerate(traits[: 2 + g % 4])] for g in range(6)]

    def sums(model, concurrent: bool) -> list[list[float]]:
        async def one(items):
            out = await model.generate([ChatMessageUser(content="t", metadata={TEXTS_KEY: items})], config=CONFIG)
            return out.metadata[RESULTS_KEY][SUM_LOGPROB]

        async def run():
            if concurrent:
                return list(await asyncio.gather(*(one(r) for r in requests)))
            return [await one(r) for r in requests]

        return asyncio.run(run())

    fixed = dict(device="cpu", batch_invariant="true", microbatch_tokens=48, memoize=False)
    ref = sums(get_model(path, batch_size=1, **fixed), concurrent=False)
    for args in ({"batch_size": 7}, {"batch_size": 64}, {}):
        model = get_model(path, **fixed, **args)
        assert model.api.shape == MicroBatchShape(tokens=48, project_rows=48)
        for concurrent in (False, True):
            assert sums(model, concurrent) == ref
