"""Small shared pieces of the ``transformers`` provider: model-arg parsing and the worker's request record."""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WorkerRequest", "auto_int", "parse_bool"]


def parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def auto_int(value: Any, name: str) -> int | None:
    """``None`` for "auto" (or unset), else a positive integer."""
    if value is None or str(value).strip().lower() == "auto":
        return None
    number = int(value)
    if number < 1:
        raise ValueError(f"transformers provider: {name} must be a positive integer or auto, got {value!r}")
    return number


@dataclass
class WorkerRequest:
    kind: str  # "score" or "generate"
    key: tuple[Any, ...]
    payload: dict[str, Any]
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
