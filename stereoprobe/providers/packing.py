"""Row packing: the per-token modules of a causal model's body skip the padding positions of a batch (CPU).

A scoring batch is right-padded to its canonical width (:mod:`.planning`), so up to three positions in four of a
short continuation are padding (about 27 % of the body's positions on the GlobalBias sentences). The modules
that act on each position alone, the linear layers (attention's projections) and the feed-forward block
(``mlp``), need not run on them: while rows are set (:meth:`RowPacking.rows_of`), a forward pre-hook hands such
a module only the real positions' rows, and a forward hook puts its output back at their places, zeros at the
padding positions. Attention keeps the padded layout, so its shapes, and the canonical widths that make a
sequence's result independent of its companions, do not change.

The padding positions never reach a real one (right padding: causal attention, and the continuation's attention
mask hides the prefix padding), and a float32 matrix product's row on CPU does not depend on how many rows the
product has once it has ``MIN_ROWS`` rows (packing is skipped below that): the real positions' results are the
unpacked forward's, bit for bit. :meth:`RowPacking.check` verifies it once per model on a padded batch against
the unpacked forward (hidden states and key/value cache at the real positions) and turns packing off when they
differ (a model whose per-token modules do more than act per position); ``tests/providers/test_packing.py``.

CPU only: on CUDA the fixed micro-batch shapes and CUDA graphs need shapes that do not depend on the data.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import torch
from torch import nn

PACKING_ATTR = "_stereoprobe_row_packing"
PACKED_NAMES = ("mlp", "feed_forward", "ffn")  # a decoder layer's feed-forward block, packed as one module


def packable_modules(body: nn.Module) -> list[nn.Module]:
    """The body's per-position modules to pack: feed-forward blocks (whole) and every other linear layer."""
    blocks = [m for name, m in body.named_modules() if name.rsplit(".", 1)[-1] in PACKED_NAMES]
    inside = {id(sub) for b in blocks for sub in b.modules()}
    linears = [m for m in body.modules() if isinstance(m, nn.Linear) and id(m) not in inside]
    return blocks + linears


class RowPacking:
    """Hooks on a body's per-position modules that, while :meth:`rows_of` is active, run them on the real rows only."""

    def __init__(self, body: nn.Module, min_rows: int) -> None:
        self.min_rows = min_rows
        self.on = True
        self.status = "on"
        self._state = threading.local()  # the rows of the forward running on this thread (one worker per provider)
        self.modules = packable_modules(body)
        for m in self.modules:
            m.register_forward_pre_hook(self._pre)
            m.register_forward_hook(self._post)

    @contextmanager
    def rows_of(self, lengths: Sequence[int], width: int) -> Iterator[None]:
        """Within the block, packed modules see only the first ``lengths[b]`` positions of each row ``b`` of a
        ``(len(lengths), width)`` batch (nothing is packed when off, or when fewer than ``min_rows`` are real
        or none is padding)."""
        real = sum(min(n, width) for n in lengths)
        if not self.on or not self.modules or real < self.min_rows or real == len(lengths) * width:
            yield
            return
        mask = torch.arange(width)[None, :] < torch.tensor(list(lengths))[:, None]
        st = self._state
        st.rows, st.shape, st.packed, st.last = mask.reshape(-1).nonzero()[:, 0], (len(lengths), width), set(), None
        try:
            yield
        finally:
            st.rows = st.last = None
            st.packed = set()

    def _pre(self, module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        st = self._state
        rows = getattr(st, "rows", None)
        if rows is None or not args or not isinstance(args[0], torch.Tensor):
            return None
        x = args[0]
        if x.dim() != 3 or tuple(x.shape[:2]) != st.shape:
            return None
        if st.last is not None and st.last[0] is x:  # attention's q, k and v projections share their input
            packed = st.last[1]
        else:
            packed = x.reshape(-1, x.shape[-1]).index_select(0, rows.to(x.device))
            st.last = (x, packed)
        st.packed.add(id(module))
        return (packed, *args[1:])

    def _post(self, module: nn.Module, args: tuple[Any, ...], out: Any) -> Any:
        st = self._state
        if id(module) not in getattr(st, "packed", ()):
            return None
        st.packed.discard(id(module))
        assert st.rows is not None and isinstance(out, torch.Tensor)
        full = out.new_zeros(st.shape[0] * st.shape[1], out.shape[-1])
        full.index_copy_(0, st.rows.to(out.device), out)
        return full.view(*st.shape, out.shape[-1])


class PackedScorer(Protocol):
    """What packing reads of a causal scorer (``scoring.CausalScorer``, which imports this module)."""

    device: torch.device
    split: bool
    body: nn.Module
    model: nn.Module
    packing: RowPacking | None

    def forward(self, ids: torch.Tensor, cache: Any = None, want_cache: bool = False,
                **extra: Any) -> tuple[torch.Tensor, Any]: ...


def attach_packing(scorer: PackedScorer, min_rows: int) -> None:
    """Give a CPU causal scorer in split mode its :class:`RowPacking` (``scorer.packing``), checked once;
    products of fewer than ``min_rows`` rows are never packed."""
    if scorer.device.type != "cpu" or not scorer.split:
        return
    packing = getattr(scorer.body, PACKING_ATTR, None)  # one per model object: scorers sharing a model share it
    if isinstance(packing, RowPacking) and packing.min_rows == min_rows:
        scorer.packing = packing
        return
    packing = RowPacking(scorer.body, min_rows=min_rows)
    setattr(scorer.body, PACKING_ATTR, packing)
    scorer.packing = packing
    if not packing.modules:
        packing.on, packing.status = False, "off: no per-position modules found"
        return
    if not check(scorer, packing):
        packing.on, packing.status = False, "off: packed forward differs from the unpacked one on this model"


@torch.inference_mode()
def check(scorer: PackedScorer, packing: RowPacking) -> bool:
    """Whether a padded batch's real positions get the same hidden states and key/value cache, bit for bit,
    with packing as without (a 6-row batch of width 8 with 1 to 8 real positions per row, then its cache
    continued by 2 or 3 positions)."""
    vocab = int(scorer.model.config.vocab_size)
    lengths, cont_lengths = [8, 5, 1, 6, 3, 7], [3, 2, 3, 3, 2, 3]
    ids = (torch.arange(48).reshape(6, 8) * 7 + 11) % vocab
    ids = ids.to(scorer.device)

    def run(pack: bool) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
        packing.on = pack
        with packing.rows_of(lengths, 8):
            hidden, cache = scorer.forward(ids, want_cache=True)
        kv = [t for layer in _cache_tensors(cache) for t in layer]
        nxt = ((torch.arange(18).reshape(6, 3) * 5 + 3) % vocab).to(scorer.device)
        mask = torch.tensor([[1] * n + [0] * (8 - n) + [1] * 3 for n in lengths], device=scorer.device)
        pos = torch.tensor([list(range(n, n + 3)) for n in lengths], device=scorer.device)
        with packing.rows_of(cont_lengths, 3):
            cont, _ = scorer.forward(nxt, cache=cache, attention_mask=mask, position_ids=pos)
        return hidden, kv, cont

    try:
        plain, packed = run(False), run(True)
    finally:
        packing.on = True
    real = torch.arange(8)[None, :] < torch.tensor(lengths)[:, None]
    cont_real = torch.arange(3)[None, :] < torch.tensor(cont_lengths)[:, None]
    same = torch.equal(plain[0][real], packed[0][real]) and torch.equal(plain[2][cont_real], packed[2][cont_real])
    for a, b in zip(plain[1], packed[1]):  # (batch, heads, positions, dim): the real positions only
        same = same and torch.equal(a.transpose(1, 2)[real], b.transpose(1, 2)[real])
    return same


def _cache_tensors(cache: Any) -> list[tuple[torch.Tensor, ...]]:
    """Each layer's (keys, values) of a transformers cache (``layers`` of recent versions, else the legacy tuple)."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(layer.keys, layer.values) for layer in layers]
    return [tuple(t) for t in cache.to_legacy_cache()]
