"""US dollars of a planned run: interactive and inspect ``--batch`` prices, partial sums, stale price dates.

Each role's tokens are split evenly between the models bound to it (an ensemble of three extractors reads
every story three times: one call per model). A model missing from the price table does not hide the rest:
:attr:`Cost.usd_priced` sums what is priced and :attr:`Cost.unpriced` names the rest, while
:attr:`Cost.usd` (the total) stays unknown (``None``).

Batch mode: ``inspect eval --batch`` sends requests through the batch APIs of the providers that offer them
(about half the price, results within hours): :attr:`Cost.usd_batch` prices each model at its provider's
batch discount (``batch_discounts`` of the price table) and at the interactive price where the provider has
no batch API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from stereoprobe.plan.prices import PriceTable


@dataclass
class Cost:
    """Dollars of a run. ``usd``/``usd_batch``: totals, ``None`` when a model has no price;
    ``usd_priced``/``usd_batch_priced``: the sums over the priced models; ``unpriced``: ``"model (role)"``
    of every model without a price; ``batch_models``: models whose provider offers a batch discount."""

    usd: float | None
    usd_priced: float
    usd_batch: float | None
    usd_batch_priced: float
    unpriced: list[str] = field(default_factory=list)
    batch_models: list[str] = field(default_factory=list)


def price_run(tokens_by_role: Mapping[str, Mapping[str, int]], models_by_role: Mapping[str, Sequence[str]],
              prices: PriceTable) -> Cost:
    """Price ``tokens_by_role`` (``{role: {"input": n, "output": n}}``) for the models of each role.

    >>> from stereoprobe.plan.prices import PriceTable
    >>> table = PriceTable(as_of="2030-01-01", source="t", models=[("a/x", 1.0, 2.0)],
    ...                    batch_discounts={"a": 0.5})
    >>> c = price_run({"generator": {"input": 1_000_000, "output": 1_000_000},
    ...                "extractor": {"input": 2_000_000, "output": 0}},
    ...               {"generator": ["a/x"], "extractor": ["a/x", "b/y"]}, table)
    >>> c.usd, c.usd_priced, c.usd_batch_priced, c.unpriced
    (None, 4.0, 2.0, ['b/y (extractor)'])
    """
    usd = batch = 0.0
    unpriced: list[str] = []
    batch_models: list[str] = []
    for role, tokens in tokens_by_role.items():
        models = list(models_by_role.get(role) or ["?"])
        share = 1.0 / len(models)
        for model in models:
            p = prices.price(model)
            if p is None:
                unpriced.append(f"{model} ({role})")
                continue
            dollars = share * (tokens.get("input", 0) * p[0] + tokens.get("output", 0) * p[1]) / 1e6
            discount = prices.batch_discount(model)
            if discount and dollars:
                batch_models.append(model)
            usd += dollars
            batch += dollars * (1.0 - discount)
    complete = not unpriced
    return Cost(usd=round(usd, 2) if complete else None, usd_priced=round(usd, 2),
                usd_batch=round(batch, 2) if complete else None, usd_batch_priced=round(batch, 2),
                unpriced=list(dict.fromkeys(unpriced)), batch_models=list(dict.fromkeys(batch_models)))
