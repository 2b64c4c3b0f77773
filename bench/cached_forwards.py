"""Which scoring forwards CUDA graphs can capture, before and after the fixed-shape cache (CPU, no card needed).

The causal scorer's forwards are of three kinds: cache-free (texts without a shared prefix), prefix passes (a
batch's shared prefixes, run once) and continuations of those prefixes. Graphs captured only the first kind
(``stereoprobe/providers/graphs.py``); with the fixed-shape cache (``stereoprobe/providers/cached_graphs.py``)
the continuations are capturable too. For GlobalBias- and DBB-shaped requests (the synthetic workloads of
``bench/gpu_throughput.py``, planned at the default fixed shapes of a card) this prints the forwards and padded
tokens of each kind and the distinct shapes to capture; then it scores the first requests with the bundled
model in float32 through the dynamic and the fixed-shape cache and prints their agreement and time ratio
(same command, same machine; eager on CPU: the ratio is the fixed cache's own cost, not a graph's gain).

    python bench/cached_forwards.py --gb-sentences 2000 --dbb-requests 400 --score-requests 6
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_throughput import dbb_texts, globalbias_texts  # noqa: E402

from stereoprobe.providers.cached_graphs import attach_cached  # noqa: E402
from stereoprobe.providers.microbatch import MicroBatchShape  # noqa: E402
from stereoprobe.providers.planning import BatchPolicy  # noqa: E402
from stereoprobe.providers.scoring import CausalScorer  # noqa: E402


def forward_kinds(seqs: list[list[int]], groups: list[int], policy: BatchPolicy) -> dict[str, Any]:
    """Forwards, padded tokens and distinct shapes of each kind in the plan of ``seqs``."""
    out: dict[str, Any] = {k: {"forwards": 0, "tokens": 0, "shapes": set()} for k in ("cache_free", "prefix",
                                                                                      "continuation")}
    for c in policy.plan(seqs, True, groups):
        s = c.shape
        if not c.shared:
            out["cache_free"]["forwards"] += 1
            out["cache_free"]["tokens"] += s.rows * s.width
            out["cache_free"]["shapes"].add((s.rows, s.width))
            continue
        out["prefix"]["forwards"] += 1
        out["prefix"]["tokens"] += s.prefix_rows * s.prefix_width
        out["prefix"]["shapes"].add((s.prefix_rows, s.prefix_width))
        out["continuation"]["forwards"] += 1
        out["continuation"]["tokens"] += s.rows * s.width
        out["continuation"]["shapes"].add((s.rows, s.prefix_width, s.width))
    return {k: {**v, "shapes": len(v["shapes"])} for k, v in out.items()}


@torch.inference_mode()
def agreement(scorer: CausalScorer, seqs: list[list[int]], groups: list[int], policy: BatchPolicy) -> dict[str, Any]:
    """Dynamic vs fixed-shape cache on the same plan: max |Δ| per token, bit identity, seconds of each."""
    runs = {}
    for label in ("dynamic", "fixed", "dynamic_again", "fixed_again"):  # each twice, alternating: warm caches
        scorer.cached = None
        if label.startswith("fixed"):
            attach_cached(scorer, (True, "off: not a CUDA device"), False, policy.shape.tokens if policy.shape else 0)
        t0 = time.perf_counter()
        runs[label] = ([s.logprobs for s in scorer.score(seqs, policy, True, groups=groups)], time.perf_counter() - t0)
    dyn, fix = runs["dynamic"][0], runs["fixed"][0]
    return {"tokens": sum(len(s) - 1 for s in seqs), "identical": dyn == fix,
            "max_abs_diff_per_token": max(abs(a - b) for x, y in zip(dyn, fix) for a, b in zip(x, y)),
            "seconds_dynamic": runs["dynamic_again"][1], "seconds_fixed": runs["fixed_again"][1]}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from stereoprobe.providers.default_model import default_model_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gb-sentences", type=int, default=2000)
    ap.add_argument("--dbb-requests", type=int, default=400)
    ap.add_argument("--microbatch-tokens", type=int, default=4096, help="the fixed shapes planned (a card's default)")
    ap.add_argument("--score-requests", type=int, default=6, help="requests of each workload scored on the CPU (0: count only)")
    args = ap.parse_args(argv)
    tok = AutoTokenizer.from_pretrained(default_model_dir())
    scorer = None
    if args.score_requests:
        model = AutoModelForCausalLM.from_pretrained(default_model_dir(), dtype=torch.float32).eval()
        scorer = CausalScorer(model, pad_id=int(tok.pad_token_id or 0))
    tokens = args.microbatch_tokens
    policy = BatchPolicy(shape=MicroBatchShape(tokens=tokens, project_rows=min(1024, tokens)))
    result: dict[str, Any] = {}
    workloads = (("globalbias", globalbias_texts(args.gb_sentences)), ("dbb", dbb_texts(args.dbb_requests, tok)))
    for name, requests in workloads:
        seqs = [list(tok(t)["input_ids"]) for r in requests for t in r]
        groups = [k for k, r in enumerate(requests) for _ in r]
        kinds = forward_kinds(seqs, groups, policy)
        result[name] = {"texts": len(seqs), "requests": len(requests), "kinds": kinds}
        total = sum(k["forwards"] for k in kinds.values())
        print(f"{name}: {len(seqs)} texts in {len(requests)} requests, {total} forwards at fixed shapes of "
              f"{args.microbatch_tokens} tokens")
        for kind, k in kinds.items():
            print(f"  {kind:<13} {k['forwards']:>6} forwards ({100 * k['forwards'] / max(1, total):.0f} %), "
                  f"{k['tokens']:>9} padded tokens, {k['shapes']:>3} distinct shapes")
        capturable = kinds["cache_free"]["forwards"] + kinds["continuation"]["forwards"]
        print(f"  capturable: {kinds['cache_free']['forwards']} forwards before, {capturable} with the fixed cache "
              f"({100 * capturable / max(1, total):.0f} %); still eager: the {kinds['prefix']['forwards']} prefix "
              "passes")
        if scorer is None:
            continue
        n = sum(len(r) for r in requests[: args.score_requests])
        check = result[name]["check"] = agreement(scorer, seqs[:n], groups[:n],
                                                  BatchPolicy(shape=MicroBatchShape(256, 64)))
        print(f"  float32 CPU, {n} texts ({check['tokens']} scored tokens), fixed vs dynamic cache: identical "
              f"{check['identical']}, max |Δ| per token {check['max_abs_diff_per_token']:.1e}; time fixed/dynamic "
              f"{check['seconds_fixed'] / check['seconds_dynamic']:.2f}")
    return result


if __name__ == "__main__":
    main()
