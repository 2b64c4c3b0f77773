"""End-to-end DBB routes of ``bench/gpu_throughput.py``, the goal lines, and the time budget.

- :func:`dbb_end_to_end`: the real tasks through ``inspect_ai.eval`` on the in-memory model — DBB in
  log-probability mode (``stereoprobe/dbb -T mode=logprob``: one-token requests with top-20 log-probabilities,
  every question and option order of a template in one grouped request, its prompts sharing their prefix) and
  DBB-SG (``stereoprobe/dbb_sg``: every option sentence and variation scored as one grouped likelihood request
  per template, each question's prompt run once) — with the bundled templates (``source=bundled``: 8 templates
  x 50 questions, the upstream shapes: chat-formatted story prompt, two options), logprob mode repeated by
  option-order epochs to give the GPU enough work (DBB-SG: one inspect epoch, its unit allows no more). Every
  request the provider received is recorded and replayed through the provider's worker functions without
  inspect (``provider_direct``: the same requests, the same batching), so the ratio inspect / direct says what
  inspect's per-sample work costs. Full runs: 154,700 log-probability requests (77,350 questions x 2 orders)
  and 1,547,000 DBB-SG texts (77,350 questions x 10 variations x 2 options).
- :func:`goal_lines`: one line per goal of issue 36, met or not, from the result's figures, each projected
  full-run time beside its arithmetic floor at the TFLOP/s measured on the device (:func:`measured_tflops`).
- :class:`Budget`: the bench's wall-clock budget; a route that would start after it is skipped and recorded.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

FULL_DBB_LOGPROB_REQUESTS = 77_350 * 2
FULL_DBB_SG_TEXTS = 77_350 * 10 * 2


class Budget:
    """Wall-clock budget of the whole bench: ``run`` skips a route once the budget is spent and records an
    error instead of losing the figures measured so far."""

    def __init__(self, seconds: float) -> None:
        self.t0, self.seconds = time.perf_counter(), seconds
        self.skipped: list[str] = []
        self.errors: dict[str, str] = {}
        self.route_seconds: dict[str, float] = {}

    def left(self) -> float:
        return self.seconds - (time.perf_counter() - self.t0)

    def run(self, name: str, fn: Callable[[], Any], need: float = 0.0) -> Any:
        if self.left() < need:
            self.skipped.append(name)
            print(f"[bench] {name}: skipped ({self.left():.0f} s left, needs about {need:.0f} s)", flush=True)
            return None
        t0 = time.perf_counter()
        print(f"[bench] {name} ...", flush=True)
        try:
            return fn()
        except Exception as ex:  # noqa: BLE001 - recorded; the other routes still run
            self.errors[name] = f"{type(ex).__name__}: {ex}"[:500]
            print(f"[bench] {name} FAILED: {self.errors[name]}", flush=True)
            return None
        finally:
            self.route_seconds[name] = time.perf_counter() - t0
            print(f"[bench] {name}: {self.route_seconds[name]:.1f} s ({self.left():.0f} s left)", flush=True)


class Capture:
    """Records every worker request a provider receives (the same objects the worker runs)."""

    def __init__(self, api: Any) -> None:
        self.requests: list[Any] = []
        inner = api._submit

        async def submit(request: Any) -> Any:
            self.requests.append(request)
            return await inner(request)

        api._submit = submit


def replay(api: Any, requests: list[Any]) -> None:
    """Run recorded requests through the provider's worker functions, without inspect and without the queue:
    the same planning and batching (scores and grouped one-token requests: one plan per ``FLUSH_BATCHES``
    forwards' worth of requests, as the worker takes them; generation: the worker's generation parts)."""
    from stereoprobe.providers.transformers_api import FLUSH_BATCHES

    by_key: dict[Any, list[Any]] = {}
    for r in requests:
        by_key.setdefault(r.key, []).append(r)
    limit = FLUSH_BATCHES * int(api.batch_tokens or 1)
    from stereoprobe.providers.text_batches import run_answers

    for key, reqs in by_key.items():
        if key[0] == "generate":
            for part in api._generation_parts(reqs):
                api._run_generate(part)
            continue
        run = api._run_scores if key[0] == "score" else (lambda rs: run_answers(api, rs))  # "answer": grouped DBB
        start = 0
        while start < len(reqs):
            tokens, end = 0, start
            while end < len(reqs) and (end == start or tokens < limit):
                items = reqs[end].payload.get("batch") or [reqs[end].payload]
                tokens += sum(len(p.get("ids") or ()) for p in items)
                end += 1
            run(reqs[start:end])
            start = end


def dbb_end_to_end(model: Any, tokenizer: Any, args: Any, dtype: torch.dtype, variant: str,
                   busy_meter: Any, register: Callable[..., str]) -> list[dict[str, Any]]:
    """Rows ``inspect_eval`` and ``provider_direct`` for ``variant`` "logprob" or "sg" (see the module doc)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from stereoprobe.tasks.dbb import dbb, dbb_sg

    source = getattr(args, "dbb_source", "bundled")
    sel = {"source": source, "limit_templates": args.dbb_templates}
    if source == "bundled":
        sel["faithful"] = False
    if variant == "logprob":
        task, epochs, full, label = dbb(**sel, mode="logprob", epochs=args.dbb_epochs), 1, FULL_DBB_LOGPROB_REQUESTS, \
            "dbb_logprob_e2e"
    else:
        task, epochs, full, label = dbb_sg(**sel), args.dbb_sg_epochs, FULL_DBB_SG_TEXTS, "dbb_sg_e2e"
    name = register(model, tokenizer, args.device, dtype, f"gpu-throughput-{variant}-llama")
    m = get_model(name, device=args.device, dtype=str(dtype).removeprefix("torch."), memoize=False)
    capture = Capture(m.api)
    work = Path(tempfile.mkdtemp(prefix=f"gpu-{variant}-"))
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    try:
        with busy_meter(m.api, args.device) as meter:
            [log] = inspect_eval(task, model=m, log_dir=str(work / "logs"), display="none", max_connections=256,
                                 max_samples=256, epochs=epochs)
        if log.status != "success":
            raise RuntimeError(f"inspect eval {variant} failed: {log.error}")
        busy, how = meter.share
        n_samples = len(log.samples or [])
        reqs = capture.requests
        units = sum(len(r.payload.get("batch") or [r.payload]) for r in reqs)  # texts or one-token requests
        n_tok = sum(len(p.get("ids") or ()) for r in reqs for p in (r.payload.get("batch") or [r.payload]))
        n_once = tokens_once(reqs)
        sync()
        t0 = time.perf_counter()
        replay(m.api, reqs)
        sync()
        t_direct = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def row(route: str, seconds: float, **extra: Any) -> dict[str, Any]:
        rate = units / seconds
        return {"workload": label, "route": route, "texts": units, "tokens": n_tok, "tokens_once": n_once,
                "seconds": seconds,
                "texts_per_s": rate, "tokens_per_s": n_tok / seconds, "full_run_texts": full,
                "projected_full_minutes": full / rate / 60, "max_abs_diff_per_token": None,
                "max_abs_diff_per_text_sum": None, **extra}

    return [row("inspect_eval", meter.wall, gpu_busy_share=busy, gpu_busy_measure=how, requests=len(reqs),
                samples=n_samples, cuda_graphs=m.api.scorer.graphs_status,
                cached_graphs=m.api.scorer.cached_status),
            row("provider_direct", t_direct, requests=len(reqs))]


def tokens_once(reqs: list[Any]) -> int:
    """Tokens of the recorded requests with every prefix shared within a grouped request counted once (the
    planner's prefix groups, :func:`stereoprobe.providers.planning.share_prefixes`): the arithmetic's count."""
    from stereoprobe.providers.planning import share_prefixes

    total = 0
    for r in reqs:
        seqs = [list(p.get("ids") or ()) for p in (r.payload.get("batch") or [r.payload])]
        prefix = share_prefixes(seqs) if len(seqs) > 1 else [0] * len(seqs)
        total += sum(len(s) - p for s, p in zip(seqs, prefix))  # own tokens of every text
        total += sum(len(k) for k in {tuple(s[:p]) for s, p in zip(seqs, prefix) if p})  # each prefix once
    return total


def measured_tflops(device: str, dtype: torch.dtype, n: int = 4096, reps: int = 20) -> float:
    """Dense matrix-product rate of the device in ``dtype`` (TFLOP/s, ``2 n^3`` per product, after a warm-up):
    the rate the arithmetic floors are computed at."""
    if not device.startswith("cuda"):
        n, reps = min(n, 512), min(reps, 5)
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    a @ b
    sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        a @ b
    sync()
    return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e12


def floor_minutes(row: dict[str, Any], parameters: int, tflops: float | None) -> float | None:
    """The full run's arithmetic floor: ``2 x parameters`` FLOPs per token (the forward's matrix products,
    attention left out: short texts), tokens per text as this run's (shared prefixes once where recorded),
    at the measured rate."""
    if not tflops or not row.get("texts"):
        return None
    per_text = (row.get("tokens_once") or row["tokens"]) / row["texts"]
    return 2 * parameters * per_text * row["full_run_texts"] / (tflops * 1e12) / 60


def fixed_shape_cost(rows: list[dict[str, Any]], route: str = "provider_direct") -> float | None:
    """Throughput lost to fixed micro-batch shapes on the GlobalBias end-to-end sentences: 1 - (rate, fixed) /
    (rate, not fixed) of ``route`` (provider_direct: the scorer alone; inspect_eval: through inspect)."""
    gb = {r["route"]: r for r in rows if r["workload"] == "globalbias_e2e"}
    fixed, free = gb.get(route), gb.get(route + "_unfixed")
    if fixed is None or free is None or gb.get("inspect_eval", {}).get("fixed_shapes") is None:
        return None
    return 1.0 - fixed["texts_per_s"] / free["texts_per_s"]


def cost_by_tokens(rows: list[dict[str, Any]], sizes: list[int]) -> dict[int, dict[str, float]]:
    """``--fixed-tokens`` runs (0 = free shapes): per micro-batch size, 1 - rate / free rate, for the
    inspect and provider-direct routes."""
    gb = {r["route"]: r for r in rows if r["workload"] == "globalbias_e2e"}
    out: dict[int, dict[str, float]] = {}
    for t in sizes:
        if t == 0:
            continue
        cost = {}
        for route in ("inspect_eval", "provider_direct"):
            fixed, free = gb.get(f"{route}_fixed{t}"), gb.get(f"{route}_fixed0")
            if fixed is not None and free is not None:
                cost[route] = 1.0 - fixed["texts_per_s"] / free["texts_per_s"]
        if len(cost) == 2:
            out[t] = cost
    return out


def _find(rows: list[dict[str, Any]], workload: str, route: str) -> dict[str, Any] | None:
    return next((r for r in rows if r["workload"] == workload and r["route"] == route), None)


def _verdict(ok: bool | None) -> str:
    return "MET" if ok else "not measured" if ok is None else "NOT MET"


def _floor_text(row: dict[str, Any], result: dict[str, Any]) -> tuple[float | None, str]:
    floor = floor_minutes(row, int(result.get("parameters") or 0), result.get("tflops"))
    if floor is None:
        return None, "floor not measured"
    return floor, f"arithmetic floor {floor:.2f} min at {result['tflops']:.3g} TFLOP/s"


def goal_lines(result: dict[str, Any]) -> list[tuple[str, bool | None, str]]:
    """(goal, met: True/False/None = not measured, the figures) for each goal of issue 36, every projected
    full-run time with its arithmetic floor at the measured TFLOP/s beside it."""
    rows = result.get("rows", [])
    out: list[tuple[str, bool | None, str]] = []
    e2e, direct = _find(rows, "globalbias_e2e", "inspect_eval"), _find(rows, "globalbias_e2e", "provider_direct")
    if e2e and direct:
        ratio = e2e["texts_per_s"] / direct["texts_per_s"]
        ok = e2e["projected_full_minutes"] <= 4 and e2e["gpu_busy_share"] >= 0.9
        out.append(("1 GlobalBias e2e <= 4 min, GPU busy >= 90 %", ok,
                    f"{e2e['projected_full_minutes']:.1f} min on {e2e['texts']} sentences, {e2e['texts_per_s']:.0f}/s, "
                    f"busy {100 * e2e['gpu_busy_share']:.0f} %, {ratio:.2f}x direct; {_floor_text(e2e, result)[1]}"))
    else:
        out.append(("1 GlobalBias e2e", None, "route missing"))
    r, d = _find(rows, "dbb_logprob_e2e", "inspect_eval"), _find(rows, "dbb_logprob_e2e", "provider_direct")
    if r and d:
        per_request = 1000 * (r["seconds"] - d["seconds"]) / max(1, r.get("requests") or 1)
        out.append(("2a DBB log-probability mode e2e <= 6 min", r["projected_full_minutes"] <= 6,
                    f"{r['projected_full_minutes']:.1f} min ({r['texts']} prompts, "
                    f"{100 * r['texts'] / r['full_run_texts']:.1f} % of full, {r['texts_per_s']:.0f}/s), "
                    f"provider direct {d['projected_full_minutes']:.1f} min, inspect adds {per_request:.1f} ms "
                    f"per request; {_floor_text(r, result)[1]}"))
    else:
        out.append(("2a DBB log-probability mode e2e", None, "route missing"))
    r = _find(rows, "dbb_sg_e2e", "inspect_eval")
    floor = _floor_text(r, result) if r else (None, "")
    if r and floor[0]:
        out.append(("2b DBB-SG e2e <= 1.3x its arithmetic floor (shared prompts once)",
                    r["projected_full_minutes"] <= 1.3 * floor[0],
                    f"{r['projected_full_minutes']:.1f} min ({r['texts']} texts, "
                    f"{100 * r['texts'] / r['full_run_texts']:.1f} % of full) = "
                    f"{r['projected_full_minutes'] / floor[0]:.1f}x the {floor[1]}"))
    else:
        out.append(("2b DBB-SG e2e", None, "route or TFLOP/s missing"))
    gen = {g["route"]: g for g in result.get("generation", [])}
    if "provider" in gen and "plain_generate" in gen:
        ratio = gen["provider"]["tokens_per_s"] / gen["plain_generate"]["tokens_per_s"]
        out.append(("3 generation through the provider >= 1.0x plain batched generate", ratio >= 1.0,
                    f"{gen['provider']['tokens_per_s']:.0f} vs {gen['plain_generate']['tokens_per_s']:.0f} "
                    f"tokens/s ({ratio:.2f}x)"))
    else:
        out.append(("3 generation", None, "route missing"))
    stab = result.get("batch_stability") or {}
    fp32 = result.get("batch_stability_float32") or {}
    cost = result.get("fixed_shape_cost_e2e")
    if stab and stab.get("identical"):
        same = all(stab["identical"].values()) and (not fp32 or all(fp32.get("identical", {}).values()))
        cost_text = "cost through inspect not measured (CUDA only)" if cost is None else (
            f"throughput cost {100 * cost:.1f} % through inspect")
        out.append(("4 batch invariance (64/512/auto identical), cost <= 5 % through inspect",
                    (None if cost is None else cost <= 0.05) if same else False,
                    f"{stab['dtype']}: {stab['identical']}; float32: {fp32.get('identical', 'not measured')}; "
                    f"{cost_text}"))
    else:
        out.append(("4 batch invariance", None, "route missing"))
    total = result.get("bench_seconds")
    out.append(("5 one run <= 5 min of device time", None if total is None else total + 60 <= 300,
                f"bench {total:.0f} s + about 60 s machine start and install" if total is not None else "unknown"))
    return out


def print_goals(result: dict[str, Any]) -> None:
    for goal, ok, figures in goal_lines(result):
        print(f"goal {goal}: {_verdict(ok)} ({figures})")


def print_extras(result: dict[str, Any]) -> None:
    """The bench's figures beside its table: float32 check, batch stability, cached-forward graphs, fixed-shape
    cost and generation (bench/gpu_throughput.py's report)."""
    for c in result.get("float32_check") or []:
        print(f"float32 check, {c['workload']}: {c['texts']} texts, provider vs plain max |Δ| per token "
              f"{c['max_abs_diff_per_token']:.2e} nats")
    for key in ("batch_stability", "batch_stability_unfixed", "batch_stability_float32"):
        if key in result:
            b = result[key]
            print(f"{key} ({b['dtype']}, {b['texts']} texts, fixed shapes {b['fixed_shapes']}): identical to batch 64: "
                  f"{b['identical']}; max |Δ| per text sum: {b['max_abs_diff_per_text_sum']}")
    if "cached_graphs" in result:
        c = result["cached_graphs"]
        print(f"cached-forward graphs ({c['dtype']}, {c['texts']} texts): {c['fixed_cached_graphs']}; fixed-shape "
              f"cache vs dynamic cache ({c['dynamic_cached_graphs'] or 'eager'}): identical {c['identical']}, max |Δ| "
              f"per text sum {c['max_abs_diff_per_text_sum']:.2e}")
    for t, c in result.get("fixed_shape_cost_by_tokens", {}).items():
        print(f"fixed shapes of {t} tokens: throughput cost {100 * c['provider_direct']:.1f} % provider direct, "
              f"{100 * c['inspect_eval']:.1f} % through inspect (against free shapes, same run)")
    for g in result.get("generation", []):
        print(f"generation, {g['route']:<15} {g['texts']} stories x {g['max_new_tokens']} tokens: "
              f"{g['generated_tokens']} tokens in {g['seconds']:.1f} s = {g['tokens_per_s']:.0f} tokens/s"
              + (f"; worker batches {g['worker_batches']}" if "worker_batches" in g else ""))
