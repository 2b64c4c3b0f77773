"""Run planner: what a task run will cost before it runs (``stereoprobe plan``).

    from stereoprobe.plan import plan_task
    plan = plan_task(task, model="openai/gpt-4o-mini", roles={"extractor": ["openai/gpt-5-nano"] * 3})
    plan.as_dict()   # items, samples, model_calls per role, input/output tokens, usd, seconds
"""

from __future__ import annotations

from typing import Any

from stereoprobe.plan.prices import PriceTable, load_prices

__all__ = ["Plan", "PriceTable", "load_prices", "plan_task"]


def __getattr__(name: str) -> Any:
    """``Plan`` and ``plan_task`` from :mod:`.core` on first use: it imports inspect_ai (seconds), which a
    refusal of ``stereoprobe plan``'s arguments does not need (issue 35.10)."""
    if name in ("Plan", "plan_task"):
        from stereoprobe.plan import core

        return getattr(core, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
