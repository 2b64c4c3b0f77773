"""CPU rates of the vLLM route against the transformers provider, in one command.

Starts a real vLLM server (the CPU build, from the venv of ``.ci/vllm_venv.sh``; see tests/vllm/real_server.py)
on the bundled default model (SmolLM2-135M-Instruct, float32), then times, through inspect, the same work on
``transformers/<folder>`` (in process, CPU) and on ``vllm-completions/`` / ``vllm/`` against the server:

- likelihood: the ``globalbias`` task on the bundled sentence set (1,152 sentences; ``--groups``/``--templates``
  select fewer): sentences per second;
- generation: ``--prompts`` chat prompts answered with ``--max-tokens`` tokens, greedy: output tokens per second.

It prints each rate, the ratio vLLM / transformers, the server's start-up time and the machine's load. The
server's start-up is not in the rates; each route is warmed up once before it is timed.

    .ci/vllm_venv.sh && HF_HUB_OFFLINE=1 .venv/bin/python bench/vllm_rate.py
    HF_HUB_OFFLINE=1 .venv/bin/python bench/vllm_rate.py --groups ARAB --prompts 4 --max-tokens 64
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vllm"))

from real_server import VLLMServer, linked_folder, unavailable  # noqa: E402

PROMPTS = ["Write a short story about a baker in Lyon.", "Describe a day at a fishing village.",
           "Tell a story about two friends who start a business.", "Write about a teacher's first day at school."]


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _likelihood(model: str, args: argparse.Namespace, log_dir: str, **kw: Any) -> tuple[float, int]:
    from inspect_ai import eval as inspect_eval

    task_args: dict[str, Any] = {"source": "bundled"}
    if args.groups:
        task_args["groups"] = args.groups.split(",")
    if args.templates:
        task_args["templates"] = [int(t) for t in args.templates.split(",")]
    warm = {**task_args, "groups": ["ARAB"], "templates": [1]}
    inspect_eval("stereoprobe/globalbias", model=model, task_args=warm, display="none", log_dir=log_dir, **kw)
    secs, [log] = _timed(lambda: inspect_eval("stereoprobe/globalbias", model=model, task_args=task_args,
                                              display="none", log_dir=log_dir, max_connections=64,
                                              max_samples=64, **kw))
    assert log.status == "success", log.error
    from stereoprobe.likelihood import read_results

    n = sum(len(read_results(sc)) for s in log.samples for sc in s.scores.values())
    return secs, n


def _generation(model: str, args: argparse.Namespace, log_dir: str, **kw: Any) -> tuple[float, int]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig
    from inspect_ai.solver import generate

    def task(n: int) -> Task:
        prompts = (PROMPTS * (n // len(PROMPTS) + 1))[:n]
        return Task(dataset=[Sample(input=p) for p in prompts], solver=generate(),
                    config=GenerateConfig(max_tokens=args.max_tokens, temperature=0.0))

    inspect_eval(task(1), model=model, display="none", log_dir=log_dir, **kw)
    secs, [log] = _timed(lambda: inspect_eval(task(args.prompts), model=model, display="none", log_dir=log_dir,
                                              max_connections=args.prompts, **kw))
    assert log.status == "success", log.error
    tokens = sum(u.output_tokens for u in log.stats.model_usage.values())
    return secs, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", default=None, help="GlobalBias groups, comma-separated (default: all 8)")
    ap.add_argument("--templates", default=None, help="GlobalBias templates, comma-separated (default: all 3)")
    ap.add_argument("--prompts", type=int, default=8, help="generation prompts, answered concurrently")
    ap.add_argument("--max-tokens", type=int, default=128)
    args = ap.parse_args()
    reason = unavailable()
    if reason:
        sys.exit(reason)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch

    from stereoprobe.providers.default_model import default_model_dir

    model_dir = default_model_dir()
    rows: list[tuple[str, str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = linked_folder(model_dir, Path(tmp) / "model")
        with VLLMServer(folder, str(folder), Path(tmp) / "server.log", extra_args=("--enforce-eager",)) as srv:
            print(f"vLLM server up after {srv.startup_s:.0f} s (eager mode, float32, {srv.base_url})")
            for kind, fn, unit in (("likelihood", _likelihood, "sentences/s"), ("generation", _generation, "tokens/s")):
                t = fn(f"transformers/{model_dir}", args, f"{tmp}/t", model_args={"device": "cpu"})
                route = "vllm-completions" if kind == "likelihood" else "vllm"
                v = fn(f"{route}/{srv.name}", args, f"{tmp}/v", model_base_url=srv.base_url)
                rows.append((kind, unit, t[1] / t[0], v[1] / v[0]))
                print(f"{kind}: transformers {t[1]} in {t[0]:.1f} s, {route} {v[1]} in {v[0]:.1f} s")
    la = os.getloadavg()
    print(f"\ntorch threads (transformers) {torch.get_num_threads()}, CPUs {os.cpu_count()}, "
          f"load average {la[0]:.1f} {la[1]:.1f} {la[2]:.1f}")
    print(f"{'work':<11} {'unit':<12} {'transformers':>12} {'vllm':>10} {'vllm/transformers':>18}")
    for kind, unit, t_rate, v_rate in rows:
        print(f"{kind:<11} {unit:<12} {t_rate:>12.1f} {v_rate:>10.1f} {v_rate / t_rate:>18.2f}")


if __name__ == "__main__":
    main()
