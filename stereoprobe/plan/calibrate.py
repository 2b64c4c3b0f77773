"""Time a few samples of a task on a local model, for the planner's time estimate (``--calibrate N``)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stereoprobe.errors import InputError


def _warm_up(models: Sequence[str]) -> None:
    """Load every model once (one-token generation), so the timed run does not include loading weights
    (local providers keep the weights per process)."""
    import asyncio

    from inspect_ai.model import GenerateConfig, get_model

    async def go() -> None:
        for m in dict.fromkeys(models):
            await get_model(m).generate("Hello", config=GenerateConfig(max_tokens=1))

    asyncio.run(go())


def calibrate(make_task: Callable[[], Any], model: str, roles: Mapping[str, Sequence[str]] | None, n: int) -> float:
    """Seconds per sample-epoch: the models are loaded first, then ``n`` samples are timed (one epoch).

    Small ``n`` underestimates the throughput of batching providers, so the estimate errs on the long side.
    """
    from inspect_ai import eval as inspect_eval

    if n < 1:
        raise InputError(f"--calibrate must be >= 1, got {n}")
    model_roles = {r: (list(m) if len(m) > 1 else m[0]) for r, m in (roles or {}).items() if m}
    with tempfile.TemporaryDirectory(prefix="stereoprobe-plan-") as log_dir:
        common: dict[str, Any] = {"model": model, "model_roles": model_roles or None, "epochs": 1, "display": "none",
                                  "log_dir": log_dir, "log_realtime": False, "score": True}
        _warm_up([model, *[m for ms in (roles or {}).values() for m in ms]])
        t0 = time.perf_counter()
        logs = inspect_eval(make_task(), limit=n, **common)
        dt = time.perf_counter() - t0
        if not logs or logs[0].status != "success":
            err = getattr(logs[0], "error", None) if logs else None
            raise InputError(f"calibration run failed on {model}: {getattr(err, 'message', err)}")
        done = int(getattr(logs[0].results, "completed_samples", 0) or 0) or n
    return dt / done
