"""Fixed micro-batch shapes: batch-invariant causal scoring on GPUs (pure Python).

A GPU's matrix-product kernels choose their tiling and reduction order from the shape of the product, so in
bfloat16 (and, less, in float32) a row's result moves with the number of rows it was computed beside. The
planner (:mod:`.planning`) already makes a sequence's *widths* a function of the sequence alone; this module
fixes the *row counts* too, so that **no kernel's shape depends on the companions, the batch size or the
concurrency**:

- every forward pass of a plan key (shared-prefix width ``pw``, continuation width ``w``) has exactly
  :meth:`MicroBatchShape.rows` sequences, ``tokens // (pw + w)`` (a partial micro-batch is filled with copies
  of its first sequence, whose results are dropped); its shared-prefix pass has the same number of rows;
- the output projection runs in slices of exactly ``project_rows`` rows (the last slice zero-filled).

The shapes are then a function of ``(pw, w)`` and two constants, and a sequence's log-probabilities are
bit-identical whatever ``batch_size``, ``batch_tokens``, the concurrency and the companions, as long as each
kernel computes a row of its output from that row's inputs alone for a fixed shape (cuBLAS' and the attention
kernels' tilings do; split-K reductions are chosen per shape, and are then the same for every row). This is
the route of vLLM's batch-invariant mode (``VLLM_BATCH_INVARIANT=1``), which instead replaces the kernels by
batch-invariant ones; here the kernels are the framework's and their shapes are pinned. The price is the
padding of partial micro-batches (at most one per plan key and worker round) and of the last projection slice.

``batch_size`` and ``batch_tokens`` keep their meaning for the non-invariant path only; with fixed shapes
they decide nothing about the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FIXED_TOKENS", "PROJECT_ROWS", "BatchShape", "MicroBatchShape", "auto_flag", "resolve_shape"]

FIXED_TOKENS = 4096  # padded tokens of every fixed-shape forward pass (rows x (prefix width + width))
PROJECT_ROWS = 1024  # rows of every fixed-shape output-projection product


@dataclass(frozen=True)
class BatchShape:
    """The shape plan of one forward batch of the causal scorer, one object from the planner to the kernels.

    ``prefix_width``/``width``: the canonical padded widths of the shared prefixes (0: none) and of the
    continuations (0: the canonical width of the batch's longest member). Fixed shapes only (0 otherwise):
    ``rows`` sequences per forward (copies of the first member fill a partial batch), ``prefix_rows`` rows in
    the shared-prefix pass, and output-projection products of exactly ``project_rows`` rows. Hashable (a
    plan key)."""

    prefix_width: int = 0
    width: int = 0
    rows: int = 0
    prefix_rows: int = 0
    project_rows: int = 0


@dataclass(frozen=True)
class MicroBatchShape:
    """The two constants that fix every kernel shape of the causal scorer."""

    tokens: int = FIXED_TOKENS
    project_rows: int = PROJECT_ROWS

    def __post_init__(self) -> None:
        if self.tokens < 1 or self.project_rows < 1:
            raise ValueError(f"micro-batch tokens and projection rows must be >= 1, got {self.tokens}, "
                             f"{self.project_rows}")

    def rows(self, prefix_width: int, width: int) -> int:
        """Sequences in every forward pass of the plan key ``(prefix_width, width)``."""
        return max(1, self.tokens // max(1, prefix_width + width))

    def plan(self, prefix_width: int, width: int, prefix_rows: int) -> BatchShape:
        """The :class:`BatchShape` of a batch of plan key ``(prefix_width, width)``; ``prefix_rows``: its
        prefix pass's row count (:func:`stereoprobe.providers.planning.prefix_rows`; 0 without prefixes)."""
        return BatchShape(prefix_width, width, self.rows(prefix_width, width), prefix_rows, self.project_rows)


def auto_flag(value: Any, name: str) -> bool | None:
    """``None`` for auto/unset, else the boolean; anything else is an error naming the setting."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text == "auto":
        return None
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"transformers provider: {name} must be true, false or auto, got {value!r}")


def resolve_shape(batch_invariant: Any, microbatch_tokens: Any, device_type: str) -> MicroBatchShape | None:
    """The fixed shape of ``-M batch_invariant`` (auto: on for CUDA, where kernels depend on the row count;
    off elsewhere, where the float32 kernels are row-independent once a product has 16 rows, which the
    scorer ensures) and ``-M microbatch_tokens``; ``None`` when fixed shapes are off."""
    on = auto_flag(batch_invariant, "batch_invariant")
    if on is None:
        on = device_type == "cuda"
    if not on:
        return None
    if microbatch_tokens is None or str(microbatch_tokens).strip().lower() == "auto":
        return MicroBatchShape()
    try:
        tokens = int(microbatch_tokens)
    except ValueError:
        raise ValueError(f"transformers provider: microbatch_tokens must be a positive integer, "
                         f"got {microbatch_tokens!r}") from None
    return MicroBatchShape(tokens=tokens, project_rows=min(PROJECT_ROWS, tokens))
