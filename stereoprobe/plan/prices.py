"""The dated price table of ``stereoprobe plan`` (``datasets/prices.yaml``, or a user's file of the same layout)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError


@dataclass(frozen=True)
class PriceTable:
    """USD per million tokens per model pattern; ``local_providers`` cost nothing per token."""

    as_of: str
    source: str
    models: list[tuple[str, float, float]] = field(default_factory=list)
    local_providers: frozenset[str] = frozenset()

    def is_local(self, model: str) -> bool:
        """True for a model served by a local provider (``transformers/...``, ``vllm/...``, ...)."""
        return model.split("/", 1)[0] in self.local_providers

    def price(self, model: str) -> tuple[float, float] | None:
        """(input, output) USD per million tokens; (0, 0) for local models; None when not in the table."""
        if self.is_local(model):
            return (0.0, 0.0)
        for pattern, inp, out in self.models:
            if fnmatch.fnmatchcase(model, pattern):
                return (inp, out)
        return None


def _number(value: Any, where: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: not a number: {value!r}") from None
    if not x >= 0:
        raise InputError(f"{where}: must be a number >= 0, got {value!r}")
    return x


def load_prices(path: str | Path | None = None) -> PriceTable:
    """Read a price table (default: the bundled ``datasets/prices.yaml``); ``InputError`` naming the bad row."""
    import yaml

    from stereoprobe.paths import dataset_file

    p = Path(path) if path is not None else dataset_file("prices.yaml")
    if not p.is_file():
        raise InputError(f"price table not found: {p}")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise InputError(f"{p}: not YAML ({' '.join(str(e).split())})") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{p}: not UTF-8 text (byte {e.object[e.start:e.start + 1]!r} at position {e.start})") from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise InputError(f"{p}: expected a mapping with a 'models' list (see the bundled datasets/prices.yaml)")
    if not data.get("as_of"):
        raise InputError(f"{p}: field 'as_of' (the date of the prices) is missing")
    rows = []
    for i, row in enumerate(data["models"], 1):
        if not isinstance(row, dict) or not row.get("model"):
            raise InputError(f"{p}: models row {i}: expected {{model, input, output}}")
        rows.append((str(row["model"]), _number(row.get("input"), f"{p}: models row {i}: field 'input'"),
                     _number(row.get("output"), f"{p}: models row {i}: field 'output'")))
    return PriceTable(as_of=str(data["as_of"]), source=str(p), models=rows,
                      local_providers=frozenset(str(x) for x in data.get("local_providers") or ()))
