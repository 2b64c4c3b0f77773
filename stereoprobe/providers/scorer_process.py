"""The causal scorer in a process of its own (``-M scorer_process=true``; off by default).

In process, inspect's per-sample Python work (building messages, events, logging, scoring samples) and the
provider's worker thread, which prepares batches and launches the model's kernels, share one interpreter and
its lock: while inspect holds it, no kernel is launched and the GPU idles (round 2 measured it busy 60 % of a
GlobalBias run). With this option the scoring plans run in a second process, spawned once per provider
instance, which loads the same model (same name, device, dtype, tokenizer and load arguments: its own copy of
the weights) and answers :meth:`ScorerProcess.score` calls over a pipe; the provider's worker thread waits on
the pipe without holding the lock. Only the scoring route moves (prompt log-probabilities: GlobalBias, DBB-SG);
generation and the one-token answers of DBB's log-probability mode stay in process.

The numbers are the in-process scorer's (the same :class:`~.scoring.CausalScorer` on the same weights, the
same plans): ``tests/providers/test_scorer_process.py`` checks a GlobalBias run through ``inspect eval`` in
float32 on CPU against the in-process run.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.scoring import TokenScores

__all__ = ["LoadSpec", "ScorerProcess", "scorer_process"]


@dataclass(frozen=True)
class LoadSpec:
    """What the scorer process loads: the arguments of :func:`stereoprobe.providers.loading.load`, the padding
    token, the CUDA-graph choice of the provider (:func:`stereoprobe.providers.graphs.graph_choice`) and its
    cached-forward choice (:func:`stereoprobe.providers.cached_graphs.static_cache_choice`, with the arena's
    tokens), so the process scores exactly as the provider's own scorer would."""

    model_name: str
    device: str
    dtype: str
    kind: str
    tokenizer_id: str | None
    load_kwargs: tuple[tuple[str, Any], ...]
    pad_id: int
    graphs: tuple[bool, str]
    cached: tuple[bool, str] = (False, "off: not asked")
    arena_tokens: int = 0


def _serve(conn: Any, spec: LoadSpec) -> None:
    """The scorer process: load, say ready (or why not), then answer score calls until the pipe closes."""
    try:
        from stereoprobe.providers.cached_graphs import attach_cached
        from stereoprobe.providers.graphs import GraphedForward
        from stereoprobe.providers.loading import load
        from stereoprobe.providers.scoring import CausalScorer

        model, _, _ = load(spec.model_name, spec.device, getattr(torch, spec.dtype), spec.kind, spec.tokenizer_id,
                           dict(spec.load_kwargs))
        scorer = CausalScorer(model, pad_id=spec.pad_id)
        scorer.graphs = GraphedForward(lambda ids: scorer.forward(ids)[0], *spec.graphs)  # type: ignore[attr-defined]
        attach_cached(scorer, spec.cached, spec.graphs[0], spec.arena_tokens)
    except BaseException as ex:  # noqa: BLE001 - reported to the provider, which raises it
        conn.send(("error", f"{type(ex).__name__}: {ex}"))
        return
    conn.send(("ready", None))
    while True:
        try:
            args = conn.recv()
        except EOFError:  # the provider's process closed the pipe or ended
            return
        try:
            conn.send(("ok", scorer.score(*args)))
        except Exception as ex:  # noqa: BLE001 - handed to the awaiting request, as raised where picklable
            try:
                conn.send(("error", ex))
            except Exception:  # noqa: BLE001
                conn.send(("error", RuntimeError(f"scorer process: {type(ex).__name__}: {ex}")))


class ScorerProcess:
    """A spawned process holding a :class:`~.scoring.CausalScorer` of ``spec``'s model (module docstring);
    :meth:`score` has the scorer's signature. Started on the first call; ends with the provider's process."""

    def __init__(self, spec: LoadSpec) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._conn: Any = None
        self._proc: Any = None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")  # CUDA cannot be used in a forked child
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, self.spec), name="stereoprobe-scorer", daemon=True)
        self._proc.start()
        child.close()
        status, detail = parent.recv()
        if status != "ready":
            self._proc.join(10)
            raise RuntimeError(f"transformers provider: the scorer process (-M scorer_process=true) could not "
                               f"load {self.spec.model_name}: {detail}")
        self._conn = parent

    def score(self, seqs: Sequence[Sequence[int]], policy: BatchPolicy, prefix_sharing: bool = True,
              top_k: int = 0, groups: Sequence[Hashable] | None = None) -> list[TokenScores]:
        with self._lock:  # one plan at a time, as the in-process worker thread runs them
            if self._conn is None:
                self._start()
            self._conn.send(([list(s) for s in seqs], policy, prefix_sharing, top_k,
                             None if groups is None else list(groups)))
            try:
                status, result = self._conn.recv()
            except EOFError:
                self._conn = None
                raise RuntimeError("transformers provider: the scorer process (-M scorer_process=true) ended "
                                   "while scoring") from None
        if status != "ok":
            raise result
        return result

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._proc is not None:
                self._proc.join(10)
                if self._proc.is_alive():
                    self._proc.terminate()
                self._proc = None


def scorer_process(on: bool, spec: LoadSpec) -> ScorerProcess | None:
    """The provider's scorer process for ``-M scorer_process`` (None when off); refused for a model whose
    scoring does not run on the causal scorer (masked, encoder-decoder)."""
    if not on:
        return None
    if spec.kind != "causal":
        from stereoprobe.providers.validation import ModelArgError

        raise ModelArgError(f"transformers provider: scorer_process=true needs a causal model; {spec.model_name} "
                            f"is {spec.kind}")
    return ScorerProcess(spec)
