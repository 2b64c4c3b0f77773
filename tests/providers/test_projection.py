"""The blocked CPU projection (stereoprobe.providers.projection): the same logits and log-probabilities as the
unblocked head and torch's own cross-entropy / log-softmax, bit for bit, whatever the row count."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from stereoprobe.providers.projection import ROW_BLOCK, BlockedHead, blocked_head, row_slices
from stereoprobe.providers.scoring import MIN_ROWS, CausalScorer

VOCAB = 2_600  # two full vocabulary blocks of 1,024 and a partial one


def test_row_slices_by_hand():
    assert row_slices(5, 0, 0, 16) == [slice(0, 16)]
    assert row_slices(40, 0, 0, 16) == [slice(0, 40)]
    assert row_slices(5, 0, 128, 16) == [slice(0, 16)]
    assert row_slices(128, 0, 128, 16) == [slice(0, 128)]
    assert row_slices(130, 0, 128, 16) == [slice(0, 128), slice(128, 144)]
    assert row_slices(300, 0, 128, 16) == [slice(0, 128), slice(128, 256), slice(256, 300)]
    assert row_slices(70, 32, 128, 16) == [slice(0, 32), slice(32, 64), slice(64, 96)]
    assert row_slices(0, 0, 128, 16) == []


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_blocked_logits_equal_the_linear_head(bias, dtype):
    torch.manual_seed(0)
    head = nn.Linear(64, VOCAB, bias=bias).to(dtype)
    rows = torch.randn(ROW_BLOCK, 64).to(dtype)
    with torch.inference_mode():
        want = head(rows).float()
        got = BlockedHead(head.weight, head.bias, vocab_block=1024).logits(rows)
    assert got.dtype == torch.float32 and got.shape == want.shape
    assert torch.equal(got, want)


def test_blocked_head_only_for_a_plain_linear_head_on_cpu():
    head = nn.Linear(8, 40, bias=False)
    assert isinstance(blocked_head(head, torch.device("cpu")), BlockedHead)
    assert blocked_head(head, torch.device("cuda")) is None
    assert blocked_head(nn.Sequential(head), torch.device("cpu")) is None
    handle = head.register_forward_hook(lambda m, i, o: o * 2)
    assert blocked_head(head, torch.device("cpu")) is None
    handle.remove()


@pytest.fixture(scope="module")
def scorer():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(3)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128,
                                         num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                                         max_position_embeddings=32, pad_token_id=0)).eval()
    s = CausalScorer(model)
    assert s.split and s.blocked is not None  # the blocked path is the one under test
    s.blocked.vocab_block = 1024  # several vocabulary blocks on a small vocabulary
    return s


def _rows(n: int, seed: int = 7) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 64, generator=g) * 3, torch.randint(0, VOCAB, (n,), generator=g)


def test_scores_equal_torch_cross_entropy_on_the_whole_product(scorer):
    rows, targets = _rows(2 * ROW_BLOCK + 37)
    with torch.inference_mode():
        want = -F.cross_entropy(scorer.head(rows).float(), targets, reduction="none")  # the unblocked head
        got, top = scorer.project_scores(rows, targets, 0)
    assert top is None and got.shape == want.shape
    assert torch.equal(got, want)


def test_top_k_equals_torch_log_softmax_topk(scorer):
    rows, targets = _rows(ROW_BLOCK + 5, seed=8)
    with torch.inference_mode():
        logp = torch.log_softmax(scorer.head(rows).float(), dim=-1)
        got, top = scorer.project_scores(rows, targets, 3)
    vals, idx = logp.topk(3, dim=-1)
    assert torch.equal(got, logp.gather(1, targets[:, None])[:, 0])
    assert top == [list(zip(i.tolist(), v.tolist())) for i, v in zip(idx, vals)]


def test_project_logprobs_equal_torch_log_softmax(scorer):
    rows, _ = _rows(ROW_BLOCK + 20, seed=9)
    with torch.inference_mode():
        want = torch.log_softmax(scorer.head(rows).float(), dim=-1)
        got = scorer.project_logprobs(rows)
    assert torch.equal(got, want)


def test_a_rows_score_does_not_depend_on_the_row_count(scorer):
    rows, targets = _rows(3 * ROW_BLOCK + 11, seed=10)
    with torch.inference_mode():
        full, _ = scorer.project_scores(rows, targets, 0)
        for n in (1, MIN_ROWS - 1, MIN_ROWS, MIN_ROWS + 1, ROW_BLOCK - 1, ROW_BLOCK, ROW_BLOCK + 1, 2 * ROW_BLOCK + 3):
            part, _ = scorer.project_scores(rows[:n], targets[:n], 0)
            assert torch.equal(part, full[:n]), n
        # the same rows behind other rows: each row keeps its score
        shifted, _ = scorer.project_scores(rows[5 : 5 + ROW_BLOCK + 9], targets[5 : 5 + ROW_BLOCK + 9], 0)
        assert torch.equal(shifted, full[5 : 5 + ROW_BLOCK + 9])
        # fixed product shapes (slice_rows) give the same scores
        fixed, _ = scorer.project_scores(rows, targets, 0, slice_rows=48)
    assert torch.equal(fixed, full)


def test_threads_give_the_same_scores_and_the_thread_count_is_restored(scorer):
    rows, targets = _rows(4 * ROW_BLOCK + 3, seed=11)
    before = torch.get_num_threads()
    try:
        with torch.inference_mode():
            torch.set_num_threads(1)
            one, _ = scorer.project_scores(rows, targets, 0)  # serial: one thread, no pool
            torch.set_num_threads(2)
            two, _ = scorer.project_scores(rows, targets, 0)  # two pool threads, one intra-op thread each
            assert torch.get_num_threads() == 2
            want = -F.cross_entropy(scorer.head(rows).float(), targets, reduction="none")
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one, want) and torch.equal(two, want)
