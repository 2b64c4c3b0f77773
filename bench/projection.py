"""The causal scorer's output projection on CPU: the fused target log-probabilities against the blocked logits.

For each model shape (hidden width 64: the harness's tiny Llama; 576: SmolLM2-135M, the default model; both over
the default tokenizer's 49,152-token vocabulary), a one-layer random Llama's :class:`CausalScorer` scores the
same hidden rows (``--rows`` per call, ``--calls`` calls) without top-k, alternately old (issue 44's fourth
session: row blocks of ``ROW_BLOCK`` rows whose whole logits are computed in ``VOCAB_BLOCK``-column products into a
per-thread buffer, then the float32 cross-entropy of the block) and new (``project_scores``: per ``CHUNK``-column
chunk the product, the row maxima and the sums of exponentials, combined once: no row block's logits held), in
the order old/new/new/old per round, the row blocks spread over torch's intra-op threads in both. Prints per
contender the best wall and process CPU seconds (all threads), the ratios old/new, and each contender's largest
error against a float64 log-softmax of the same float32 logits in units of ``eps32 * max(|log-sum-exp|,
|log-probability|, 1)`` (exit 1 if the new one exceeds the bound of 4 that tests/providers/test_projection.py
states). ``--sweep`` also times other chunk and row-block shapes (new only).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/projection.py --rounds 3
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


def errors(scorer, hs, ts, results: dict) -> dict[str, float]:
    """Each contender's largest error against a float64 log-softmax of the same float32 logits, in units of
    ``eps32 * max(|log-sum-exp|, |log-probability|, 1)``."""
    import torch

    worst = {name: 0.0 for name in results}
    offset = 0
    for h, t in zip(hs, ts):
        for s in range(0, h.shape[0], 128):
            wide = scorer.head(h[s : s + 128]).double()
            exact = torch.log_softmax(wide, dim=-1).gather(1, t[s : s + 128, None])[:, 0]
            unit = torch.finfo(torch.float32).eps * torch.maximum(torch.logsumexp(wide, -1).abs(), exact.abs()).clamp(
                min=1.0)
            for name, out in results.items():
                got = out[offset + s : offset + s + exact.shape[0]].double()
                worst[name] = max(worst[name], float(((got - exact).abs() / unit).max()))
        offset += h.shape[0]
    return worst


def compare(hidden: int, rows: int, calls: int, rounds: int, sweep: bool) -> bool:
    import torch

    from stereoprobe.providers.scoring import _scores_from_rows

    scorer = scorer_of(hidden)
    blocked = scorer.blocked
    g = torch.Generator().manual_seed(1)
    hs = [torch.randn(rows, hidden, generator=g) for _ in range(calls)]
    ts = [torch.randint(0, VOCAB, (rows,), generator=g) for _ in range(calls)]

    def old(h: torch.Tensor, t: torch.Tensor) -> torch.Tensor:  # the blocked logits, then the cross-entropy
        padded = torch.cat([t, t.new_zeros(scorer._row_slices(h.shape[0], 0)[-1].stop - h.shape[0])])
        parts = scorer._map_slices(h, 0, lambda sl, logits: _scores_from_rows(logits, padded[sl], 0)[0])
        return torch.cat(parts)[: h.shape[0]]

    def run(new: bool) -> torch.Tensor:
        with torch.inference_mode():
            return torch.cat([scorer.project_scores(h, t, 0)[0] if new else old(h, t) for h, t in zip(hs, ts)])

    best: dict[str, tuple[float, float]] = {}
    results: dict[str, torch.Tensor] = {}
    run(True), run(False)  # warm: buffers, thread pool
    for _ in range(rounds):
        for name in ("old", "new", "new", "old"):
            wall, cpu, out = timed(lambda: run(name == "new"))
            w0, c0 = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(w0, wall), min(c0, cpu))
            results[name] = out  # type: ignore[assignment]
    with torch.inference_mode():
        worst = errors(scorer, hs, ts, results)
    (ow, oc), (nw, nc) = best["old"], best["new"]
    print(f"hidden {hidden:4d}: old wall {ow:6.2f} s cpu {oc:6.2f} s | new wall {nw:6.2f} s cpu {nc:6.2f} s | "
          f"old/new wall {ow / nw:4.2f}x cpu {oc / nc:4.2f}x | {rows * calls} rows, largest error vs float64 "
          f"(eps32 units): old {worst['old']:.2f} new {worst['new']:.2f}", flush=True)
    if sweep:
        for row_block in (64, 128, 256):
            for chunk in (512, 1024, 2048, 4096):
                scorer.row_block, blocked.chunk = row_block, chunk
                wall, cpu, _ = min((timed(lambda: run(True)) for _ in range(rounds)), key=lambda r: r[0])
                print(f"  rows {row_block:4d} x chunk {chunk:5d}: wall {wall:6.2f} s cpu {cpu:6.2f} s "
                      f"(old/this wall {ow / wall:4.2f}x cpu {oc / cpu:4.2f}x)", flush=True)
    return worst["new"] <= 4


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
