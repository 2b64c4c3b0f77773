"""Time a few samples of a task on a local model, for the planner's time estimate (``--calibrate N``).

Progress goes through a callback (``on_progress(stage, done, total)``), never to the console from here: the
command line draws it (a bar with an ETA, :mod:`stereoprobe.cli.plan`), scripts pass their own or nothing.
Stages: ``"loading"`` (0/1 then 1/1: the models are loaded once), ``"samples"`` (done/N as the timed
samples finish, reported by an inspect ``SampleEnd`` hook that is active only during a calibration).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stereoprobe.errors import InputError

#: ``on_progress(stage, done, total)``
ProgressCallback = Callable[[str, int, int], None]

_lock = threading.Lock()
_listener: list[Callable[[], None]] = []  # the running calibration's per-sample callback (at most one)
_hook_registered = False


def _register_hook() -> None:
    """Register (once per process) the inspect hook that reports each finished sample to the running
    calibration; it is enabled only while a calibration listens."""
    global _hook_registered
    with _lock:
        if _hook_registered:
            return
        from inspect_ai.hooks import Hooks, SampleEnd, hooks

        # inspect announces the hooks it finds on its first eval: let it look before ours exists, so the
        # planner's output is not prefixed by an "inspect_ai ... hooks enabled" banner
        from stereoprobe.inspect_internals import init_hooks

        init_hooks()

        @hooks(name="stereoprobe_plan_calibration", description="stereoprobe plan --calibrate: samples done")
        class _CalibrationHook(Hooks):
            def enabled(self) -> bool:
                return bool(_listener)

            async def on_sample_end(self, data: SampleEnd) -> None:
                for notify in list(_listener):
                    notify()

        _hook_registered = True


def _warm_up(models: Sequence[str]) -> None:
    """Load every model once (one-token generation), so the timed run does not include loading weights
    (local providers keep the weights per process)."""
    import asyncio

    from inspect_ai.model import GenerateConfig, get_model

    async def go() -> None:
        for m in dict.fromkeys(models):
            await get_model(m).generate("Hello", config=GenerateConfig(max_tokens=1))

    asyncio.run(go())


def calibrate(make_task: Callable[[], Any], model: str, roles: Mapping[str, Sequence[str]] | None, n: int,
              on_progress: ProgressCallback | None = None, epochs: int = 1) -> float:
    """Seconds per sample-epoch: the models are loaded first, then ``n`` samples are timed, each for
    ``epochs`` epochs: the run the plan prices (a task bounding its epochs, such as DBB's sampled mode with
    its ten answers per question, refuses fewer). ``roles``: every role the plan priced, bound as it bound
    them (a role the plan assumed is bound to its models here too, so a task requiring it runs).

    Small ``n`` underestimates the throughput of batching providers, so the estimate errs on the long side.
    ``on_progress(stage, done, total)`` is called as the models load and as each timed sample-epoch finishes.
    """
    from inspect_ai import eval as inspect_eval

    if n < 1:
        raise InputError(f"--calibrate must be >= 1, got {n}")
    report = on_progress or (lambda stage, done, total: None)
    model_roles = {r: (list(m) if len(m) > 1 else m[0]) for r, m in (roles or {}).items() if m}
    total = n * max(int(epochs), 1)
    with tempfile.TemporaryDirectory(prefix="stereoprobe-plan-") as log_dir:
        common: dict[str, Any] = {"model": model, "model_roles": model_roles or None, "epochs": int(epochs),
                                  "display": "none", "log_dir": log_dir, "log_realtime": False, "score": True}
        report("loading", 0, 1)
        _warm_up([model, *[m for ms in (roles or {}).values() for m in ms]])
        report("loading", 1, 1)
        done = [0]

        def sample_done() -> None:
            done[0] += 1
            report("samples", min(done[0], total), total)

        _register_hook()
        report("samples", 0, total)
        with _lock:
            _listener.append(sample_done)
        try:
            t0 = time.perf_counter()
            logs = inspect_eval(make_task(), limit=n, **common)
            dt = time.perf_counter() - t0
        finally:
            with _lock:
                _listener.remove(sample_done)
        if not logs or logs[0].status != "success":
            err = getattr(logs[0], "error", None) if logs else None
            raise InputError(f"calibration run failed on {model}: {getattr(err, 'message', err)}")
        timed = len(logs[0].samples or []) or (int(getattr(logs[0].results, "completed_samples", 0) or 0)
                                               or n) * max(int(epochs), 1)  # sample-epochs
    return dt / timed
