"""Run planner: what a task run will cost before it runs (``stereoprobe plan``).

    from stereoprobe.plan import plan_task
    plan = plan_task(task, model="openai/gpt-4o-mini", roles={"extractor": ["openai/gpt-5-nano"] * 3})
    plan.as_dict()   # items, samples, model_calls per role, input/output tokens, usd, seconds
"""

from __future__ import annotations

from stereoprobe.plan.core import Plan, plan_task
from stereoprobe.plan.prices import PriceTable, load_prices

__all__ = ["Plan", "PriceTable", "load_prices", "plan_task"]
