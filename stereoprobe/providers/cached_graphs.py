"""Prefix-sharing continuation forwards through a fixed-shape key/value cache, capturable as CUDA graphs.

The causal scorer runs a batch's shared prefixes once and continues every member from their key/value cache
(:mod:`.scoring`). transformers' dynamic cache concatenates the continuation's keys and values onto new tensors
at every call, which a CUDA graph cannot follow, so those forwards stayed eager (:mod:`.graphs` captures the
cache-free ones only). Here the continuation runs through a **fixed-shape cache of the provider's own**
(:class:`FixedCache`): per layer, one buffer of ``rows x heads x (prefix width + width) x head size`` whose first
``prefix width`` positions are filled with the members' prefix keys/values before the forward, and whose last
``width`` positions the forward writes in place. The attention mask (4-D, made by transformers'
``create_causal_mask`` outside the graph, exactly as the model makes it from the 2-D mask) and the positions are
inputs; every shape is a function of the plan key ``(rows, prefix width, width)``, so with fixed micro-batch
shapes (:mod:`.microbatch`) each key is **captured once and replayed** (:class:`.graphs.GraphedForward`: the
first replay is compared with the eager forward; a failed capture or a difference turns these graphs off, reason
recorded). The buffers of every key are views of one arena (one micro-batch's keys/values), so the memory does
not grow with the number of keys; at most :data:`MAX_CACHED_GRAPHS` keys are captured (the others run the same
fixed-cache forward eagerly).

The fixed cache holds the same keys and values as the dynamic one, in tensors of the same shapes, with the same
mask: on CPU in float32 the log-probabilities are bit-identical to the dynamic-cache path
(``tests/providers/test_cached_graphs.py``). ``-M static_cache`` selects the path (auto: with CUDA graphs; true:
also without them, e.g. on CPU, for the agreement checks); ``-M cuda_graphs`` stays the one switch of the graphs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
from transformers.cache_utils import Cache, DynamicLayer
from transformers.masking_utils import create_causal_mask

from stereoprobe.providers.graphs import GraphedForward
from stereoprobe.providers.microbatch import auto_flag
from stereoprobe.providers.scoring import CausalScorer

__all__ = ["MAX_CACHED_GRAPHS", "CachedForward", "FixedCache", "FixedLayer", "attach_cached", "static_cache_choice"]

MAX_CACHED_GRAPHS = 64  # plan keys captured at most; GlobalBias-/DBB-shaped plans meet 2-3 (bench/cached_forwards.py)


def static_cache_choice(flag: Any, graphs_on: bool, graphs_reason: str) -> tuple[bool, str]:
    """(use the fixed-shape cache?, why the cached forwards are not graphed) for ``-M static_cache``: auto follows
    the graphs (the fixed cache is what makes the cached forwards capturable); ``true`` also without graphs (same
    numbers, eager); ``false``: transformers' dynamic cache, cached forwards eager."""
    asked = auto_flag(flag, "static_cache")
    if asked is False:
        return False, "off: -M static_cache=false" if graphs_on else graphs_reason
    return (graphs_on if asked is None else True), graphs_reason


def attach_cached(scorer: CausalScorer, choice: tuple[bool, str], graphs_on: bool, arena_tokens: int) -> None:
    """Give ``scorer`` its cached-forward path: the fixed-shape cache (graphed when ``graphs_on``) when
    ``choice`` (:func:`static_cache_choice`) says so, else the dynamic cache with the reason recorded."""
    use, why = choice
    if use:
        scorer.cached = CachedForward(scorer.forward, scorer.model.config, graphs_on, why, arena_tokens=arena_tokens)
    else:
        scorer.cached, scorer.cached_off = None, why


class FixedLayer(DynamicLayer):
    """One layer's keys/values in fixed buffers ``[rows, heads, offset + width, head size]``: positions before
    ``offset`` are the shared prefixes (filled before the forward), the forward writes the rest in place and
    attends to the whole buffer, as the dynamic layer attends to its concatenation."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, offset: int) -> None:
        super().__init__()
        self.keys, self.values, self.offset = keys, values, offset
        self.device, self.is_initialized = keys.device, True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
               ) -> tuple[torch.Tensor, torch.Tensor]:
        self.keys[:, :, self.offset:].copy_(key_states)
        self.values[:, :, self.offset:].copy_(value_states)
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.offset

    def get_mask_sizes(self, query: Any) -> tuple[int, int]:
        """(key length, offset) of the mask: the query length (older transformers: the cache positions) after
        the prefix."""
        return self.offset + (query if isinstance(query, int) else int(query.shape[0])), 0

    def get_max_length(self) -> int:
        return self.keys.shape[-2]


class FixedCache(Cache):
    """A cache of :class:`FixedLayer` (one per model layer), whose buffers are views of a shared arena."""

    def __init__(self, layers: list[FixedLayer]) -> None:
        super().__init__(layers=layers)  # type: ignore[arg-type]

    def fill(self, prefix_cache: Any) -> None:
        """Copy the members' prefix keys/values (a dynamic cache gathered per member) into the buffers."""
        for mine, theirs in zip(self.layers, prefix_cache.layers):
            mine.keys[:, :, : mine.offset].copy_(theirs.keys)  # type: ignore[union-attr]
            mine.values[:, :, : mine.offset].copy_(theirs.values)  # type: ignore[union-attr]


class CachedForward:
    """``(ids, prefix cache, 2-D mask, positions) -> hidden``: a continuation forward through a :class:`FixedCache`
    per plan key, graphed per key when ``graphs_on`` (:class:`.graphs.GraphedForward`), else eager."""

    def __init__(self, forward: Callable[..., tuple[torch.Tensor, Any]], config: Any, graphs_on: bool,
                 reason: str = "", max_graphs: int = MAX_CACHED_GRAPHS, arena_tokens: int = 0) -> None:
        self.forward, self.config, self.arena_tokens = forward, config, arena_tokens
        self.runner = GraphedForward(self._run, graphs_on, reason, max_graphs=max_graphs)
        self.caches: dict[tuple[int, int, int], FixedCache] = {}
        self.arena: torch.Tensor | None = None
        self.dynamic = False  # the model's mask is not one tensor: transformers' dynamic cache, reason recorded
        self._mask_params = set(inspect.signature(create_causal_mask).parameters)  # names moved across versions

    @property
    def status(self) -> str:
        """The graphs' status (:attr:`.graphs.GraphedForward.status`), saying when the fixed cache runs eagerly."""
        eager = not self.runner.on and not self.runner.reason.startswith("fell back")
        return f"{self.runner.reason} (fixed-shape cache, eager)" if eager else self.runner.status

    def __call__(self, ids: torch.Tensor, prefix_cache: Any, attention_mask: torch.Tensor,
                 position_ids: torch.Tensor) -> torch.Tensor:
        if self.dynamic:
            return self.forward(ids, cache=prefix_cache, attention_mask=attention_mask, position_ids=position_ids)[0]
        rows, width = ids.shape
        key = (rows, attention_mask.shape[1] - width, width)
        cache = self._cache(key, prefix_cache)
        cache.fill(prefix_cache)
        mask = create_causal_mask(**self._mask_args(ids, cache, attention_mask, position_ids, key[1]))
        if not isinstance(mask, torch.Tensor):  # e.g. flash attention's 2-D mask: the dynamic cache from now on
            self.runner.on, self.dynamic = False, True
            self.runner.reason = f"fell back: the model's attention takes no mask tensor ({type(mask).__name__})"
            return self.forward(ids, cache=prefix_cache, attention_mask=attention_mask, position_ids=position_ids)[0]
        return self.runner(ids, mask, position_ids)

    def _mask_args(self, ids: torch.Tensor, cache: FixedCache, attention_mask: torch.Tensor,
                   position_ids: torch.Tensor, prefix_width: int) -> dict[str, Any]:
        """``create_causal_mask``'s arguments as the model passes them, under this transformers' names."""
        rows, width = ids.shape
        embeds = torch.empty((rows, width, 1), dtype=cache.layers[0].keys.dtype, device=ids.device)  # type: ignore
        args = {"config": self.config, "attention_mask": attention_mask, "position_ids": position_ids,
                ("inputs_embeds" if "inputs_embeds" in self._mask_params else "input_embeds"): embeds,
                ("cache" if "cache" in self._mask_params else "past_key_values"): cache}
        if "cache_position" in self._mask_params:
            args["cache_position"] = torch.arange(prefix_width, prefix_width + width, device=ids.device)
        return args

    def _run(self, ids: torch.Tensor, mask: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        cache = self.caches[(ids.shape[0], mask.shape[-1] - ids.shape[1], ids.shape[1])]
        return self.forward(ids, cache=cache, attention_mask=mask, position_ids=position_ids)[0]

    def _cache(self, key: tuple[int, int, int], prefix_cache: Any) -> FixedCache:
        """The fixed cache of a plan key: per layer, keys and values as views of the arena (grown, never
        shrunk: the buffers of captured keys keep their storage alive)."""
        if key in self.caches:
            return self.caches[key]
        rows, prefix_width, width = key
        shapes = [(tuple(layer.keys.shape), tuple(layer.values.shape)) for layer in prefix_cache.layers]
        if any(k[0] != rows or k[2] != prefix_width for k, _ in shapes):
            raise AssertionError(f"prefix cache shapes {shapes[0]} do not fit the batch {key}")
        sizes = [rows * k[1] * (prefix_width + width) * k[3] + rows * v[1] * (prefix_width + width) * v[3]
                 for k, v in shapes]
        first = prefix_cache.layers[0].keys
        if self.arena is None or self.arena.numel() < sum(sizes):
            per_token = sum(sizes) // (rows * (prefix_width + width))
            self.arena = torch.empty(max(sum(sizes), per_token * self.arena_tokens), dtype=first.dtype,
                                     device=first.device)
        layers, at = [], 0
        for k, v in shapes:
            nk, nv = (rows, k[1], prefix_width + width, k[3]), (rows, v[1], prefix_width + width, v[3])
            keys = self.arena[at : at + _numel(nk)].view(nk)
            at += _numel(nk)
            values = self.arena[at : at + _numel(nv)].view(nv)
            at += _numel(nv)
            layers.append(FixedLayer(keys, values, prefix_width))
        cache = FixedCache(layers)
        if self.runner.on:  # graphed keys keep their buffers (bounded by the plan keys); eager ones are rebuilt
            self.caches[key] = cache
        else:
            self.caches = {key: cache}
        return cache


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
