"""CUDA graphs per plan key for the causal scorer's cache-free forward passes (``-M cuda_graphs``).

Eager transformers launches every kernel of every layer from Python, on the interpreter that also runs inspect;
on a fast card the host then leaves the device idle. Fixed micro-batch shapes (:mod:`.microbatch`) make every
forward pass of a plan key the same shape, so each shape can be **captured once as a CUDA graph and replayed**:
one launch per forward instead of hundreds. Here the forwards without a key/value cache (texts scored without a
shared prefix); the continuations of shared prefixes go through the fixed-shape cache of :mod:`.cached_graphs`
(transformers' dynamic cache changes its tensors from call to call, which a graph cannot follow), whose graphs
are this class too. The shared-prefix passes themselves stay eager.

Selection (:func:`graph_choice`): ``auto`` (default) is on where it can work, CUDA with fixed shapes; ``true``
asks for it (refused in one line where it cannot be); ``false`` is off. The first time a shape is seen its
graph is captured and its replay compared with the eager forward on the same batch; a capture that fails or a
replay that differs turns graphs off for the provider, and the reason is recorded (:attr:`GraphedForward.status`,
in every grouped output's settings metadata). Nothing of this runs on a CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from stereoprobe.errors import reason
from stereoprobe.providers.microbatch import MicroBatchShape, auto_flag

__all__ = ["CUDA_GRAPHS_KEY", "GraphedForward", "graph_choice"]

CUDA_GRAPHS_KEY = "cuda_graphs"  # settings-metadata field: "on (N shapes)", "off: reason" or "fell back: reason"


def graph_choice(flag: Any, device_type: str, shape: MicroBatchShape | None) -> tuple[bool, str]:
    """(use graphs?, why not) for ``-M cuda_graphs`` on this device and shape setting; ``true`` where graphs
    cannot work is an error naming the setting."""
    asked = auto_flag(flag, "cuda_graphs")
    if asked is False:
        return False, "off: -M cuda_graphs=false"
    why = ("off: not a CUDA device" if device_type != "cuda"
           else "off: shapes are not fixed (-M batch_invariant=false)" if shape is None else "")
    if why and asked:
        raise ValueError(f"transformers provider: cuda_graphs=true needs a CUDA device and fixed shapes ({why[5:]})")
    return not why, why


class GraphedForward:
    """``forward(*inputs) -> output`` through one CUDA graph per input shapes, or eagerly once off. The inputs
    are copied into the graph's static inputs at every replay (a cache-free forward: the token ids; a cached
    one, :mod:`.cached_graphs`: ids, mask and positions, its fixed key/value buffers being static memory).
    ``max_graphs`` (0: no limit): shapes captured at most, the others run eagerly."""

    def __init__(self, forward: Callable[..., torch.Tensor], on: bool, reason: str = "", max_graphs: int = 0) -> None:
        self.forward, self.on, self.reason, self.max_graphs = forward, on, reason, max_graphs
        self.graphs: dict[tuple[tuple[int, ...], ...], tuple[Any, tuple[torch.Tensor, ...], torch.Tensor]] = {}
        self.pool: Any = None  # one memory pool for every graph: outputs are read before the next forward
        self.eager_shapes: set[tuple[tuple[int, ...], ...]] = set()  # shapes run eagerly: the limit was reached

    @property
    def status(self) -> str:
        if not self.on:
            return self.reason
        beyond = (f", {len(self.eager_shapes)} more eager beyond the limit of {self.max_graphs}" if self.eager_shapes
                  else "")
        return f"on ({len(self.graphs)} shapes captured{beyond})"

    def __call__(self, *inputs: torch.Tensor) -> torch.Tensor:
        if not self.on:
            return self.forward(*inputs)
        key = tuple(tuple(t.shape) for t in inputs)
        if key not in self.graphs:
            if self.max_graphs and len(self.graphs) >= self.max_graphs:
                self.eager_shapes.add(key)
                return self.forward(*inputs)
            try:
                eager = self.forward(*inputs)
                self.graphs[key] = self._capture(*inputs)
                graph, static_in, static_out = self.graphs[key]
                for dst, src in zip(static_in, inputs):
                    dst.copy_(src)
                graph.replay()
                if not torch.equal(static_out, eager):
                    raise RuntimeError("the replayed graph differs from the eager forward")
                return eager
            except Exception as ex:  # noqa: BLE001 - any capture failure: eager from now on, reason recorded
                self.on, self.graphs = False, {}
                self.reason = f"fell back: {reason(ex)}"[:300]
                return self.forward(*inputs)
        graph, static_in, static_out = self.graphs[key]
        for dst, src in zip(static_in, inputs):
            dst.copy_(src)
        graph.replay()
        return static_out  # overwritten by the next replay of this shape: read before the next forward

    def _capture(self, *inputs: torch.Tensor) -> tuple[Any, tuple[torch.Tensor, ...], torch.Tensor]:
        static_in = tuple(t.clone() for t in inputs)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up outside the graph (lazy initialisations, autotuning)
            for _ in range(2):
                self.forward(*static_in)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        self.pool = self.pool if self.pool is not None else torch.cuda.graph_pool_handle()
        with torch.cuda.graph(graph, pool=self.pool):
            static_out = self.forward(*static_in)
        return graph, static_in, static_out
