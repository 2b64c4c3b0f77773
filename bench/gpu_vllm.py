"""The vLLM contender of ``bench/gpu_throughput.py``: the same texts, in the same bench call, through a vLLM
server and stereoprobe's prefill-only scoring route (inspect's ``vllm-completions`` provider, prompt lists,
``prompt_logprobs`` 0, one sampled token: :mod:`stereoprobe.providers.vllm_batch`).

- Which vLLM: ``--vllm-python`` (a Python with vLLM), else the bench's own Python when it imports ``vllm``, else,
  on CPU only, the venv of ``.ci/vllm_venv.sh`` (the CPU build). None: the route is skipped and its reason
  recorded (``result["vllm"]["skipped"]``); the GPU machine's image has no vLLM and ``bench/gpu_wheels.sh``
  does not carry one (its CUDA wheel and the torch it pins are far above what a run carries).
- Which weights: ``--vllm-weights saved`` writes the bench's in-memory model to a folder (safetensors) that the
  server loads, so the per-text sums are compared with the in-process provider's on the same weights;
  ``dummy`` writes only its ``config.json`` and vLLM draws random weights of the same shape
  (``--load-format dummy``): the rate of the same shapes without writing 16 GB, no comparison. Default: saved on
  CPU, dummy on a GPU.
- What it records: the server's arguments (prefix caching on, dtype, load format), its start-up time, and the
  settings vLLM logged for the scoring requests (``prompt_logprobs``, ``max_tokens``, ``logprobs``), beside one
  row per workload (route ``vllm_prefill``) in the bench's table.

The rate is that of the texts through inspect's model API with the route's grouped requests (chunks of
``vllm_batch.CHUNK`` prompts, all groups concurrently), after one warm-up group; the server's start-up is not in it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vllm"))

NO_VLLM = ("{python} has no vllm, --vllm-python is not given and bench/gpu_wheels.sh does not carry vLLM (its "
           "CUDA wheel and the torch it pins are far above what a run carries): the vLLM contender needs a "
           "machine whose Python has vLLM")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--vllm-python", type=Path, default=None, help="a Python with vLLM for the vLLM contender")
    ap.add_argument("--vllm-weights", choices=("saved", "dummy"), default=None,
                    help="the vLLM server's weights: the bench model's (saved) or random of its shape (dummy); "
                         "default saved on CPU, dummy on a GPU")
    ap.add_argument("--vllm-gpu-memory", type=float, default=0.45,
                    help="vLLM's --gpu-memory-utilization (the bench's own model stays on the card)")


def has_vllm() -> bool:
    """This Python imports vLLM (a folder named vllm on the path, e.g. tests/vllm, is a namespace: no origin)."""
    spec = importlib.util.find_spec("vllm")
    return spec is not None and spec.origin is not None


def vllm_python(args: argparse.Namespace) -> tuple[Path | None, str | None]:
    """The Python to start vLLM with, or None and why not."""
    if args.vllm_python:
        return (args.vllm_python, None) if args.vllm_python.is_file() else (None, f"no file {args.vllm_python}")
    if has_vllm():
        return Path(sys.executable), None
    if not args.device.startswith("cuda"):
        from real_server import unavailable, venv_dir

        reason = unavailable()
        return (None, reason) if reason else (venv_dir() / "bin" / "python", None)
    return None, NO_VLLM.format(python=sys.executable)


def model_folder(model: Any, tokenizer_dir: Path, dest: Path, weights: str) -> Path:
    """The bench model as a folder vLLM can serve: its config, the tokenizer's files, and (saved) its weights."""
    dest.mkdir(parents=True, exist_ok=True)
    if weights == "saved":
        model.save_pretrained(dest, safe_serialization=True)
    else:
        model.config.save_pretrained(dest)
    for f in tokenizer_dir.iterdir():
        if f.is_file() and f.name.startswith(("tokenizer", "special_tokens", "chat_template")):
            shutil.copy(f, dest / f.name)
    return dest


async def _score_groups(name: str, base_url: str, workloads: list[tuple[str, list[list[str]], int]]
                        ) -> list[tuple[float, list[float | None]]]:
    """Per workload: seconds and per-text sums through the route, after one warm-up group (the first)."""
    from inspect_ai.model import GenerateConfig, get_model

    from stereoprobe.providers.vllm_neutral import neutral_vllm_config
    from stereoprobe.solvers.likelihood import SCORING_CONFIG, score_items

    model_name = f"vllm-completions/{name}"
    model = get_model(model_name, base_url=base_url, config=GenerateConfig(max_connections=64))
    config = SCORING_CONFIG.model_copy()
    neutral_vllm_config(model_name, config)  # what a stereoprobe task's request carries (the task's hook)

    def items(groups: list[list[str]]) -> list[list[dict[str, str]]]:
        return [[{"id": f"{i}:{j}", "text": t} for j, t in enumerate(g)] for i, g in enumerate(groups)]

    await score_items(items(workloads[0][1][:1])[0], model, config)  # warm-up and the capability probe
    out = []
    for _, groups, _ in workloads:
        t0 = time.perf_counter()
        res = await asyncio.gather(*(score_items(g, model, config) for g in items(groups)))
        dt = time.perf_counter() - t0
        out.append((dt, [r.sum_logprob for rs in res for r in rs]))
    return out


def _reference_sums(model: Any, tokenizer: Any, texts: list[str], batch: int) -> list[float]:
    from stereoprobe.providers.planning import BatchPolicy
    from stereoprobe.providers.scoring import CausalScorer

    seqs = [list(tokenizer(t, add_special_tokens=True).input_ids) for t in texts]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    return [r.total for r in CausalScorer(model, pad_id=int(pad)).score(seqs, BatchPolicy(batch), prefix_sharing=True)]


def applied(received: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    """The settings vLLM logged for the scoring requests (the capability probe, which asks for the answer token's
    top-20 too, apart): per setting, each logged value and how many requests ran with it."""
    scoring = [r for r in received if r.get("prompt_logprobs") not in (None, "None") and r.get("logprobs") == "None"]
    return {k: dict(Counter(r.get(k, "absent") for r in scoring))
            for k in ("prompt_logprobs", "max_tokens", "logprobs", "temperature")}


def contender(model: Any, tokenizer: Any, workloads: list[tuple[str, list[list[str]], int]],
              args: argparse.Namespace, dtype: torch.dtype) -> dict[str, Any]:
    """Rows of the bench table for the vLLM route on ``workloads`` (label, groups of texts, full-run texts), and
    what the server applied; ``{"skipped": reason}`` where no vLLM can be started."""
    from real_server import VLLMServer

    python, reason = vllm_python(args)
    if python is None:
        print(f"[bench] vllm: skipped: {reason}", flush=True)
        return {"skipped": reason}
    weights = args.vllm_weights or ("dummy" if args.device.startswith("cuda") else "saved")
    extra = ["--enable-prefix-caching"] + (["--load-format", "dummy"] if weights == "dummy" else [])
    if args.device.startswith("cuda"):
        extra += ["--gpu-memory-utilization", str(args.vllm_gpu_memory)]
    else:
        extra += ["--enforce-eager"]  # torch.compile would add minutes to the start on a few cores
    with tempfile.TemporaryDirectory() as tmp:
        folder = model_folder(model, args.tokenizer, Path(tmp) / "model", weights)
        srv = VLLMServer(folder, "bench-model", Path(tmp) / "server.log", extra_args=tuple(extra),
                         dtype=str(dtype).removeprefix("torch."), python=python,
                         max_model_len=int(model.config.max_position_embeddings))
        with srv:
            print(f"[bench] vllm: server up after {srv.startup_s:.0f} s ({python})", flush=True)
            timed = asyncio.run(_score_groups(srv.name, srv.base_url, workloads))
            got = applied(srv.received())
            log_tail = srv.log_tail(5)
    rows = []
    for (label, groups, full), (seconds, sums) in zip(workloads, timed):
        texts = [t for g in groups for t in g]
        n_tok = sum(len(tokenizer(t, add_special_tokens=True).input_ids) for t in texts)
        diff = None
        if weights == "saved":
            ref = _reference_sums(model, tokenizer, texts, 16)
            diff = max((abs(a - b) if b is not None else float("inf") for a, b in zip(ref, sums)), default=0.0)
        rate = len(texts) / seconds
        rows.append({"workload": label, "route": "vllm_prefill", "texts": len(texts), "tokens": n_tok,
                     "seconds": seconds, "texts_per_s": rate, "tokens_per_s": n_tok / seconds,
                     "full_run_texts": full, "projected_full_minutes": full / rate / 60,
                     "max_abs_diff_per_token": None, "max_abs_diff_per_text_sum": diff})
    print(f"[bench] vllm: {weights} weights; vLLM applied {got}; rows 'vllm_prefill' in the table (max|Δ|/sum "
          f"against the in-process provider{'' if weights == 'saved' else ': not compared, dummy weights'})",
          flush=True)
    return {"rows": rows, "python": str(python), "weights": weights, "server_args": srv.args,
            "startup_seconds": srv.startup_s, "applied": got, "server_log_tail": log_tail}
