"""Batch sizes of the ``transformers`` provider from free memory and the model's shape.

Scoring batches are cut by a **token budget**: the padded tokens of one forward pass. Each token of a forward
costs, at its peak, its row of output logits (model dtype, then float32 for the log-softmax and the
cross-entropy), its key/value entries in every layer (a shared prefix's cache is repeated per member) and one
layer's activations; the budget is the share :data:`MEMORY_SHARE` of the free memory divided by that cost,
within ``[MIN_TOKENS, MAX_TOKENS]`` (CPU: a lower ceiling, larger forwards do not run faster there).

Generation batches are cut by rows: a row costs the key/value cache of its prompt plus its new tokens and
one row of logits per step (float32 for sampling and the logits processors).

Free memory: ``torch.cuda.mem_get_info`` on CUDA (after the weights are loaded, so the model's own size is
accounted for), available physical memory on CPU, and the recommended working set on MPS.
"""

from __future__ import annotations

import os
from typing import Any

import torch

MEMORY_SHARE = 0.4  # of the free memory, for one forward pass's transient tensors
MIN_TOKENS = 256
MAX_TOKENS = {"cuda": 65_536, "cpu": 4_096, "mps": 8_192}
MAX_GEN_ROWS = {"cuda": 256, "cpu": 16, "mps": 32}


def free_memory(device: torch.device | str) -> int:
    """Bytes of memory free for new tensors on ``device``."""
    dev = torch.device(device)
    if dev.type == "cuda":
        free, _total = torch.cuda.mem_get_info(dev)
        return int(free)
    if dev.type == "mps":
        recommended = int(torch.mps.recommended_max_memory())
        return max(0, recommended - int(torch.mps.driver_allocated_memory()))
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # not Linux
        return 4 * 1024**3


def _shape(model: Any) -> dict[str, int]:
    cfg = model.config
    cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    hidden = int(getattr(cfg, "hidden_size", 0) or getattr(cfg, "d_model", 0) or 1024)
    heads = int(getattr(cfg, "num_attention_heads", 0) or 16)
    return {
        "hidden": hidden,
        "layers": int(getattr(cfg, "num_hidden_layers", 0) or getattr(cfg, "num_layers", 0) or 24),
        "vocab": int(getattr(cfg, "vocab_size", 0) or 50_000),
        "inter": int(getattr(cfg, "intermediate_size", 0) or getattr(cfg, "d_ff", 0) or 4 * hidden),
        "kv_heads": int(getattr(cfg, "num_key_value_heads", 0) or heads),
        "head_dim": int(getattr(cfg, "head_dim", 0) or hidden // heads),
    }


def _dtype_bytes(model: Any) -> int:
    return int(next(model.parameters()).element_size())


def kv_bytes_per_token(model: Any) -> int:
    """Key/value cache bytes of one token over all layers."""
    s = _shape(model)
    return 2 * s["layers"] * s["kv_heads"] * s["head_dim"] * _dtype_bytes(model)


def scoring_bytes_per_token(model: Any) -> int:
    """Peak transient bytes per padded token of a scoring forward pass (see the module docstring)."""
    s, d = _shape(model), _dtype_bytes(model)
    logits = s["vocab"] * (d + 4 + 4)
    activations = (6 * s["hidden"] + 3 * s["inter"]) * d
    return logits + kv_bytes_per_token(model) + activations


def scoring_token_budget(model: Any, device: torch.device | str, free: int | None = None) -> int:
    """Padded tokens per scoring forward pass for ``model`` on ``device`` (``free`` bytes, measured if None)."""
    kind = torch.device(device).type
    free = free_memory(device) if free is None else free
    tokens = int(MEMORY_SHARE * free / scoring_bytes_per_token(model))
    return max(MIN_TOKENS, min(MAX_TOKENS.get(kind, MAX_TOKENS["cpu"]), tokens))


def generation_rows(model: Any, device: torch.device | str, prompt_tokens: int, new_tokens: int,
                    free: int | None = None) -> int:
    """Rows (prompts x choices) per ``generate`` call for prompts of ``prompt_tokens`` (the longest, padded)
    and ``new_tokens`` new tokens."""
    kind = torch.device(device).type
    free = free_memory(device) if free is None else free
    per_row = (prompt_tokens + new_tokens) * kv_bytes_per_token(model) + 3 * 4 * _shape(model)["vocab"]
    rows = int(MEMORY_SHARE * free / max(1, per_row))
    return max(1, min(MAX_GEN_ROWS.get(kind, MAX_GEN_ROWS["cpu"]), rows))
