"""The ``transformers`` provider's worker request record (model arguments are checked in :mod:`.validation`)."""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WorkerRequest"]


@dataclass
class WorkerRequest:
    kind: str  # "score" or "generate"
    key: tuple[Any, ...]
    payload: dict[str, Any]
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
