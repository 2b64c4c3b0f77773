"""Which model providers exist, so that ``stereoprobe plan`` refuses a misspelt one (``opnai/gpt-4o``) in one
line instead of pricing it as "USD unknown" (issues 35.12, 34.6).

Known without importing inspect_ai (seconds): inspect's built-in providers, read from its provider module's
source (``@modelapi(name=...)``), the providers of the price table (priced and local ones, stereoprobe's
``transformers`` among them). A name close to one of these is refused with "did you mean"; any other name is
looked up in inspect's registry (every installed package's providers, loaded through inspect's entry points)
and refused when no package provides it.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from pathlib import Path

from stereoprobe.errors import InputError
from stereoprobe.hints import closest
from stereoprobe.plan.prices import PriceTable

__all__ = ["builtin_providers", "check_provider", "known_providers"]


@lru_cache(maxsize=1)
def builtin_providers() -> frozenset[str]:
    """The providers inspect_ai defines itself, from ``inspect_ai/model/_providers/providers.py`` (parsed)."""
    spec = importlib.util.find_spec("inspect_ai")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    path = Path(list(spec.submodule_search_locations)[0]) / "model" / "_providers" / "providers.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return frozenset()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "modelapi":
            for kw in node.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    names.add(str(kw.value.value))
    return frozenset(names)


def known_providers(prices: PriceTable) -> set[str]:
    """inspect's built-in providers, the price table's local providers and those of its priced models."""
    priced = {str(row[0]).split("/", 1)[0] for row in prices.models if "/" in str(row[0])}
    return set(builtin_providers()) | set(prices.local_providers) | priced


def _registered(provider: str) -> bool:
    """Whether an installed package registers ``provider`` with inspect (imports inspect: the slow path)."""
    # stereoprobe's own entry point among them
    from stereoprobe.inspect_internals import ensure_entry_points, registry_find, registry_info

    ensure_entry_points()
    found = registry_find(lambda info: info.type == "modelapi")
    return any(registry_info(f).name.split("/")[-1] == provider for f in found)


def check_provider(model: str, where: str, prices: PriceTable) -> None:
    """:class:`InputError` unless ``model``'s provider exists: a misspelt one names the closest."""
    provider, _, rest = model.partition("/")
    known = known_providers(prices)
    if provider in known:
        return
    close = closest(provider, sorted(known))
    if close:
        raise InputError(f"{where}: unknown provider {provider!r} in {model!r} (did you mean {close[0]}/{rest}?)")
    if not _registered(provider):
        raise InputError(f"{where}: no inspect provider {provider!r} in {model!r} (inspect's providers: "
                         f"{', '.join(sorted(builtin_providers()))})")
