"""One intra-op thread for a small body forward (stereoprobe.providers.body_threads): the scores keep every bit."""

from __future__ import annotations

import random

import pytest
import torch

import stereoprobe.providers.body_threads as bt
from stereoprobe.providers.body_threads import SMALL_FORWARD_MACS, BodyThreads, same_bits
from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.scoring import CausalScorer


def _seqs(seed: int) -> tuple[list[list[int]], list[int]]:
    rng = random.Random(seed)
    seqs, groups = [], []
    for g in range(10):
        prefix = [2] + [rng.randrange(5, 30) for _ in range(rng.randrange(1, 7))]
        for _ in range(rng.randrange(2, 16)):
            seqs.append(prefix + [rng.randrange(5, 30) for _ in range(rng.randrange(1, 10))])
            groups.append(g)
    return seqs, groups


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_the_rule_crosses_where_the_products_reach_a_millisecond():
    # 2**26 multiply-adds: width 576 (the default model) -> 202 positions (202 * 576**2 = 67,018,752 < 67,108,864)
    rule = BodyThreads(576)
    assert SMALL_FORWARD_MACS == 67_108_864
    assert rule.small(202) and not rule.small(203)
    assert BodyThreads(64).small(4096) and not BodyThreads(64).small(16384)  # 16384 * 4096 = 2**26
    rule.on = False
    assert not rule.small(1)


def test_the_default_model_keeps_its_threads():
    # attached only where a 4,096-token forward is small: width 127 yes (4096 * 127**2 < 2**26), 128 not
    assert BodyThreads(127).small(4096) and not BodyThreads(128).small(4096)

    class Wide(_ThreadDependent):
        class model:  # noqa: N801
            class config:  # noqa: N801
                vocab_size = 50
                hidden_size = 576

    wide = Wide()
    bt.attach_body_threads(wide)
    assert wide.body_threads is None


def test_small_forwards_run_on_one_thread_and_the_scores_keep_every_bit(tiny_models, two_threads):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    scorer = CausalScorer(model, pad_id=0)
    assert scorer.body_threads is not None and scorer.body_threads.status == "on"
    seen: list[int] = []
    hook = scorer.body.register_forward_pre_hook(lambda m, a, k: seen.append(torch.get_num_threads()),
                                                 with_kwargs=True)
    seqs, groups = _seqs(5)
    for share in (True, False):
        for policy in (BatchPolicy(64), BatchPolicy(None, 256)):
            scorer.body_threads.on = True
            got = scorer.score(seqs, policy, prefix_sharing=share, groups=groups, top_k=2)
            assert torch.get_num_threads() == 2  # restored after each forward
            scorer.body_threads.on = False
            ref = scorer.score(seqs, policy, prefix_sharing=share, groups=groups, top_k=2)
            assert [g.logprobs for g in got] == [r.logprobs for r in ref]  # bit for bit
            assert [g.top for g in got] == [r.top for r in ref]
    hook.remove()
    assert 1 in seen and 2 in seen  # the rule's forwards ran on one thread, the reference on two
    scorer.body_threads.on = True
    prefix = [4] * 20
    rows = [[2, 7, 8, 9, 10 + k % 6] for k in range(20)]
    one = scorer.last_rows(rows, prefix)
    scorer.body_threads.on = False
    assert torch.equal(one, scorer.last_rows(rows, prefix))


class _ThreadDependent:
    """A stand-in scorer whose hidden states change with the thread count (what the check must refuse)."""

    device = torch.device("cpu")
    split = True
    body_threads = None

    class model:  # noqa: N801 - read as scorer.model.config
        class config:  # noqa: N801
            vocab_size = 50
            hidden_size = 8

    def forward(self, ids, cache=None, want_cache=False, **extra):
        out = torch.full((*ids.shape, 8), float(torch.get_num_threads()))
        return out, None

    def cache(self):
        return None


def test_the_check_refuses_a_body_whose_bits_depend_on_the_threads(monkeypatch, two_threads):
    monkeypatch.setattr(bt, "cache_tensors", lambda cache: [])
    scorer = _ThreadDependent()
    rule = BodyThreads(8)
    assert not same_bits(scorer, rule)
    assert rule.on and torch.get_num_threads() == 2  # restored

    bt.attach_body_threads(scorer)
    assert scorer.body_threads is not None and not scorer.body_threads.on
    assert scorer.body_threads.status.startswith("off")


def test_scoring_called_on_the_main_thread_runs_off_it_with_the_same_bits(tiny_models):
    import threading

    from transformers import AutoModelForCausalLM

    assert threading.current_thread() is threading.main_thread()  # pytest runs tests on the main thread
    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    scorer = CausalScorer(model, pad_id=0)
    where: list[bool] = []
    hook = scorer.body.register_forward_pre_hook(lambda m, a: where.append(bt.on_main_thread()))
    seqs, groups = _seqs(7)
    got = scorer.score(seqs, BatchPolicy(64), groups=groups)
    assert where and not any(where)  # every forward ran on the helper thread
    ref: dict[str, list] = {}
    worker = threading.Thread(target=lambda: ref.setdefault("r", scorer.score(seqs, BatchPolicy(64), groups=groups)))
    worker.start()
    worker.join()
    hook.remove()
    assert [g.logprobs for g in got] == [r.logprobs for r in ref["r"]]  # bit for bit


def test_off_main_thread_hands_back_the_value_and_the_error():
    assert bt.off_main_thread(lambda: bt.on_main_thread()) is False

    def boom() -> None:
        raise ValueError("bad row 3")

    with pytest.raises(ValueError, match="bad row 3"):
        bt.off_main_thread(boom)
