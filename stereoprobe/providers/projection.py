"""The causal scorer's output projection on CPU, in blocks of rows and of the vocabulary (cache-sized products).

Scoring projects every hidden row that predicts a scored token onto the whole vocabulary (49,152 columns for
SmolLM2) and takes its float32 log-softmax. One product of all a batch's rows writes a logit matrix of hundreds of
megabytes that leaves the caches, and the log-softmax then reads it back from memory: on a 2-core AVX2 CPU the
product ran at a quarter of the speed of the same product in blocks (``bench/projection.py``).
:class:`BlockedHead` computes the logits of ``row_block`` rows at a time into one reused buffer, one product of
``vocab_block`` vocabulary columns at a time written in place into its columns, so each product's output stays
in cache; the row block's log-softmax then runs on the buffer while it is still in cache.

**Threads.** With torch's 2 intra-op threads, every one of these small products and log-softmaxes is an
OpenMP parallel region whose threads meet at a barrier; on a busy machine a descheduled thread stalls each
region, and the many small regions ran twice as slow as the one large product. The row blocks therefore run on
as many Python threads as torch has intra-op threads, each block's operations on one thread (torch releases the
GIL inside them), torch set to one intra-op thread meanwhile (:meth:`BlockedHead.map`).

**Same numbers.** Each logit is the same dot product over the whole hidden width (the inner dimension is never
split), computed by the same kernel call (``mm`` without bias, ``addmm`` with one: what ``F.linear`` calls for
2-D input), so on CPU the logits are the unblocked product's bit for bit, and the log-softmax of a row does
not depend on the other rows of its block: the log-probabilities equal the unblocked path's exactly
(``tests/providers/test_projection.py`` checks both against the unblocked ``nn.Linear`` and
``F.cross_entropy``). Row-count invariance keeps the scorer's rule: every product has at least ``MIN_ROWS``
rows, or exactly the fixed ``slice_rows`` rows of a :class:`.microbatch.MicroBatchShape`.

**Fused log-probabilities.** Without top-k, a row block's 25 MB of logits written and read back by the
cross-entropy cost memory traffic the two threads share; :meth:`BlockedHead.target_logprobs` takes each chunk's
row maxima and sums of exponentials while the chunk is in L2 and combines them once (an online log-sum-exp). It
rounds differently from torch's ``cross_entropy`` (same quantity, float32): it stays within
``4 eps32 max(|log-sum-exp|, |log p|, 1)`` of a float64 log-softmax of the same logits (``cross_entropy``
within 8), and each row's value depends on that row alone (per-row reductions over a fixed chunking), bit for
bit whatever the row count and the threads (``tests/providers/test_projection.py``). Top-k and the one-token
route keep the full log-softmax.

CPU only, and only for a plain ``nn.Linear`` head without hooks (a model whose head does more keeps the module
call); on CUDA the scorer keeps one product per slice (fixed shapes, :mod:`.microbatch`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import torch
from torch import nn

__all__ = ["CHUNK", "ROW_BLOCK", "VOCAB_BLOCK", "BlockedHead", "blocked_head", "row_slices"]

T = TypeVar("T")
_THREADS_LOCK = threading.Lock()  # one pooled projection at a time sets torch's intra-op thread count

# Block shapes measured by bench/projection.py on the 2-core AMD EPYC (AVX2, L2 1 MB per core, L3 32 MB), hidden
# widths 64 and 576 over 49,152 columns: 128-row blocks keep the row block's float32 logits (25 MB) within L3
# and 1,024 vocabulary columns keep one product's output (512 KB) within L2; see docs/performance.md.
ROW_BLOCK = 128
VOCAB_BLOCK = 1024
# Vocabulary columns per chunk of the fused target log-probabilities (BlockedHead.target_logprobs): 128 rows x
# 1,024 columns of float32 (512 KB) stay in one core's L2 between the product and the exponentials.
CHUNK = 1024


def row_slices(n: int, slice_rows: int, row_block: int, min_rows: int) -> list[slice]:
    """Slices of ``n`` rows (zero rows appended up to the last slice's end) into products: exactly
    ``slice_rows`` rows each when given; else ``row_block`` rows each (``0``: one product of all rows), the last
    one of at least ``min_rows`` rows, so no product has fewer rows than ``min_rows``."""
    size = slice_rows or row_block or max(n, min_rows)
    out, start = [], 0
    while start < n:
        rows = size if slice_rows else max(min(size, n - start), min_rows)
        out.append(slice(start, start + rows))
        start += rows
    return out


class BlockedHead:
    """Float32 logits of a linear output head, one row block at a time, computed in vocabulary blocks into a
    reused per-thread buffer (see the module's docstring)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, vocab_block: int = VOCAB_BLOCK,
                 chunk: int = CHUNK) -> None:
        self.weight = weight
        self.bias = bias
        self.vocab_block = vocab_block
        self.chunk = chunk
        self._local = threading.local()  # each projecting thread's buffer
        self._pool: ThreadPoolExecutor | None = None
        self._pool_size = 0

    def _buffer(self, rows: int) -> torch.Tensor:
        buf: torch.Tensor | None = getattr(self._local, "buf", None)
        if buf is None or buf.shape[0] < rows:
            buf = torch.empty((rows, self.weight.shape[0]), dtype=self.weight.dtype, device=self.weight.device)
            self._local.buf = buf
        return buf[:rows]

    def logits(self, rows: torch.Tensor) -> torch.Tensor:
        """The logits of ``rows`` (one row block) as float32; a view of the buffer when the head is float32,
        valid until this thread's next call."""
        out = self._buffer(rows.shape[0])
        for v in range(0, self.weight.shape[0], self.vocab_block):
            w = self.weight[v : v + self.vocab_block].t()
            if self.bias is None:
                torch.mm(rows, w, out=out[:, v : v + self.vocab_block])
            else:
                torch.addmm(self.bias[v : v + self.vocab_block], rows, w, out=out[:, v : v + self.vocab_block])
        return out.float()

    def target_logprobs(self, rows: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``log_softmax(logits)[i, targets[i]]`` for each row (one row block) of a float32 head, without the
        row block's logits ever held: per chunk of ``chunk`` vocabulary columns, the product into a reused
        L2-sized buffer, the target's logit taken from the chunk that holds it, the row maxima ``m_j`` and the sums
        ``s_j`` of ``exp(x - m_j)`` over the chunk; then ``(x_t - M) - log(sum_j s_j exp(m_j - M))`` with
        ``M = max_j m_j`` (an online log-sum-exp, combined once at the end). Each row's value depends only on
        that row (per-row reductions over a fixed chunking); it differs from the full log-softmax by float32
        rounding only (module docstring, "Fused log-probabilities")."""
        vocab, chunk = self.weight.shape[0], self.chunk
        n, r = -(-vocab // chunk), rows.shape[0]
        buf = self._chunk_buffer(r)
        stats = torch.empty((3, n, r), dtype=torch.float32)  # per chunk: row maxima, sums, target logits
        maxima, sums, target = stats[0], stats[1], stats[2]
        starts = torch.arange(0, vocab, chunk)
        local = (targets[None, :] - starts[:, None]).clamp_(0, chunk - 1)  # each chunk's column of the target
        for j in range(n):
            v = j * chunk
            out, w = buf[:, : min(chunk, vocab - v)], self.weight[v : v + chunk].t()
            if self.bias is None:
                torch.mm(rows, w, out=out)
            else:
                torch.addmm(self.bias[v : v + chunk], rows, w, out=out)
            torch.gather(out, 1, local[j][:, None], out=target[j][:, None])
            torch.amax(out, 1, out=maxima[j])
            torch.sub(out, maxima[j][:, None], out=out).exp_()
            torch.sum(out, 1, out=sums[j])
        # the combination reduces along each row's own contiguous values ([rows, chunks]): a reduction over the
        # outer dimension would vectorize across rows, its order then depending on the row count
        maxima, sums, target = maxima.t().contiguous(), sums.t().contiguous(), target.t().contiguous()
        top = maxima.amax(1, keepdim=True)
        total = sums.mul_(maxima.sub_(top).exp_()).sum(1)
        own = target.gather(1, torch.div(targets, chunk, rounding_mode="floor")[:, None])
        return (own - top)[:, 0] - total.log_()

    def _chunk_buffer(self, rows: int) -> torch.Tensor:
        buf: torch.Tensor | None = getattr(self._local, "chunk", None)
        if buf is None or buf.shape[0] < rows or buf.shape[1] != self.chunk:
            buf = torch.empty((rows, self.chunk), dtype=torch.float32, device=self.weight.device)
            self._local.chunk = buf
        return buf[:rows]

    @property
    def fused(self) -> bool:
        """Whether :meth:`target_logprobs` applies: a float32 head (others keep the full float32 log-softmax
        of their logits, as the unblocked path computes it)."""
        return self.weight.dtype == torch.float32 and (self.bias is None or self.bias.dtype == torch.float32)

    @staticmethod
    def _run(fn: Callable[[slice], T], sl: slice) -> T:
        with torch.inference_mode():  # a pool thread: the caller's inference mode is per thread
            return fn(sl)

    def map(self, rows: torch.Tensor, slices: list[slice], fn: Callable[[slice, torch.Tensor], T]) -> list[T]:
        """``fn(sl, logits of rows[sl])`` for each slice in order, the slices spread over as many threads as
        torch has intra-op threads, each running its operations on one thread (module docstring). ``fn`` must
        be done with the logits when it returns (they are the thread's buffer)."""
        return self.map_slices(slices, lambda sl: fn(sl, self.logits(rows[sl])))

    def map_slices(self, slices: list[slice], fn: Callable[[slice], T]) -> list[T]:
        """``fn(sl)`` for each slice in order, spread over torch's intra-op threads as :meth:`map` does."""
        with _THREADS_LOCK:
            before = torch.get_num_threads()
            threads = min(before, len(slices))
            if threads <= 1:
                return [fn(sl) for sl in slices]
            if self._pool is None or self._pool_size < threads:
                self._pool = ThreadPoolExecutor(threads, thread_name_prefix="stereoprobe-projection")
                self._pool_size = threads
            torch.set_num_threads(1)
            try:
                return list(self._pool.map(lambda sl: self._run(fn, sl), slices))
            finally:
                torch.set_num_threads(before)


def blocked_head(head: nn.Module | None, device: torch.device) -> BlockedHead | None:
    """A :class:`BlockedHead` for a plain ``nn.Linear`` head without hooks on CPU, else ``None``."""
    if device.type != "cpu" or type(head) is not nn.Linear:
        return None
    hooks = nn.modules.module
    if head._forward_hooks or head._forward_pre_hooks or hooks._global_forward_hooks or hooks._global_forward_pre_hooks:
        return None
    return BlockedHead(head.weight.detach(), None if head.bias is None else head.bias.detach())
