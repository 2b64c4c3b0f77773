"""Scoring off the process's main thread (stereoprobe.providers.main_thread): the scores keep every bit."""

from __future__ import annotations

import random
import threading

import pytest
import torch

import stereoprobe.providers.main_thread as mt
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


def test_scoring_called_on_the_main_thread_runs_off_it_with_the_same_bits(tiny_models):
    from transformers import AutoModelForCausalLM

    assert threading.current_thread() is threading.main_thread()  # pytest runs tests on the main thread
    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    scorer = CausalScorer(model, pad_id=0)
    where: list[bool] = []
    hook = scorer.body.register_forward_pre_hook(lambda m, a: where.append(mt.on_main_thread()))
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
    assert mt.off_main_thread(lambda: mt.on_main_thread()) is False

    def boom() -> None:
        raise ValueError("bad row 3")

    with pytest.raises(ValueError, match="bad row 3"):
        mt.off_main_thread(boom)
