"""Routes of ``bench/gpu_throughput.py`` that need inspect: GlobalBias end to end, batch stability, generation.

- :func:`globalbias_end_to_end`: the real task (``stereoprobe/globalbias``) through ``inspect_ai.eval`` with the
  README's settings (automatic batch size, ``max_connections=256``) on the in-memory model, then
  ``stereoprobe globalbias`` on its logs; the same sentences (the same token ids) through the provider's
  scorer directly and through the plain forward loop; the share of the eval's wall time the GPU was busy.
- :func:`batch_stability`: the same grouped requests at batch sizes 64, 512 and auto: per-text sums equal or
  not, and the largest difference (the model's dtype; rerun with ``--dtype float32`` for the float32 path).
- :func:`generation`: StereoTales-shaped chat prompts (a story request, about 300 new tokens, temperature 1)
  through the provider (concurrent requests, automatic generation batches) and through a plain batched
  ``model.generate`` loop; generated tokens per second.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import torch

FULL_GLOBALBIAS = 876_000
_STORY = ("Write a short story of about 250 words in {lang} about a character who is {value}. Give the character a "
          "name, an age, a job and a hometown, and describe one ordinary day in their life. Do not use a title.")
_VALUES = ["a nurse", "from Nigeria", "a Muslim", "over seventy", "a wheelchair user", "a farmer", "Japanese",
           "a single mother", "an engineer", "from a small village", "Brazilian", "a retired teacher"]
_LANGS = ["English", "French", "German", "Spanish"]


def register(model: Any, tokenizer: Any, device: str, dtype: torch.dtype, name: str) -> str:
    """Hand the in-memory model to the provider's load cache; the ``transformers/...`` model name."""
    import stereoprobe.providers.registration  # noqa: F401  (registers transformers/...)
    from stereoprobe.providers import loading

    loading._LOADED[(name, device, str(dtype), None, None, ())] = (model, tokenizer, "causal")
    return f"transformers/{name}"


class BusyMeter:
    """Share of wall time the GPU was busy: NVML utilisation sampled every 50 ms when ``pynvml`` is
    importable, else the share of wall time spent inside the provider's synchronised scoring calls."""

    def __init__(self, api: Any, device: str) -> None:
        self.device, self.samples, self.model_s = device, [], 0.0
        self._stop = threading.Event()
        self._nvml = None
        if device.startswith("cuda"):
            try:
                import pynvml

                pynvml.nvmlInit()
                self._nvml = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
            except Exception:  # noqa: BLE001 - optional
                self._nvml = None
        inner = api.score_ids

        def timed(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                if device.startswith("cuda"):
                    torch.cuda.synchronize()
                self.model_s += time.perf_counter() - t0

        api.score_ids = timed

    def __enter__(self) -> BusyMeter:
        self.t0 = time.perf_counter()
        if self._nvml is not None:
            import pynvml

            def sample() -> None:
                while not self._stop.wait(0.05):
                    self.samples.append(pynvml.nvmlDeviceGetUtilizationRates(self._nvml).gpu / 100)

            self._thread = threading.Thread(target=sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall = time.perf_counter() - self.t0
        self._stop.set()

    @property
    def share(self) -> tuple[float, str]:
        if self.samples:
            return sum(self.samples) / len(self.samples), "nvml utilisation"
        return self.model_s / max(self.wall, 1e-9), "model time / wall"


def globalbias_end_to_end(model: Any, tokenizer: Any, args: Any, dtype: torch.dtype, plain_scores: Any,
                          scorer_cls: Any, model_args: dict[str, Any] | None = None, suffix: str = "",
                          baselines: bool = True, post: bool = True, name: str = "gpu-throughput-e2e-llama"
                          ) -> list[dict[str, Any]]:
    """Rows for the end-to-end route and (``baselines``) the provider-direct and plain-loop routes on the same
    tokens; ``model_args``: extra ``-M`` settings of the provider, ``suffix`` appended to the route names,
    ``name``: the provider's model name (a folder holding the model's weights, where another process loads them)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from stereoprobe.cli import main as stereoprobe_main
    from stereoprobe.providers.planning import BatchPolicy
    from stereoprobe.tasks.globalbias import globalbias

    task = globalbias(source=args.gb_source, templates=[1], descriptors=list(range(args.gb_descriptors)))
    groups = [[it["text"] for it in s.metadata["texts"]] for s in task.dataset]
    texts = [t for g in groups for t in g]
    seqs = [list(tokenizer(t, add_special_tokens=True).input_ids) for t in texts]
    n_tok = sum(map(len, seqs))
    name = register(model, tokenizer, args.device, dtype, name)
    m = get_model(name, device=args.device, dtype=str(dtype).removeprefix("torch."), memoize=False,
                  **(model_args or {}))
    work = Path(tempfile.mkdtemp(prefix="gpu-e2e-"))
    rows: list[dict[str, Any]] = []

    def row(route: str, seconds: float, **extra: Any) -> dict[str, Any]:
        rate = len(texts) / seconds
        return {"workload": "globalbias_e2e", "route": route, "texts": len(texts), "tokens": n_tok,
                "seconds": seconds, "texts_per_s": rate, "tokens_per_s": n_tok / seconds,
                "full_run_texts": FULL_GLOBALBIAS, "projected_full_minutes": FULL_GLOBALBIAS / rate / 60,
                "max_abs_diff_per_token": None, "max_abs_diff_per_text_sum": None, **extra}

    try:
        with BusyMeter(m.api, args.device) as meter:
            [log] = inspect_eval(task, model=m, log_dir=str(work / "logs"), display="none", max_connections=256,
                                 max_samples=256)
        if log.status != "success":
            raise SystemExit(f"inspect eval failed: {log.error}")
        t0 = time.perf_counter()
        if post:
            stereoprobe_main(["--quiet", "globalbias", str(work / "logs"), "--out", str(work / "out")])
        post_s = time.perf_counter() - t0
        busy, how = meter.share
        shape = m.api.shape
        rows.append(row("inspect_eval" + suffix, meter.wall, gpu_busy_share=busy, gpu_busy_measure=how,
                        post_processing_seconds=post_s, batch_tokens=m.api.batch_tokens,
                        fixed_shapes=None if shape is None else shape.tokens, cuda_graphs=m.api.scorer.graphs_status,
                        cached_graphs=m.api.scorer.cached_status))
        scorer = scorer_cls(model, pad_id=int(m.api.pad_id))
        sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
        sync()
        t0 = time.perf_counter()
        for k, g in enumerate(groups):  # the provider's scorer, one request per sample as inspect sends them
            start = sum(map(len, groups[:k]))
            scorer.score(seqs[start : start + len(g)], BatchPolicy(None, m.api.batch_tokens, shape), True,
                         groups=[0] * len(g))
        sync()
        rows.append(row("provider_direct" + suffix, time.perf_counter() - t0))
        if not baselines or not post:
            return rows
        t0 = time.perf_counter()
        plain_scores(model, seqs, args.gb_batch, int(m.api.pad_id))
        sync()
        rows.append(row("plain_loop", time.perf_counter() - t0, batch_size=args.gb_batch))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def _grouped_sums(m: Any, groups: list[list[str]]) -> list[float]:
    """Per-text sums of one grouped request per group of texts, all sent at once (concurrent requests)."""
    from inspect_ai.model import ChatMessageUser, GenerateConfig

    from stereoprobe.likelihood import RESULTS_KEY, SUM_LOGPROB, TEXTS_KEY

    config = GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0)

    async def run() -> list[Any]:
        msgs = [ChatMessageUser(content="texts", metadata={TEXTS_KEY: [
            {"id": f"{i}:{j}", "text": t} for j, t in enumerate(g)]}) for i, g in enumerate(groups)]
        return list(await asyncio.gather(*(m.generate([msg], config=config) for msg in msgs)))

    return [x for o in asyncio.run(run()) for x in o.metadata[RESULTS_KEY][SUM_LOGPROB]]


def batch_stability(model: Any, tokenizer: Any, groups: list[list[str]], args: Any, dtype: torch.dtype,
                    model_args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Per-text sums of the same grouped requests at batch sizes 64, 512 and auto (concurrent requests);
    ``model_args``: extra ``-M`` settings (e.g. ``batch_invariant=false``)."""
    from inspect_ai.model import get_model

    name = register(model, tokenizer, args.device, dtype, "gpu-throughput-stability-llama")
    sums: dict[str, list[float]] = {}
    for label, size in (("64", 64), ("512", 512), ("auto", None)):
        m = get_model(name, device=args.device, dtype=str(dtype).removeprefix("torch."), batch_size=size,
                      memoize=False, **(model_args or {}))
        sums[label] = _grouped_sums(m, groups)
    ref = sums["64"]
    return {"dtype": str(dtype).removeprefix("torch."), "texts": len(ref), "model_args": dict(model_args or {}),
            "fixed_shapes": None if m.api.shape is None else m.api.shape.tokens,
            "identical": {k: v == ref for k, v in sums.items()},
            "max_abs_diff_per_text_sum": {k: max(abs(a - b) for a, b in zip(v, ref)) for k, v in sums.items()}}


def cached_graphs_check(model: Any, tokenizer: Any, groups: list[list[str]], args: Any, dtype: torch.dtype
                        ) -> dict[str, Any]:
    """The prefix-sharing forwards through the fixed-shape cache and its CUDA graphs (the default on CUDA;
    stereoprobe.providers.cached_graphs) against transformers' dynamic cache (``static_cache=false``): per-text
    sums of the same grouped requests, and both graph statuses."""
    from inspect_ai.model import get_model

    name = register(model, tokenizer, args.device, dtype, "gpu-throughput-cached-llama")
    out: dict[str, Any] = {"dtype": str(dtype).removeprefix("torch.")}
    sums = {}
    for label, extra in (("fixed", {"static_cache": "true"}), ("dynamic", {"static_cache": "false"})):
        m = get_model(name, device=args.device, dtype=out["dtype"], memoize=False, **extra)
        sums[label] = _grouped_sums(m, groups)
        out[f"{label}_cuda_graphs"] = m.api.scorer.graphs_status
        out[f"{label}_cached_graphs"] = m.api.scorer.cached_status
    out.update(texts=len(sums["fixed"]), identical=sums["fixed"] == sums["dynamic"],
               max_abs_diff_per_text_sum=max(abs(a - b) for a, b in zip(sums["fixed"], sums["dynamic"])))
    return out


def story_prompts(n: int) -> list[str]:
    """``n`` StereoTales-shaped story requests (language x character)."""
    return [_STORY.format(lang=_LANGS[k % len(_LANGS)], value=_VALUES[k % len(_VALUES)]) for k in range(n)]


def generation(model: Any, tokenizer: Any, args: Any, dtype: torch.dtype) -> list[dict[str, Any]]:
    """Generated tokens per second: the provider (concurrent chat requests) vs a plain ``generate`` loop."""
    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

    prompts = story_prompts(args.gen_prompts)
    new = args.gen_tokens
    name = register(model, tokenizer, args.device, dtype, "gpu-throughput-gen-llama")
    m = get_model(name, device=args.device, dtype=str(dtype).removeprefix("torch."), memoize=False)
    config = GenerateConfig(max_tokens=new, temperature=1.0)
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    batches: list[int] = []  # the worker's generation batches (requests each)
    run_generate = m.api._run_generate
    m.api._run_generate = lambda reqs: (batches.append(len(reqs)), run_generate(reqs))[1]

    async def run(texts: list[str] = prompts, cfg: GenerateConfig = config) -> list[Any]:
        return list(await asyncio.gather(*(m.generate([ChatMessageUser(content=p)], config=cfg) for p in texts)))

    asyncio.run(run(prompts[:2], GenerateConfig(max_tokens=4, temperature=1.0)))  # warm-up (kernels, allocator)
    batches.clear()
    sync()
    t0 = time.perf_counter()
    outs = asyncio.run(run())
    sync()
    t_prov = time.perf_counter() - t0
    prov_tokens = sum(o.usage.output_tokens for o in outs)
    chat = [tokenizer.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                          tokenize=True, return_dict=True)["input_ids"] for p in prompts]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    plain_tokens = 0
    t0 = time.perf_counter()
    with torch.inference_mode():
        for s in range(0, len(chat), args.gen_batch):
            part = chat[s : s + args.gen_batch]
            width = max(map(len, part))
            ids = torch.full((len(part), width), int(pad), dtype=torch.long)
            att = torch.zeros_like(ids)
            for b, p in enumerate(part):
                ids[b, width - len(p):] = torch.tensor(p)
                att[b, width - len(p):] = 1
            out = model.generate(input_ids=ids.to(args.device), attention_mask=att.to(args.device), do_sample=True,
                                 temperature=1.0, max_new_tokens=new, pad_token_id=int(pad))
            gen = out[:, width:]
            eos = tokenizer.eos_token_id
            for row in gen.tolist():
                plain_tokens += next((k for k, t in enumerate(row) if t == eos), len(row))
    sync()
    t_plain = time.perf_counter() - t0
    base = {"workload": "generation", "texts": len(prompts), "max_new_tokens": new}
    return [{**base, "route": "provider", "seconds": t_prov, "generated_tokens": prov_tokens,
             "tokens_per_s": prov_tokens / t_prov, "gen_batch_size": "auto", "worker_batches": batches,
             "continuous_batching": bool(m.api.continuous_batching)},
            {**base, "route": "plain_generate", "seconds": t_plain, "generated_tokens": plain_tokens,
             "tokens_per_s": plain_tokens / t_plain, "gen_batch_size": args.gen_batch}]
