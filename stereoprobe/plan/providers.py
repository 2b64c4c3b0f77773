"""Which model providers exist, so that ``stereoprobe plan`` refuses a misspelt one (``opnai/gpt-4o``) in one
line instead of pricing it as "USD unknown" (issues 35.12, 34.6).

Known without importing inspect_ai (seconds): inspect's built-in providers, read from its provider module's
source (``@modelapi(name=...)``), the providers of the price table (priced and local ones, stereoprobe's
``transformers`` among them). A name close to one of these is refused with "did you mean"; any other name is
looked up in inspect's registry (every installed package's providers, loaded through inspect's entry points)
and refused when no package provides it.
"""

from __future__ import annotations

from stereoprobe.errors import InputError
from stereoprobe.hints import did_you_mean
from stereoprobe.plan.prices import PriceTable
from stereoprobe.preflight.models import builtin_providers

__all__ = ["builtin_providers", "check_priced", "check_provider", "known_providers"]


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
    hint = did_you_mean(provider, sorted(known), lambda c: f"{c}/{rest}")
    if hint:
        raise InputError(f"{where}: unknown provider {provider!r} in {model!r}{hint}")
    if not _registered(provider):
        raise InputError(f"{where}: no inspect provider {provider!r} in {model!r} (inspect's providers: "
                         f"{', '.join(sorted(builtin_providers()))})")


def check_priced(model: str, where: str, prices: PriceTable) -> None:
    """:class:`InputError` for a model of a priced provider that the price table does not know but that is close
    to a model it prices (``openai/gpt-4o-mimi``: did you mean openai/gpt-4o-mini?); a local model, or one with
    no close priced name (a newer model), passes (its dollars are then "unknown", with a note)."""
    if prices.is_local(model) or prices.price(model) is not None:
        return
    provider = model.split("/", 1)[0]
    priced = [str(row[0]).rstrip("*") for row in prices.models if str(row[0]).split("/", 1)[0] == provider]
    hint = did_you_mean(model, [p for p in priced if p and "*" not in p and "?" not in p])
    if hint:
        raise InputError(f"{where}: {model!r} is not in the price table ({prices.source}){hint}; a model it does "
                         "not list can be priced with --prices FILE")
