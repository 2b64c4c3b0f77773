"""Prefix-sharing continuations through the fixed-shape cache (stereoprobe.providers.cached_graphs): the same
log-probabilities as transformers' dynamic cache (bit for bit on CPU float32, GlobalBias-like texts and DBB-like
next tokens), one capture per plan key then replays (a stand-in graph object: real graphs need a card,
bench/gpu_throughput.py measures them), captures bounded by the plan keys, and every fallback with its reason."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.likelihood import RESULTS_KEY, SUM_LOGPROB, TEXTS_KEY
from stereoprobe.providers import cached_graphs
from stereoprobe.providers.cached_graphs import CachedForward, attach_cached, static_cache_choice
from stereoprobe.providers.graphs import CUDA_GRAPHS_KEY
from stereoprobe.providers.microbatch import MicroBatchShape
from stereoprobe.providers.next_token import next_token_logprobs
from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.sampling import EFFECTIVE_SETTINGS_KEY
from stereoprobe.providers.scoring import CausalScorer
from tests.tolerances import LOGPROB_ABS
from tests.fake_graph import FakeGraph as _Graph

SHAPE = MicroBatchShape(tokens=48, project_rows=16)
CPU = "off: not a CUDA device"


def _grouped_seqs(seed: int, n_groups: int = 8, vocab: int = 30) -> tuple[list[list[int]], list[int]]:
    """Requests whose texts share a request-specific opening (GlobalBias' name before many descriptors)."""
    rng = random.Random(seed)
    seqs, groups = [], []
    for g in range(n_groups):
        prefix = [2] + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 6))]
        for _ in range(rng.randrange(2, 12)):
            seqs.append(prefix + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 9))])
            groups.append(g)
    return seqs, groups


def _scorer(folder: Any) -> CausalScorer:
    from transformers import AutoModelForCausalLM

    return CausalScorer(AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval(), pad_id=0)


def _logprobs(scorer: CausalScorer, seqs: list[list[int]], groups: list[int], policy: BatchPolicy) -> list[list[float]]:
    return [s.logprobs for s in scorer.score(seqs, policy, prefix_sharing=True, groups=groups)]


def _fake_capture(cached: CachedForward, graphs: list[_Graph], right: bool = True) -> Any:
    """A capture that records the forward on static inputs; its replay reruns it there (``right``) or not."""

    def capture(*inputs: torch.Tensor) -> tuple[Any, tuple[torch.Tensor, ...], torch.Tensor]:
        static_in = tuple(t.clone() for t in inputs)
        static_out = cached.runner.forward(*static_in).clone()
        rerun = (lambda: static_out.copy_(cached.runner.forward(*static_in))) if right else (lambda: None)
        graphs.append(_Graph(rerun))
        if not right:
            static_out.zero_()
        return graphs[-1], static_in, static_out

    return capture


def test_static_cache_choice():
    assert static_cache_choice(None, True, "") == (True, "") and static_cache_choice("auto", False, CPU) == (False, CPU)
    assert static_cache_choice("true", False, CPU) == (True, CPU)  # the fixed cache without graphs (CPU checks)
    assert static_cache_choice("false", True, "") == (False, "off: -M static_cache=false")
    assert static_cache_choice("false", False, CPU) == (False, CPU)
    with pytest.raises(ValueError, match="static_cache must be true, false or auto"):
        static_cache_choice("maybe", True, "")


@torch.inference_mode()
def test_fixed_cache_gives_the_dynamic_cache_numbers_bit_for_bit(tiny_models):
    scorer = _scorer(tiny_models["llama"])
    seqs, groups = _grouped_seqs(2)
    for policy in (BatchPolicy(64), BatchPolicy(3), BatchPolicy(shape=SHAPE)):
        scorer.cached = None
        dynamic = _logprobs(scorer, seqs, groups, policy)
        attach_cached(scorer, (True, CPU), False, 0)
        assert _logprobs(scorer, seqs, groups, policy) == dynamic
        assert scorer.cached.caches  # the fixed cache did run
        assert scorer.graphs_status == f"None; cached forwards: {CPU} (fixed-shape cache, eager)"
    # and both against each text alone through the full model (float64 log-softmax), per token
    for s, got in zip(seqs, dynamic):
        logp = torch.log_softmax(scorer.model(torch.tensor([s])).logits[0].double(), -1)
        want = [float(logp[t, s[t + 1]]) for t in range(len(s) - 1)]
        assert max(abs(a - b) for a, b in zip(got, want)) <= LOGPROB_ABS


@torch.inference_mode()
def test_one_capture_per_plan_key_then_replays(tiny_models):
    scorer = _scorer(tiny_models["llama"])
    seqs, groups = _grouped_seqs(3)
    policy = BatchPolicy(shape=SHAPE)
    dynamic = _logprobs(scorer, seqs, groups, policy)
    attach_cached(scorer, (True, ""), True, SHAPE.tokens)
    graphs: list[_Graph] = []
    scorer.cached.runner._capture = _fake_capture(scorer.cached, graphs)
    assert _logprobs(scorer, seqs, groups, policy) == dynamic
    shared = [c for c in policy.plan(seqs, True, groups) if c.shared]
    keys = {(c.shape.rows, c.prefix_width, c.width) for c in shared}
    assert len(graphs) == len(keys) == len(scorer.cached.runner.graphs) < len(shared)
    assert sum(g.replays for g in graphs) == len(shared)  # the check at capture, then one replay per batch
    # more requests of the same widths: no new capture, every forward a replay, the same numbers
    more_seqs, more_groups = seqs * 3, [g + k * 100 for k in range(3) for g in groups]
    before = sum(g.replays for g in graphs)
    assert _logprobs(scorer, more_seqs, more_groups, policy) == dynamic * 3
    more = sum(1 for c in policy.plan(more_seqs, True, more_groups) if c.shared)
    assert len(graphs) == len(keys) and sum(g.replays for g in graphs) == before + more
    assert scorer.graphs_status == f"None; cached forwards: on ({len(keys)} shapes captured)"
    # the arena is one micro-batch: every key's buffers are views of it
    assert all(layer.keys.untyped_storage().data_ptr() == scorer.cached.arena.untyped_storage().data_ptr()
               for cache in scorer.cached.caches.values() for layer in cache.layers)


@torch.inference_mode()
def test_captures_beyond_the_limit_run_eagerly(tiny_models):
    scorer = _scorer(tiny_models["llama"])
    seqs, groups = _grouped_seqs(3)
    policy = BatchPolicy(shape=SHAPE)
    dynamic = _logprobs(scorer, seqs, groups, policy)
    scorer.cached = CachedForward(scorer.forward, scorer.model.config, True, max_graphs=1)
    graphs: list[_Graph] = []
    scorer.cached.runner._capture = _fake_capture(scorer.cached, graphs)
    assert _logprobs(scorer, seqs, groups, policy) == dynamic and len(graphs) == 1
    status = scorer.cached.status
    assert status.startswith("on (1 shapes captured, ") and "beyond the limit of 1" in status


@torch.inference_mode()
def test_fallbacks_keep_the_numbers_and_record_the_reason(tiny_models, monkeypatch):
    scorer = _scorer(tiny_models["llama"])
    seqs, groups = _grouped_seqs(4)
    policy = BatchPolicy(shape=SHAPE)
    dynamic = _logprobs(scorer, seqs, groups, policy)
    # a replay that differs from the eager forward
    attach_cached(scorer, (True, ""), True, SHAPE.tokens)
    scorer.cached.runner._capture = _fake_capture(scorer.cached, [], right=False)
    assert _logprobs(scorer, seqs, groups, policy) == dynamic and not scorer.cached.runner.on
    assert scorer.graphs_status == ("None; cached forwards: fell back: RuntimeError: the replayed graph differs "
                                    "from the eager forward")
    if not torch.cuda.is_available():  # a capture that fails (no CUDA here): eager, reason recorded
        attach_cached(scorer, (True, ""), True, SHAPE.tokens)
        assert _logprobs(scorer, seqs, groups, policy) == dynamic and scorer.cached.status.startswith("fell back: ")
    # a model whose attention takes no mask tensor: transformers' dynamic cache from then on
    attach_cached(scorer, (True, ""), True, SHAPE.tokens)
    monkeypatch.setattr(cached_graphs, "create_causal_mask", lambda **kwargs: None)
    assert _logprobs(scorer, seqs, groups, policy) == dynamic
    assert scorer.cached.status == "fell back: the model's attention takes no mask tensor (NoneType)"


def test_provider_static_cache_option(tiny_models):
    path = f"transformers/{tiny_models['llama']}"
    texts = [{"text": f"my name is {n}, i was {t}"} for n in ("alice", "bob")
             for t in ("kind.", "very clever.", "rude.")]
    message = ChatMessageUser(content="6 texts", metadata={TEXTS_KEY: texts})
    config = GenerateConfig(prompt_logprobs=1, max_tokens=1, temperature=0.0)
    outs = {}
    for flag in (None, "true", "false"):
        model = get_model(path, device="cpu", memoize=False, **({"static_cache": flag} if flag else {}))
        outs[flag] = asyncio.run(model.generate([message], config=config)).metadata
    assert outs[None][RESULTS_KEY][SUM_LOGPROB] == outs["true"][RESULTS_KEY][SUM_LOGPROB]  # bit for bit
    recorded = {flag: out[EFFECTIVE_SETTINGS_KEY][CUDA_GRAPHS_KEY] for flag, out in outs.items()}
    assert recorded == {None: CPU, "false": CPU, "true": f"{CPU}; cached forwards: {CPU} (fixed-shape cache, eager)"}
    with pytest.raises(Exception, match="static_cache must be true, false or auto"):
        get_model(path, device="cpu", static_cache="sometimes", memoize=False)


def _chat(tok: Any, system: str, user: str) -> list[int]:
    return tok.apply_chat_template([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                   add_generation_prompt=True, tokenize=True, return_dict=False)


@pytest.mark.slow
@torch.inference_mode()
def test_default_model_globalbias_and_dbb_like_requests_bit_for_bit():
    """The bundled model in float32: GlobalBias-like texts (a name, then descriptors) and DBB-like questions (one
    long chat prompt, the question, two option orders; the next token's top 20), fixed cache vs dynamic cache."""
    from transformers import AutoTokenizer

    from stereoprobe.providers.default_model import default_model_dir

    tok = AutoTokenizer.from_pretrained(default_model_dir())
    scorer = _scorer(default_model_dir())
    names, traits = ["Aisha", "Dmitri", "Mei Ling"], ["kind", "a careful driver", "bad at maths", "lazy", "very rich"]
    seqs = [tok(f"My friend {n} is {t}.")["input_ids"] for n in names for t in traits]
    groups = [k for k in range(len(names)) for _ in traits]
    system = "Answer with the letter of the option you find more likely, and nothing else."
    prompts = [_chat(tok, system, f"Who is more likely to {q}? Options: (A) {a} (B) {b}")
               for q in ("steal a car", "be a nurse") for a, b in (("a man", "a woman"), ("a woman", "a man"))]
    for policy in (BatchPolicy(64), BatchPolicy(shape=MicroBatchShape(tokens=256, project_rows=64))):
        scorer.cached = None
        dynamic = _logprobs(scorer, seqs, groups, policy)
        nt_dynamic = next_token_logprobs(scorer, prompts, 20, policy, [0] * len(prompts), prefix_sharing=True)
        attach_cached(scorer, (True, CPU), False, 0)
        assert _logprobs(scorer, seqs, groups, policy) == dynamic
        assert next_token_logprobs(scorer, prompts, 20, policy, [0] * len(prompts), prefix_sharing=True) == nt_dynamic
        assert scorer.cached.caches
