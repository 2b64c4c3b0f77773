"""The dated price table of ``stereoprobe plan`` (``datasets/prices.yaml``, or a user's file of the same layout).

Prices age: :func:`stale_prices` says which of the prices a plan used were read more than
:data:`MAX_AGE_DAYS` days before today (a row's own ``as_of``, else the table's).
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError


#: prices older than this many days get a warning
MAX_AGE_DAYS = 90


@dataclass(frozen=True)
class PriceTable:
    """USD per million tokens per model pattern; ``local_providers`` cost nothing per token;
    ``batch_discounts``: provider -> fraction of the price saved by inspect's ``--batch`` (0.5 = half price);
    ``row_dates``: pattern -> the date its price was read, where it differs from the table's ``as_of``."""

    as_of: str
    source: str
    models: list[tuple[str, float, float]] = field(default_factory=list)
    local_providers: frozenset[str] = frozenset()
    batch_discounts: dict[str, float] = field(default_factory=dict)
    row_dates: dict[str, str] = field(default_factory=dict)

    def is_local(self, model: str) -> bool:
        """True for a model served by a local provider (``transformers/...``, ``vllm/...``, ...)."""
        return model.split("/", 1)[0] in self.local_providers

    def price(self, model: str) -> tuple[float, float] | None:
        """(input, output) USD per million tokens; (0, 0) for local models; None when not in the table."""
        if self.is_local(model):
            return (0.0, 0.0)
        row = self._row(model)
        return None if row is None else (row[1], row[2])

    def _row(self, model: str) -> tuple[str, float, float] | None:
        return next((r for r in self.models if fnmatch.fnmatchcase(model, r[0])), None)

    def batch_discount(self, model: str) -> float:
        """Fraction of the price saved in inspect's batch mode for ``model``'s provider (0 without a batch API)."""
        if self.is_local(model):
            return 0.0
        return float(self.batch_discounts.get(model.split("/", 1)[0], 0.0))

    def as_of_for(self, model: str) -> str | None:
        """The date ``model``'s price was read (its row's ``as_of``, else the table's); None when unpriced or
        local."""
        if self.is_local(model):
            return None
        row = self._row(model)
        return None if row is None else self.row_dates.get(row[0], self.as_of)


def _date(text: str, where: str) -> dt.date:
    try:
        return dt.date.fromisoformat(str(text))
    except ValueError:
        raise InputError(f"{where}: not a date (YYYY-MM-DD): {text!r}") from None


def stale_prices(prices: PriceTable, models: Iterable[str], today: dt.date | None = None,
                 max_age_days: int = MAX_AGE_DAYS) -> str | None:
    """A warning naming the prices of ``models`` read more than ``max_age_days`` before ``today``
    (default: the local date), else None.

    >>> t = PriceTable(as_of="2025-08-15", source="prices.yaml", models=[("a/*", 1.0, 1.0), ("b/*", 1.0, 1.0)],
    ...                row_dates={"b/*": "2026-11-01"})
    >>> stale_prices(t, ["a/x", "b/y"], today=dt.date(2026, 11, 26))
    'prices of a/x are from 2025-08-15, 468 days before 2026-11-26 (over 90): check them or pass --prices FILE'
    >>> stale_prices(t, ["b/y", "local/z"], today=dt.date(2026, 11, 26)) is None
    True
    """
    today = today or dt.date.today()
    old: dict[str, list[str]] = {}
    for model in dict.fromkeys(models):
        when = prices.as_of_for(model)
        if when is not None and (today - _date(when, prices.source)).days > max_age_days:
            old.setdefault(when, []).append(model)
    if not old:
        return None
    oldest = min(old)
    names = ", ".join(m for d in sorted(old) for m in old[d])
    return (f"prices of {names} are from {oldest if len(old) == 1 else 'as early as ' + oldest}, "
            f"{(today - _date(oldest, prices.source)).days} days before {today.isoformat()} (over {max_age_days}): "
            "check them or pass --prices FILE")


def _number(value: Any, where: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: not a number: {value!r}") from None
    if not (x >= 0 and math.isfinite(x)):  # NaN, negative and infinite prices make no total
        raise InputError(f"{where}: must be a finite number >= 0, got {value!r}")
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
    _date(data["as_of"], f"{p}: field 'as_of'")
    rows = []
    row_dates: dict[str, str] = {}
    for i, row in enumerate(data["models"], 1):
        if not isinstance(row, dict) or not row.get("model"):
            raise InputError(f"{p}: models row {i}: expected {{model, input, output}}")
        rows.append((str(row["model"]), _number(row.get("input"), f"{p}: models row {i}: field 'input'"),
                     _number(row.get("output"), f"{p}: models row {i}: field 'output'")))
        if row.get("as_of"):
            row_dates[str(row["model"])] = _date(row["as_of"], f"{p}: models row {i}: field 'as_of'").isoformat()
    discounts = data.get("batch_discounts") or {}
    if not isinstance(discounts, dict):
        raise InputError(f"{p}: field 'batch_discounts': expected a mapping provider: fraction saved")
    batch: dict[str, float] = {}
    for provider, value in discounts.items():
        x = _number(value, f"{p}: batch_discounts: {provider}")
        if x >= 1:
            raise InputError(f"{p}: batch_discounts: {provider}: must be below 1 (the fraction saved), got {value!r}")
        batch[str(provider)] = x
    return PriceTable(as_of=_date(data["as_of"], str(p)).isoformat(), source=str(p), models=rows,
                      local_providers=frozenset(str(x) for x in data.get("local_providers") or ()),
                      batch_discounts=batch, row_dates=row_dates)
