"""The ``transformers`` provider's model argument names and worker request record (model arguments are checked
in :mod:`.validation`)."""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MODEL_ARGS", "WorkerRequest"]

MODEL_ARGS = ("device", "dtype", "batch_size", "batch_tokens", "gen_batch_size", "prefix_sharing", "score_first_token",
              "kind", "tokenizer", "chat_template", "mlm_max_length", "repetition_penalty", "top_k", "revision",
              "trust_remote_code", "attn_implementation", "max_connections", "batch_invariant", "microbatch_tokens",
              "continuous_batching", "cuda_graphs", "scorer_process", "static_cache")
"""The ``-M`` arguments of the ``transformers`` provider (named in its refusal of an unknown one)."""


@dataclass
class WorkerRequest:
    kind: str  # "score" or "generate"
    key: tuple[Any, ...]
    payload: dict[str, Any]
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
