"""The blocked CPU projection (stereoprobe.providers.projection): the same logits, log-softmax and top-k as the
unblocked head and torch's own log-softmax, bit for bit, whatever the row count; the fused target log-probabilities
(no top-k) within a stated float32 bound of a float64 log-softmax of the same logits, independent of the row count
and the threads bit for bit."""

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
    s.blocked.vocab_block = s.blocked.chunk = 1024  # several vocabulary blocks and chunks on a small vocabulary
    return s


def _rows(n: int, seed: int = 7) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 64, generator=g) * 3, torch.randint(0, VOCAB, (n,), generator=g)


EPS = torch.finfo(torch.float32).eps


def _float64_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The exact reference: float64 log-softmax of the same float32 logits at the targets, and each row's bound
    ``4 eps32 max(|log-sum-exp|, |log-probability|, 1)`` (a few float32 ulp of the values involved)."""
    wide = logits.double()
    exact = torch.log_softmax(wide, dim=-1).gather(1, targets[:, None])[:, 0]
    scale = torch.maximum(torch.logsumexp(wide, dim=-1).abs(), exact.abs()).clamp(min=1.0)
    return exact, 4 * EPS * scale


def test_scores_within_float32_rounding_of_a_float64_log_softmax(scorer):
    rows, targets = _rows(2 * ROW_BLOCK + 37)
    with torch.inference_mode():
        logits = scorer.head(rows).float()  # the unblocked head
        got, top = scorer.project_scores(rows, targets, 0)
        old = -F.cross_entropy(logits, targets, reduction="none")  # the path before the fused chunks
    exact, bound = _float64_logprobs(logits, targets)
    assert top is None and got.shape == exact.shape and got.dtype == torch.float32
    assert bool(((got.double() - exact).abs() <= bound).all())
    assert bool(((old.double() - exact).abs() <= 2 * bound).all())  # the old path's error: the same size
    assert not torch.equal(got, old)  # the fused path is the one under test (its own rounding)


@pytest.mark.parametrize("hidden, scale", [(64, 1.0), (64, 30.0), (576, 1.0)])
def test_fused_log_probabilities_on_the_default_vocabulary(hidden, scale):
    """49,152 columns in 48 chunks (the default tokenizer's vocabulary), large logits included (scale 30: log-sum-
    exps near 300, where a chunk's maxima differ by far more than exp's range)."""
    torch.manual_seed(hidden)
    head = nn.Linear(hidden, 49_152, bias=True)
    with torch.no_grad():
        head.weight.mul_(scale)
    rows, targets = torch.randn(ROW_BLOCK, hidden) * 3, torch.randint(0, 49_152, (ROW_BLOCK,))
    targets[:3] = torch.tensor([0, 1023, 49_151])  # a chunk's first and last columns, the vocabulary's last
    with torch.inference_mode():
        logits = head(rows).float()
        targets[3] = int(logits[3].argmax())  # the row's most likely token (log-probability near 0)
        got = BlockedHead(head.weight, head.bias).target_logprobs(rows, targets)
    exact, bound = _float64_logprobs(logits, targets)
    assert bool(((got.double() - exact).abs() <= bound).all())


def test_a_bfloat16_head_keeps_the_full_log_softmax():
    head = nn.Linear(64, VOCAB, bias=False).to(torch.bfloat16)
    assert not BlockedHead(head.weight, None).fused
    assert BlockedHead(head.weight.float(), None).fused


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


@pytest.mark.parametrize("chunk", [1024, 64])  # 3 chunks, the last partial; 41 chunks (combined across chunks)
def test_a_rows_score_does_not_depend_on_the_row_count(scorer, chunk, monkeypatch):
    monkeypatch.setattr(scorer.blocked, "chunk", chunk)
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
            logits = scorer.head(rows).float()
    finally:
        torch.set_num_threads(before)
    assert torch.equal(one, two)
    exact, bound = _float64_logprobs(logits, targets)
    assert bool(((one.double() - exact).abs() <= bound).all())
