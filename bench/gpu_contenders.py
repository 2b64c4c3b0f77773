"""The contenders of ``bench/gpu_throughput.py`` beside the in-process provider, in the same bench call:

- ``vllm``: the same synthetic texts through a vLLM server's prefill-only route (:mod:`gpu_vllm`), rows
  ``vllm_prefill``; skipped with its reason where no vLLM can be started;
- ``scorer_process``: GlobalBias end to end through ``inspect eval`` as the ``globalbias_e2e`` route runs it,
  with ``-M scorer_process=true`` (the provider's scorer in a process of its own,
  ``stereoprobe/providers/scorer_process.py``), row ``inspect_eval_scorer_process``. The scorer process loads
  the model from a folder, so the bench's in-memory model is saved first (its time is not in the row). The row
  is a rate beside ``inspect_eval`` (in process); that both give the same numbers is checked on CPU in float32
  (``tests/providers/test_scorer_process.py``). Its ``cuda_graphs`` field is the provider process's scorer's,
  not the scorer process's.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import gpu_vllm


def run(workloads: list[tuple[str, list[list[str]], int]], model: Any, tokenizer: Any, args: argparse.Namespace,
        dtype: torch.dtype, add: Callable[..., None], add_rows: Callable[..., None], out: dict[str, Any],
        baselines: tuple[Any, Any]) -> None:
    """Both contenders unless ``--skip`` names them; ``add``/``add_rows`` are the bench's budgeted recorders."""
    if "vllm" not in args.skip:
        add("vllm", lambda: gpu_vllm.contender(model, tokenizer, workloads, args, dtype), 60)
        out["rows"] += (out.get("vllm") or {}).pop("rows", [])
    if "scorer_process" not in args.skip and "e2e" not in args.skip:
        add_rows("globalbias_e2e_scorer_process", lambda: scorer_process_e2e(model, tokenizer, args, dtype,
                                                                               *baselines), 60)


def scorer_process_e2e(model: Any, tokenizer: Any, args: argparse.Namespace, dtype: torch.dtype, plain_scores: Any,
                       scorer_cls: Any) -> list[dict[str, Any]]:
    """The GlobalBias end-to-end row with ``-M scorer_process=true`` (the in-memory model, registered under the
    folder's name, serves the provider's own process; the scorer process loads the folder)."""
    import gpu_routes

    with tempfile.TemporaryDirectory() as tmp:
        folder = gpu_vllm.model_folder(model, args.tokenizer, Path(tmp) / "model", "saved")
        common = dict(baselines=False, post=False, name=str(folder))
        try:
            rows = gpu_routes.globalbias_end_to_end(model, tokenizer, args, dtype, plain_scores, scorer_cls,
                                                    {"scorer_process": "true"}, "_scorer_process", **common)
        finally:  # its copy of the weights leaves the card before the next route
            for proc in mp.active_children():
                if proc.name == "stereoprobe-scorer":
                    proc.terminate()
                    proc.join(30)
    return [r for r in rows if r["route"].startswith("inspect_eval")]
