"""One intra-op thread for a small forward of a causal model's body on CPU (the scorer's forwards).

torch runs each operation of a forward in parallel over its intra-op threads (2 on the 2-core development
machine), and every parallel operation ends at a barrier where the threads wait for one another. A small model's
body (the harness's 2-layer, width-64 Llama: a 4,096-token batch's products are ``[4096, 64] x [64, 64]``, its
element-wise operations 1 MB) does a fraction of a millisecond of work per operation, so the second thread saves
little, while a barrier that waits for a thread whose core is busy elsewhere (inspect's own thread beside the
provider's worker, another process) costs a time slice of the scheduler. Measured on the harness's sentences
(docs/performance.md, "Issue 44, fourth session: the provider worker"): the body's wall time went from 10 to
11.5 s to about 1 s per 1,200 sentences at load 7 on one thread, the scores identical bit for bit.

The rule, per forward: a forward of ``tokens`` positions through a body of width ``hidden`` runs on one thread
when ``tokens * hidden**2`` (the multiply-adds of one of its square products) is below :data:`SMALL_FORWARD_MACS`
(about 1 ms of one core's work); every other forward, and the output projection, keeps torch's thread count. The
rule is attached only to a body whose forward of the default token budget (``BatchPolicy().batch_tokens``, 4,096
positions) is small, i.e. of width below 128: for a larger model the second thread pays off on its usual batches
and its once-per-model check (two forwards) would cost more than the rule saves, so the default model (width 576)
runs exactly as before.

A float32 product on CPU splits its output rows and columns among the threads, not its sums, so one thread or
two give the same bits at the scorer's shapes; :func:`same_bits` checks it once per model on a batch of the
scorer's canonical widths (hidden states and key/value cache, a prefix then a continuation after its cache) and
turns the rule off where they differ. The canonical widths matter: torch's CPU attention gives different bits on
one thread and on two at an odd key length (3 queries over 11 or 19 keys, every head size tried), a shape the
scorer never runs (its widths are multiples of 4: :func:`.planning.bucket_width`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

import torch

from stereoprobe.providers.packing import cache_tensors
from stereoprobe.providers.planning import BatchPolicy

SMALL_FORWARD_MACS = 1 << 26  # about 1 ms of one core's float32 multiply-adds
T = TypeVar("T")


class ThreadedScorer(Protocol):
    """What the rule reads of a causal scorer (``scoring.CausalScorer``, which imports this module)."""

    device: torch.device
    split: bool
    model: Any
    body_threads: BodyThreads | None

    def forward(self, ids: torch.Tensor, cache: Any = None, want_cache: bool = False,
                **extra: Any) -> tuple[torch.Tensor, Any]: ...


class BodyThreads:
    """The per-forward thread rule of one model's body (``hidden``: its width)."""

    def __init__(self, hidden: int) -> None:
        self.hidden = hidden
        self.on = True
        self.status = "on"

    def small(self, tokens: int) -> bool:
        """Whether a forward of ``tokens`` positions runs on one thread."""
        return self.on and tokens * self.hidden * self.hidden < SMALL_FORWARD_MACS

    @contextmanager
    def around(self, tokens: int) -> Iterator[None]:
        """Within the block, torch runs on one intra-op thread when the forward is small (the thread count is
        the calling thread's own setting: torch keeps it per thread, so inspect's thread is unaffected)."""
        threads = torch.get_num_threads()
        if threads == 1 or not self.small(tokens):
            yield
            return
        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(threads)


def attach_body_threads(scorer: ThreadedScorer) -> None:
    """Give a CPU causal scorer in split mode its :class:`BodyThreads` (``scorer.body_threads``) when a forward of
    the default token budget is small on its body, checked once for identical bits."""
    if scorer.device.type != "cpu" or not scorer.split:
        return
    hidden = int(getattr(scorer.model.config, "hidden_size", 0) or 0)
    rule = BodyThreads(hidden)
    if hidden < 1 or not rule.small(int(BatchPolicy().batch_tokens or 0)):
        return
    scorer.body_threads = rule
    if not same_bits(scorer, rule):
        rule.on, rule.status = False, "off: one thread and several give different bits on this model"


@torch.inference_mode()
def same_bits(scorer: ThreadedScorer, rule: BodyThreads) -> bool:
    """Whether a batch of canonical widths (6 rows of width 8, then its cache continued by 4 positions, the last
    prefix position hidden as padding) gets the same hidden states and key/value cache, bit for bit, on one thread
    and on ``max(2, torch's threads)``."""
    vocab = int(scorer.model.config.vocab_size)
    ids = ((torch.arange(48).reshape(6, 8) * 7 + 11) % vocab).to(scorer.device)
    nxt = ((torch.arange(24).reshape(6, 4) * 5 + 3) % vocab).to(scorer.device)
    mask = torch.tensor([[1] * 7 + [0] + [1] * 4] * 6, device=scorer.device)
    pos = torch.arange(7, 11, device=scorer.device).repeat(6, 1)
    threads = torch.get_num_threads()

    def run(n: int) -> list[torch.Tensor]:
        torch.set_num_threads(n)
        rule.on = False  # the forwards below run on ``n`` threads whatever their size
        try:
            hidden, cache = scorer.forward(ids, want_cache=True)
            kv = [t.clone() for layer in cache_tensors(cache) for t in layer]
            cont, _ = scorer.forward(nxt, cache=cache, attention_mask=mask, position_ids=pos)
        finally:
            rule.on = True
            torch.set_num_threads(threads)
        return [hidden, cont, *kv]

    one, many = run(1), run(max(2, threads))
    return all(torch.equal(a, b) for a, b in zip(one, many))



def on_main_thread() -> bool:
    """Whether the caller is the process's main thread."""
    return threading.current_thread() is threading.main_thread()


def off_main_thread(fn: Callable[[], T]) -> T:
    """``fn()`` run on a helper thread while the main thread waits (called from any other thread: run there).

    The process's main thread pays for torch's intra-op barriers far more than any other thread: the default model
    scored 192 bundled sentences in 93.7 and 234.7 s wall (39.8 and 59.9 CPU s) on the main thread, 29.2 and 34.9 s
    (10.1 and 10.2 CPU s) on a second thread, alternating, identical bits (load 9 to 11; docs/performance.md, "Issue
    44, fourth session"). The provider's worker is such a thread already; this gives direct callers
    (``score_texts``, the scorer process) the same."""
    if not on_main_thread():
        return fn()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as ex:  # handed to the caller
            box["error"] = ex

    helper = threading.Thread(target=run, name="stereoprobe-scoring", daemon=True)
    helper.start()
    helper.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
