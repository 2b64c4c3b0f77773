"""Stages of one command-line ``inspect eval`` (the harness's e2e target), measured inside that command.

``python bench/harness_stages.py eval stereoprobe/globalbias --model ... [inspect's own arguments]`` runs
inspect's command line (``inspect_ai._cli.main.main``, exactly what the ``inspect`` script runs) in this
process after putting clocks on the stages, and prints one line ``STAGES {json}`` at the end:

- ``process_start``: seconds from the process's start to this script's first line (interpreter, site);
- ``imports_cli``: importing inspect's command line (what ``inspect`` imports before parsing its arguments);
- ``imports_provider_task``: importing the provider and the task's module (torch, transformers, stereoprobe),
  which the command would otherwise import while resolving the task and the model;
- ``preflight``: stereoprobe's check of the command line before any model loads (it builds the task once);
- ``build_sentences``: the task's sentence build (inside the check's task build), and its count;
- ``model_load``: the provider's constructor (weights and tokenizer), and its count;
- ``worker_scoring``: the seconds the provider's worker spends in ``score_ids`` (the model's forwards), and
  ``tokenize``: the grouped requests' preparation on inspect's thread (``prepare_items``);
- ``eval_span``: inspect's own ``started_at`` to ``completed_at`` (read back from the log), ``before_started``
  (from the command's start to ``started_at``: imports, entry points, task build, model load) and
  ``after_completed`` (log finish, exit);
- ``wall``: the whole command, from the process's start;
- ``<stage>_at``: when a clocked stage was first entered, in seconds from the command's start (the order of
  the fixed costs: the check, the model load, then ``worker_scoring_at``, the first sample's first forward),
  and ``after_last_scoring``: from the worker's last ``score_ids`` to the command's end.

The clocks wrap functions (a counter and a ``perf_counter`` pair per call): they add microseconds per call,
and the calls counted here happen at most a few hundred times per run.
"""

from __future__ import annotations

import time

T_TOP = time.perf_counter()
WALL_TOP = time.time()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from stage_clock import Counter, process_age  # noqa: E402  (bench/, the script's folder)


AGE_AT_TOP = process_age()


def log_span(log_dir: str) -> tuple[float, float] | None:
    """(started_at, completed_at) as epoch seconds of the newest log in ``log_dir`` (its header only)."""
    from datetime import datetime

    from inspect_ai.log import read_eval_log

    logs = sorted(Path(log_dir).glob("*.eval"), key=lambda p: p.stat().st_mtime)
    if not logs:
        return None
    log = read_eval_log(str(logs[-1]), header_only=True)
    return (datetime.fromisoformat(str(log.stats.started_at)).timestamp(),
            datetime.fromisoformat(str(log.stats.completed_at)).timestamp())


def put_clocks() -> dict[str, Counter]:
    """Clocks on the provider's constructor, its worker's ``score_ids``, the grouped requests' preparation and
    the task's sentence build (importing these modules: torch, transformers, the task's package)."""
    import importlib

    clocks: dict[str, Counter] = {}
    # (stage, module, owner attribute or "", function): an earlier checkout may lack one (run with --compare)
    for stage, module, owner, name in (
            ("model_load", "stereoprobe.providers.transformers_api", "TransformersAPI", "__init__"),
            ("worker_scoring", "stereoprobe.providers.transformers_api", "TransformersAPI", "score_ids"),
            ("tokenize", "stereoprobe.providers.transformers_api", "", "prepare_items"),
            ("build_sentences", "stereoprobe.tasks.globalbias", "", "build_sentences"),
            ("preflight", "stereoprobe.preflight", "", "check")):
        try:
            mod = importlib.import_module(module)
            clocks[stage] = Counter(getattr(mod, owner) if owner else mod, name)
        except (ImportError, AttributeError):
            continue
    return clocks


def experiments() -> None:
    """Knobs for what-if runs, from the environment: ``HARNESS_SWITCH_INTERVAL`` (seconds, the interpreter's
    thread switch interval: does the worker wait for the GIL?) and ``HARNESS_WORKER_THREADS`` (torch's
    intra-op threads set on the provider's worker thread when it starts)."""
    if os.environ.get("HARNESS_SWITCH_INTERVAL"):
        sys.setswitchinterval(float(os.environ["HARNESS_SWITCH_INTERVAL"]))
    if os.environ.get("HARNESS_WORKER_THREADS"):
        import torch

        from stereoprobe.providers.transformers_api import TransformersAPI

        work = TransformersAPI._work

        def work_threads(self: TransformersAPI) -> None:
            torch.set_num_threads(int(os.environ["HARNESS_WORKER_THREADS"]))
            work(self)

        TransformersAPI._work = work_threads  # type: ignore[method-assign]


def main() -> int:
    args = sys.argv[1:]
    t = time.perf_counter()
    from inspect_ai._cli.main import main as inspect_main

    imports_cli = time.perf_counter() - t
    t = time.perf_counter()
    clocks = put_clocks()
    imports_stereoprobe = time.perf_counter() - t  # torch, transformers, the task's modules (else imported later)
    experiments()
    sys.argv = ["inspect", *args]
    t_cmd = time.perf_counter()
    code = 0
    try:
        inspect_main()
    except SystemExit as ex:
        code = int(ex.code or 0)
    t_end = time.perf_counter()
    log_dir = args[args.index("--log-dir") + 1] if "--log-dir" in args else "logs"
    span = log_span(log_dir)
    stages: dict[str, float | int] = {"process_start": AGE_AT_TOP, "imports_cli": imports_cli,
                                      "imports_provider_task": imports_stereoprobe}
    for name, c in clocks.items():
        stages[name], stages[f"{name}_calls"] = c.seconds, c.calls
        if getattr(c, "first_start", None) is not None:  # (an older bench/stage_clock.py has none)
            stages[f"{name}_at"] = c.first_start - t_cmd
    last = getattr(clocks.get("worker_scoring"), "last_end", None)
    if last is not None:
        stages["after_last_scoring"] = t_end - last
    if span is not None:
        cmd_epoch = WALL_TOP + (t_cmd - T_TOP)
        stages["before_started"] = span[0] - cmd_epoch
        stages["eval_span"] = span[1] - span[0]
        stages["after_completed"] = WALL_TOP + (t_end - T_TOP) - span[1]
    stages["wall"] = AGE_AT_TOP + (t_end - T_TOP)
    stages["cpu"] = time.process_time()
    stages["load_average"] = os.getloadavg()[0]
    print("STAGES " + json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in stages.items()}),
          flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
