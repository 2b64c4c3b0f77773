"""Row packing (stereoprobe.providers.packing): the per-position modules skip the padding, the scores keep every bit."""

from __future__ import annotations

import random

import torch

from stereoprobe.providers.packing import RowPacking, packable_modules
from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.scoring import CausalScorer


def _seqs(seed: int, n_groups: int = 12, vocab: int = 30) -> tuple[list[list[int]], list[int]]:
    """Requests whose sequences share a request prefix and end at every offset of their padded width."""
    rng = random.Random(seed)
    seqs, groups = [], []
    for g in range(n_groups):
        prefix = [2] + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 7))]
        for _ in range(rng.randrange(2, 16)):
            seqs.append(prefix + [rng.randrange(5, vocab) for _ in range(rng.randrange(1, 10))])
            groups.append(g)
    return seqs, groups


def _scorer(folder) -> CausalScorer:
    from transformers import AutoModelForCausalLM

    return CausalScorer(AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval(), pad_id=0)


def test_packed_scores_are_bit_identical_to_the_padded_forward(tiny_models):
    scorer = _scorer(tiny_models["llama"])
    assert scorer.packing is not None and scorer.packing.status == "on"
    # the feed-forward blocks whole, attention's four projections: 2 layers x (1 + 4) modules
    assert len(scorer.packing.modules) == 10
    seqs, groups = _seqs(3)
    packed_calls = []
    hook = scorer.packing.modules[0].register_forward_pre_hook(lambda m, a: packed_calls.append(a[0].dim()))
    for share in (True, False):
        for policy in (BatchPolicy(64), BatchPolicy(5), BatchPolicy(None, 256)):
            scorer.packing.on = True
            got = scorer.score(seqs, policy, prefix_sharing=share, groups=groups, top_k=2)
            scorer.packing.on = False
            ref = scorer.score(seqs, policy, prefix_sharing=share, groups=groups, top_k=2)
            assert [g.logprobs for g in got] == [r.logprobs for r in ref]  # bit for bit
            assert [g.top for g in got] == [r.top for r in ref]
    hook.remove()
    assert 2 in packed_calls  # the packed route ran (2-D rows), not only the padded one
    scorer.packing.on = True


def test_next_token_rows_are_bit_identical_packed(tiny_models):
    scorer = _scorer(tiny_models["llama"])
    seqs = [[2, 7, 8, 9, 10, 11], [2, 7, 8, 9, 12], [2, 7, 8, 9, 13, 14, 15, 16], [2, 7, 8, 9, 17]] * 5
    prefix = [4] * len(seqs)
    scorer.packing.on = False
    ref = scorer.last_rows(seqs, prefix)
    scorer.packing.on = True
    assert torch.equal(scorer.last_rows(seqs, prefix), ref)


def test_packing_turns_itself_off_when_a_module_mixes_positions(tiny_models):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    mlp = model.model.layers[0].mlp
    plain = mlp.forward
    mlp.forward = lambda x: plain(x) + x.mean(dim=-2, keepdim=True)  # not per position: sees its neighbours
    scorer = CausalScorer(model, pad_id=0)
    assert scorer.packing is not None and not scorer.packing.on
    assert scorer.packing.status.startswith("off: packed forward differs")
    seqs, groups = _seqs(4)
    assert scorer.score(seqs, BatchPolicy(64), groups=groups)  # scores, unpacked


def test_no_packing_below_min_rows_or_without_padding(tiny_models):
    model = _scorer(tiny_models["llama"]).model
    packing = RowPacking(model.model, min_rows=16)
    seen = []
    packing.modules[0].register_forward_pre_hook(lambda m, a: seen.append(tuple(a[0].shape)))
    ids = torch.full((3, 8), 7)
    with packing.rows_of([5, 5, 5], 8):  # 15 real rows: a product of fewer than 16 rows is never made
        model.model(input_ids=ids)
    with packing.rows_of([8, 8, 8], 8):  # no padding: nothing to skip
        model.model(input_ids=ids)
    with packing.rows_of([8, 8, 1], 8):  # 17 real rows of 24
        model.model(input_ids=ids)
    assert seen == [(3, 8, 32), (3, 8, 32), (17, 32)]


def test_packable_modules_are_the_feed_forward_blocks_and_the_other_linears(tiny_models):
    model = _scorer(tiny_models["llama"]).model
    names = {id(m): n for n, m in model.model.named_modules()}
    got = sorted(names[id(m)] for m in packable_modules(model.model))
    assert got == sorted(f"layers.{i}.{n}" for i in range(2) for n in
                         ("mlp", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"))


def test_scorers_of_one_model_share_one_packing(tiny_models):
    first = _scorer(tiny_models["llama"])
    hooks = len(first.packing.modules[0]._forward_pre_hooks)
    second = CausalScorer(first.model, pad_id=0)  # a second provider object on the cached model
    assert second.packing is first.packing
    assert len(first.packing.modules[0]._forward_pre_hooks) == hooks  # no second set of hooks
