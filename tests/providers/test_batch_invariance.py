"""Batch plans are deterministic, and a text's score does not depend on its batch: per-text log-probabilities are
bit-identical on CPU float32 across batch sizes (1, 7, 64, the automatic token budget), concurrency (one
request at a time vs all at once) and the other requests in the queue; GlobalBias flags are identical."""

from __future__ import annotations

import asyncio
import random

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.likelihood import RESULTS_KEY, SUM_LOGPROB, TEXTS_KEY
from stereoprobe.providers.budget import generation_rows, scoring_bytes_per_token, scoring_token_budget
from stereoprobe.providers.planning import BatchPolicy, bucket_width, plan_chunks, share_prefixes
from stereoprobe.providers.scoring import CausalScorer

CONFIG = GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0)


def _grouped_seqs(seed: int, n_groups: int = 10, vocab: int = 30) -> tuple[list[list[int]], list[int]]:
    """Requests (groups) whose sequences share a request-specific prefix, as GlobalBias' name x descriptor."""
    rng = random.Random(seed)
    seqs, groups = [], []
    for g in range(n_groups):
        prefix = [2] + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 6))]
        for _ in range(rng.randrange(1, 15)):
            seqs.append(prefix + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 9))])
            groups.append(g)
    return seqs, groups


# ---- the planner ------------------------------------------------------------------------------------------
def test_plan_is_deterministic_and_covers_every_sequence_once():
    seqs, groups = _grouped_seqs(1)
    widths: dict[int, int] = {}
    for kwargs in ({"batch_size": 1}, {"batch_size": 7}, {"batch_size": None, "max_tokens": 64}):
        plan = plan_chunks(seqs, groups=groups, **kwargs)
        assert plan == plan_chunks([list(s) for s in seqs], groups=list(groups), **kwargs)  # same inputs, same batches
        assert sorted(i for c in plan for i in c.indices) == list(range(len(seqs)))
        for c in plan:
            if kwargs["batch_size"]:
                assert len(c.indices) <= kwargs["batch_size"]
            else:  # within the token budget, unless one sequence alone exceeds it
                assert len(c.indices) == 1 or len(c.indices) * (c.prefix_width + c.width) <= 64
            for i, p in zip(c.indices, c.prefix_lens):  # canonical widths: a function of the request alone
                # its own width, or its prefix group's widest where that runs the prefix once (planning._widths)
                mates = [j for j in range(len(seqs)) if groups[j] == groups[i] and seqs[j][:p] == seqs[i][:p]
                         and len(seqs[j]) > p] if p else [i]
                assert c.width in {bucket_width(len(seqs[i]) - p), max(bucket_width(len(seqs[j]) - p) for j in mates)}
                assert c.prefix_width == (bucket_width(p) if p else 0)
                assert widths.setdefault(i, c.width) == c.width  # the same width in every plan
    assert [bucket_width(n) for n in (1, 4, 5, 8, 9)] == [4, 4, 8, 8, 12]
    # a group whose prompt is long beside its continuations runs it once, at the group's widest continuation
    long = [[2] + [7] * 30 + [9, 10 + k] + [11] * k for k in range(1, 9)]
    [chunk] = plan_chunks(long, batch_size=None, groups=[0] * 8, max_tokens=4096)
    assert chunk.prefix_lens == [32] * 8 and chunk.width == bucket_width(9)


def test_prefixes_are_shared_within_a_request_only():
    seqs = [[2, 7, 8, 9], [2, 7, 8, 10], [2, 7, 8, 11], [2, 7, 8, 12]]
    assert share_prefixes(seqs) == [3, 3, 3, 3]
    assert share_prefixes(seqs, groups=[0, 0, 1, 1]) == [3, 3, 3, 3]
    assert share_prefixes(seqs, groups=[0, 1, 1, 2]) == [0, 3, 3, 0]  # a lone member of a request shares nothing
    # a request's prefixes do not change with the other requests planned beside it
    more = seqs + [[2, 7, 5, 5]]
    assert share_prefixes(more, groups=[0, 0, 1, 1, 1]) == [3, 3, 2, 2, 2]
    assert share_prefixes(more, groups=[0, 0, 1, 1, 1])[:2] == share_prefixes(seqs[:2], groups=[0, 0])


def test_budget_grows_with_free_memory_and_shrinks_with_the_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    small = LlamaForCausalLM(LlamaConfig(vocab_size=1000, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2))
    wide = LlamaForCausalLM(LlamaConfig(vocab_size=8000, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                                        num_attention_heads=4, num_key_value_heads=2))
    per_small, per_wide = scoring_bytes_per_token(small), scoring_bytes_per_token(wide)
    # logits (float32 weights: 4 + 4 + 4 bytes per vocabulary entry) + key/values (2 x layers x 2 heads x 8) x 4
    # bytes + activations (6 x hidden + 3 x intermediate) x 4 bytes
    assert per_small == 1000 * 12 + 2 * 2 * 2 * 8 * 4 + (6 * 32 + 3 * 64) * 4
    assert per_wide > per_small
    gb = 1024**3
    assert scoring_token_budget(small, "cpu", free=gb // 100) == int(0.4 * (gb // 100) / per_small)
    assert scoring_token_budget(wide, "cpu", free=gb // 100) < scoring_token_budget(small, "cpu", free=gb // 100)
    assert scoring_token_budget(small, "cpu", free=10) == 256 and scoring_token_budget(small, "cpu", free=gb) == 4096
    assert scoring_token_budget(small, "cuda", free=100 * gb) == 65536
    assert generation_rows(small, "cpu", 100, 300, free=gb) == 16
    assert 1 <= generation_rows(wide, "cuda", 100, 300, free=gb // 1000) < generation_rows(wide, "cuda", 100, 300, free=gb)


# ---- the scorer ---------------------------------------------------------------------------------------------
@torch.inference_mode()
def test_scores_bit_identical_across_batch_sizes_and_companions(tiny_models):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    scorer = CausalScorer(model, pad_id=0)
    seqs, groups = _grouped_seqs(5)
    for share in (True, False):
        ref = scorer.score(seqs, BatchPolicy(1), prefix_sharing=share, groups=groups)
        for policy in (BatchPolicy(7), BatchPolicy(64), BatchPolicy(None, 256)):
            got = scorer.score(seqs, policy, prefix_sharing=share, groups=groups)
            assert [g.logprobs for g in got] == [r.logprobs for r in ref]  # bit for bit
        for g in (0, 3):  # one request scored alone: the same bits as beside the others
            idx = [i for i, x in enumerate(groups) if x == g]
            alone = scorer.score([seqs[i] for i in idx], BatchPolicy(64), prefix_sharing=share, groups=[g] * len(idx))
            assert [a.logprobs for a in alone] == [ref[i].logprobs for i in idx]
    shared = scorer.score(seqs, BatchPolicy(64), prefix_sharing=True, groups=groups)
    plain = scorer.score(seqs, BatchPolicy(64), prefix_sharing=False, groups=groups)
    worst = max(abs(a - b) for s, p in zip(shared, plain) for a, b in zip(s.logprobs, p.logprobs))
    assert worst <= 5e-4  # prefix sharing computes the same numbers in other shapes (tests/tolerances.py)


# ---- through the provider and inspect ------------------------------------------------------------------------
def _requests(n_groups: int = 8) -> list[list[dict[str, str]]]:
    words = ["alice", "bob", "wei", "olga"]
    traits = ["kind.", "very clever.", "a nurse from the city.", "not lazy.", "rude and clever.", "a doctor."]
    return [[{"id": f"{g}:{k}", "text": f"my name is {words[g % 4]} {words[(g // 4) % 4]}, i was {t}"}
             for k, t in enumerate(traits[: 2 + g % 5])] for g in range(n_groups)]


def _sums(model, requests, concurrent: bool) -> list[list[float]]:
    async def one(items):
        out = await model.generate([ChatMessageUser(content="texts", metadata={TEXTS_KEY: items})], config=CONFIG)
        return out.metadata[RESULTS_KEY][SUM_LOGPROB]

    async def run():
        if concurrent:
            return list(await asyncio.gather(*(one(r) for r in requests)))
        return [await one(r) for r in requests]

    return asyncio.run(run())


def test_provider_results_independent_of_batch_size_and_concurrency(tiny_models):
    path = f"transformers/{tiny_models['llama']}"
    requests = _requests()
    ref = _sums(get_model(path, device="cpu", batch_size=1, memoize=False), requests, concurrent=False)
    assert all(isinstance(x, float) for r in ref for x in r)
    for args in ({"batch_size": 7}, {"batch_size": 64}, {}):  # {}: the automatic token budget
        model = get_model(path, device="cpu", memoize=False, **args)
        for concurrent in (False, True):
            assert _sums(model, requests, concurrent) == ref
    # texts queued with unrelated single-text requests: the same bits
    model = get_model(path, device="cpu", batch_size=5, memoize=False)

    async def mixed():
        singles = [model.generate([ChatMessageUser(content=t)], config=CONFIG) for t in ("alice is", "bob was rude.")]
        grouped = [model.generate([ChatMessageUser(content="t", metadata={TEXTS_KEY: r})], config=CONFIG)
                   for r in requests]
        outs = await asyncio.gather(*grouped, *singles)
        return [o.metadata[RESULTS_KEY][SUM_LOGPROB] for o in outs[: len(requests)]]

    assert asyncio.run(mixed()) == ref


@pytest.fixture(scope="module")
def gb_llama(tmp_path_factory):
    """A 2-layer random Llama with the default model's tokenizer (GlobalBias sentences tokenize normally)."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from stereoprobe.providers.default_model import default_model_dir

    folder = tmp_path_factory.mktemp("gb_llama")
    tok = AutoTokenizer.from_pretrained(default_model_dir())
    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                                 bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def test_globalbias_flags_identical_across_batch_sizes_and_concurrency(gb_llama, tmp_path):
    from inspect_ai import eval as inspect_eval

    from stereoprobe.globalbias import analyze
    from stereoprobe.tasks.globalbias import globalbias

    tables = []
    for k, (args, connections) in enumerate(((dict(batch_size=1), 1), (dict(batch_size=7), 3), ({}, 64))):
        model = get_model(f"transformers/{gb_llama}", device="cpu", memoize=False, **args)
        [log] = inspect_eval(globalbias(source="bundled", templates=[1]), model=model, log_dir=str(tmp_path / str(k)),
                             display="none", max_connections=connections, max_samples=connections)
        assert log.status == "success", log.error
        tables.append(analyze([tmp_path / str(k)]).tables["bias_scores"])
    assert "flagged" in tables[0].columns and len(tables[0])
    for other in tables[1:]:
        assert tables[0].equals(other)  # every score and flag, bit for bit
