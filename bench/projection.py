"""The causal scorer's output projection, blocked (stereoprobe.providers.projection) against one product per call.

For each model shape (hidden width 64: the harness's tiny Llama; 576: SmolLM2-135M, the default model; both over
the default tokenizer's 49,152-token vocabulary), a one-layer random Llama's :class:`CausalScorer` scores the
same hidden rows (``--rows`` per call, ``--calls`` calls) through ``project_scores``, alternately old (the head
as one product of all the call's rows, then the float32 cross-entropy: the path before issue 44's fourth
session, which the scorer still takes off CPU) and new (row blocks of ``ROW_BLOCK`` rows, vocabulary blocks of
``VOCAB_BLOCK`` columns, spread over torch's intra-op threads), in the order old/new/new/old per round. Prints
per contender the best wall and process CPU seconds (all threads), the ratios old/new, and whether every
log-probability is the same bit for bit (exit 1 if not). ``--sweep`` also times other block shapes (new only).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/projection.py
    HF_HUB_OFFLINE=1 .venv/bin/python bench/projection.py --sweep --hidden 64
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

VOCAB = 49_152


def scorer_of(hidden: int):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from stereoprobe.providers.scoring import CausalScorer

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0)
    scorer = CausalScorer(LlamaForCausalLM(config).eval())
    if scorer.blocked is None:
        raise SystemExit("the blocked projection is off for this model (not a plain linear head on CPU)")
    return scorer


def timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def compare(hidden: int, rows: int, calls: int, rounds: int, sweep: bool) -> bool:
    import torch

    scorer = scorer_of(hidden)
    blocked = scorer.blocked
    g = torch.Generator().manual_seed(1)
    hs = [torch.randn(rows, hidden, generator=g) for _ in range(calls)]
    ts = [torch.randint(0, VOCAB, (rows,), generator=g) for _ in range(calls)]

    def run(use_blocked: bool) -> torch.Tensor:
        scorer.blocked = blocked if use_blocked else None
        return torch.cat([scorer.project_scores(h, t, 0)[0] for h, t in zip(hs, ts)])

    best: dict[str, tuple[float, float]] = {}
    results: dict[str, torch.Tensor] = {}
    run(True)  # warm: buffers, thread pool
    for _ in range(rounds):
        for name in ("old", "new", "new", "old"):
            wall, cpu, out = timed(lambda: run(name == "new"))
            w0, c0 = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(w0, wall), min(c0, cpu))
            results[name] = out  # type: ignore[assignment]
    same = torch.equal(results["old"], results["new"])
    (ow, oc), (nw, nc) = best["old"], best["new"]
    print(f"hidden {hidden:4d}: old wall {ow:6.2f} s cpu {oc:6.2f} s | new wall {nw:6.2f} s cpu {nc:6.2f} s | "
          f"old/new wall {ow / nw:4.2f}x cpu {oc / nc:4.2f}x | {rows * calls} rows, bit-identical: {same}",
          flush=True)
    if sweep:
        for row_block in (32, 64, 128, 256, 512):
            for vocab_block in (512, 1024, 2048, 4096):
                scorer.row_block, blocked.vocab_block = row_block, vocab_block
                wall, cpu, _ = min((timed(lambda: run(True)) for _ in range(rounds)), key=lambda r: r[0])
                print(f"  rows {row_block:4d} x vocabulary {vocab_block:5d}: wall {wall:6.2f} s cpu {cpu:6.2f} s "
                      f"(old/this wall {ow / wall:4.2f}x)", flush=True)
    return same


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, nargs="+", default=[64, 576], help="hidden widths (model shapes)")
    ap.add_argument("--rows", type=int, default=1000, help="rows per project_scores call")
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=1, help="old/new/new/old rounds")
    ap.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    ap.add_argument("--sweep", action="store_true", help="also time other block shapes")
    args = ap.parse_args()
    import os

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.2f}", flush=True)
    ok = all([compare(h, args.rows, args.calls, args.rounds, args.sweep) for h in args.hidden])
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
