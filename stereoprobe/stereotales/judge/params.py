"""Validation of the ``stereotales_judge`` task parameters (``-T name=value``), before any sample is built.

inspect passes ``-T`` values parsed as YAML, so numbers may arrive as strings ("nan", "3") or floats; each
check returns the typed value or raises :class:`~stereoprobe.errors.InputError` naming the parameter.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from stereoprobe.errors import InputError

VALUE_LISTS = ("taxonomy", "observed", "none")


def _name(name: str, value: Any) -> str:
    return f"-T {name}={value!r}"


def int_param(name: str, value: Any, minimum: int) -> int:
    """An integer >= ``minimum`` (booleans, fractions, NaN and text are errors)."""
    if isinstance(value, bool):
        raise InputError(f"{_name(name, value)}: expected an integer >= {minimum}")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{_name(name, value)}: expected an integer >= {minimum}") from None
    if not math.isfinite(f) or f != int(f) or f < minimum:
        raise InputError(f"{_name(name, value)}: expected an integer >= {minimum}")
    return int(f)


def float_param(name: str, value: Any, low: float, high: float = math.inf) -> float:
    """A finite number in [``low``, ``high``]."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        f = math.nan
    if isinstance(value, bool) or not math.isfinite(f) or not low <= f <= high:
        bound = f"from {low:g} to {high:g}" if math.isfinite(high) else f">= {low:g}"
        raise InputError(f"{_name(name, value)}: expected a finite number {bound}")
    return f


def bool_param(name: str, value: Any) -> bool:
    """A boolean (``true``/``false`` as YAML or text)."""
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in ("true", "1", "yes"):
        return True
    if str(value).strip().lower() in ("false", "0", "no"):
        return False
    raise InputError(f"{_name(name, value)}: expected true or false")


def choice_param(name: str, value: Any, choices: Sequence[str]) -> str:
    """One of ``choices``."""
    if str(value) not in choices:
        raise InputError(f"{_name(name, value)}: expected one of {', '.join(choices)}")
    return str(value)


def names_param(name: str, value: Any) -> list[str] | None:
    """None, a name or a list of non-empty names."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
    if not items or not all(isinstance(v, (str, int)) and str(v).strip() for v in items):
        raise InputError(f"{_name(name, value)}: expected a name or a list of names")
    return [str(v).strip() for v in items]
