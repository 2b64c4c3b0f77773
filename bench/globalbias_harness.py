"""GlobalBias through inspect at full size: how much of the time is the harness.

Scores the same GlobalBias sentences (upstream names x the first ``--descriptors`` descriptors x 3 templates;
30,000 sentences with 25 descriptors) and prints scored texts per second

- through ``inspect eval stereoprobe/globalbias`` (grouped samples: one per name group x template), with the
  harness time per text (wall time minus the provider's model time, measured inside the provider);
- through the same task with one sample per sentence (``-T unit=sentence``) on ``--sentence-subset`` texts:
  its harness time per text, and the ratio to the grouped one;
- through the provider directly (``TransformersAPI.score_texts``);
- through lm-eval's HFLM ``loglikelihood_rolling`` (same weights, batch ``--batch-size``);

on a tiny random-weight Llama (2 layers, width 64, the default model's tokenizer: the time is the harness's
and the output projection's) and on the bundled default model (fewer texts: ``--default-texts``), with the
ratios. It also checks that grouped and per-sentence totals agree (largest difference per token).
``--e2e`` adds the command-line target: ``inspect eval stereoprobe/globalbias`` on the tiny model, then
``stereoprobe globalbias``, wall time and log size.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/globalbias_harness.py --source /path/to/GlobalBias --e2e
    STEREOPROBE_UPSTREAM_DIR=/path/to/GlobalBias .venv/bin/python bench/globalbias_harness.py --skip-default
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_tiny_model(folder: Path) -> Path:
    """A 2-layer, width-64 random Llama with the default model's tokenizer, saved in ``folder``."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from stereoprobe.providers.default_model import default_model_dir

    tok = AutoTokenizer.from_pretrained(default_model_dir())
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


class ModelClock:
    """Accumulates the seconds the provider spends scoring (its worker's ``score_ids``)."""

    def __init__(self, api: object) -> None:
        self.seconds = 0.0
        inner = api.score_ids  # type: ignore[attr-defined]

        def timed(*a: object, **k: object) -> object:
            t0 = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                self.seconds += time.perf_counter() - t0

        api.score_ids = timed  # type: ignore[attr-defined]


def _inspect_run(task: object, model_name: str, batch_size: int) -> tuple[object, float, float]:
    """(log, wall seconds, model seconds) of one in-process ``inspect eval``."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    model = get_model(model_name, batch_size=batch_size, device="cpu", memoize=False)
    clock = ModelClock(model.api)
    log_dir = tempfile.mkdtemp(prefix="gb-harness-logs-")
    t0 = time.perf_counter()
    [log] = inspect_eval(task, model=model, log_dir=log_dir, display="none", max_samples=512)
    wall = time.perf_counter() - t0
    if log.status != "success":
        raise SystemExit(f"inspect eval failed: {log.error}")
    from inspect_ai.log import read_eval_log

    log = read_eval_log(log.location)  # every sample in memory; the folder can go
    shutil.rmtree(log_dir, ignore_errors=True)
    return log, wall, clock.seconds


def bench_model(label: str, model_path: str, source: str, n_desc: int, n_texts: int | None, subset: int,
                batch_size: int, lm_eval_texts: int | None = None) -> dict[str, float]:
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import get_model
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from stereoprobe.likelihood import SCORER, read_results
    from stereoprobe.tasks.globalbias import globalbias

    grouped = globalbias(source=source, descriptors=list(range(n_desc)))
    if n_texts is not None:  # keep whole samples, up to n_texts texts
        keep, total = [], 0
        for s in grouped.dataset:
            if total >= n_texts:
                break
            keep.append(s)
            total += s.metadata["n_texts"]
        grouped.dataset = MemoryDataset(keep, name=grouped.dataset.name)
    texts = [it["text"] for s in grouped.dataset for it in s.metadata["texts"]]
    ids = [it["id"] for s in grouped.dataset for it in s.metadata["texts"]]
    n = len(texts)
    print(f"\n== {label}: {model_path} — {n} texts ({len(grouped.dataset)} grouped samples)", flush=True)
    out: dict[str, float] = {"texts": n}
    # warm-up: inspect imports most of its modules lazily during the first eval of a process (seconds); a
    # one-sample eval first keeps that one-off cost out of the per-text figures of both paths
    warm = globalbias(source="bundled", descriptors=[0], templates=[1], groups=["ARAB_F"])
    _inspect_run(warm, f"transformers/{model_path}", batch_size)
    _inspect_run(globalbias(source="bundled", descriptors=[0], templates=[1], groups=["ARAB_F"], unit="sentence"),
                 f"transformers/{model_path}", batch_size)

    log, wall, model_s = _inspect_run(grouped, f"transformers/{model_path}", batch_size)
    grouped_totals = {r.id: r for s in log.samples for r in read_results(s.scores[SCORER])}
    out.update(inspect_rate=n / wall, inspect_harness_per_text=(wall - model_s) / n)
    print(f"  inspect eval (grouped)        {wall:8.1f} s  {n / wall:8.1f} texts/s  harness "
          f"{1e3 * (wall - model_s) / n:.3f} ms/text (model {model_s:.1f} s)", flush=True)

    per = globalbias(source=source, descriptors=list(range(n_desc)), unit="sentence")
    wanted = set(ids[:subset])
    per.dataset = MemoryDataset([s for s in per.dataset if s.id in wanted], name=per.dataset.name)
    plog, pwall, pmodel = _inspect_run(per, f"transformers/{model_path}", batch_size)
    k = len(per.dataset)
    out.update(sentence_harness_per_text=(pwall - pmodel) / k)
    print(f"  inspect eval (per sentence)   {pwall:8.1f} s  {k / pwall:8.1f} texts/s  harness "
          f"{1e3 * (pwall - pmodel) / k:.3f} ms/text on {k} texts (model {pmodel:.1f} s)", flush=True)
    gap = 0.0
    for s in plog.samples:
        v = s.scores["sentence_logprob"].value
        g = grouped_totals[s.id]
        gap = max(gap, abs(v["sum_logprob"] - g.sum_logprob) / v["n_tokens"])
    out["max_gap_per_token"] = gap

    api = get_model(f"transformers/{model_path}", batch_size=batch_size, device="cpu", memoize=False).api
    api.score_texts(texts[:32])
    chunks = [[it["text"] for it in s.metadata["texts"]] for s in grouped.dataset]  # the same requests as inspect
    t0 = time.perf_counter()
    for chunk in chunks:
        api.score_texts(chunk, group=True)
    direct = time.perf_counter() - t0
    out["provider_rate"] = n / direct
    print(f"  provider direct               {direct:8.1f} s  {n / direct:8.1f} texts/s", flush=True)

    sub = texts[:lm_eval_texts] if lm_eval_texts else texts
    lm = HFLM(pretrained=api.model, tokenizer=api.tokenizer, batch_size=batch_size or 64, device="cpu")
    reqs = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(t,), idx=i) for i, t in enumerate(sub)]
    t0 = time.perf_counter()
    lm.loglikelihood_rolling(reqs, disable_tqdm=True)
    lm_s = time.perf_counter() - t0
    out["lm_eval_rate"] = len(sub) / lm_s
    print(f"  lm-eval HFLM rolling          {lm_s:8.1f} s  {len(sub) / lm_s:8.1f} texts/s on {len(sub)} texts",
          flush=True)
    print(f"  ratios: inspect/provider {out['inspect_rate'] / out['provider_rate']:.2f}, inspect/lm-eval "
          f"{out['inspect_rate'] / out['lm_eval_rate']:.2f}, provider/lm-eval "
          f"{out['provider_rate'] / out['lm_eval_rate']:.2f}; harness per text: per-sentence / grouped = "
          f"{out['sentence_harness_per_text'] / max(out['inspect_harness_per_text'], 1e-9):.1f}x; "
          f"max |grouped - per sentence| = {gap:.2e} nats/token", flush=True)
    return out


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def e2e(model_path: Path, source: str, n_desc: int, work: Path, pythonpath: str | None = None,
        label: str = "command line") -> float:
    """The command-line target: ``inspect eval`` then ``stereoprobe globalbias``; wall time and log size.
    ``pythonpath``: run another copy of stereoprobe (its folder must contain ``site-packages``, so that inspect
    registers its tasks), e.g. a checkout of an earlier commit, for a before/after ratio in one command."""
    bin_dir = Path(sys.executable).parent
    logs, out = work / f"logs-{label}", work / f"out-{label}"
    shutil.rmtree(logs, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    desc = "[" + ",".join(map(str, range(n_desc))) + "]"
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    # inspect's command line, run by bench/harness_stages.py (the same main as the `inspect` script, with clocks
    # on the stages: it prints one STAGES line)
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("harness_stages.py")), "eval",
                           "stereoprobe/globalbias", "--model", f"transformers/{model_path}", "-T", f"source={source}",
                           "-T", f"descriptors={desc}", "--log-dir", str(logs), "--display", "none"],
                          check=True, env=env, stdout=subprocess.PIPE, text=True)
    t1, cpu1 = time.perf_counter(), _children_cpu()
    stages = [ln for ln in done.stdout.splitlines() if ln.startswith("STAGES ")]
    print(done.stdout.replace(stages[-1], "").strip() if stages else done.stdout.strip(), flush=True)
    if stages:
        print(f"  stages of inspect eval ({label}): {stages[-1].removeprefix('STAGES ')}", flush=True)
        # the command's wall less the stages' (which end when inspect's main returns): the log's header read
        # back, and the interpreter's shutdown
        after = t1 - t0 - json.loads(stages[-1].removeprefix("STAGES "))["wall"]
        print(f"  after the stages (shutdown): {after:.2f} s", flush=True)
    subprocess.run([str(bin_dir / "stereoprobe"), "--quiet", "globalbias", str(logs), "--out", str(out)], check=True,
                   env=env)
    t2, cpu2 = time.perf_counter(), _children_cpu()
    size = sum(p.stat().st_size for p in logs.rglob("*") if p.is_file())
    print(f"\n== {label}: inspect eval {t1 - t0:.1f} s + stereoprobe globalbias {t2 - t1:.1f} s = "
          f"{t2 - t0:.1f} s wall; CPU time {cpu1 - cpu0:.1f} s + {cpu2 - cpu1:.1f} s (load shifts it less); logs "
          f"{size / 1e6:.2f} MB", flush=True)
    return t2 - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=os.environ.get("STEREOPROBE_UPSTREAM_DIR", "upstream"),
                    help="GlobalBias source: upstream, or a local copy of the upstream repository")
    ap.add_argument("--descriptors", type=int, default=25, help="first N descriptors (x 400 names x 3 templates)")
    ap.add_argument("--sentence-subset", type=int, default=1500, help="texts run one sample per sentence")
    ap.add_argument("--default-texts", type=int, default=1200, help="texts for the bundled default model")
    ap.add_argument("--batch-size", type=int, default=None, help="our texts per forward (default: auto token budget)")
    ap.add_argument("--lm-eval-texts", type=int, default=3000, help="texts for lm-eval HFLM (0 = all)")
    ap.add_argument("--skip-default", action="store_true", help="tiny model only")
    ap.add_argument("--e2e", action="store_true", help="also the inspect eval + stereoprobe globalbias commands")
    ap.add_argument("--e2e-first", action="store_true", help="run the command-line target first")
    ap.add_argument("--e2e-only", action="store_true", help="only the command-line target (with --compare)")
    ap.add_argument("--compare", action="append", default=None, metavar="PYTHONPATH",
                    help="also run the command-line target with this PYTHONPATH (another stereoprobe copy, in a "
                         "folder whose path contains site-packages), before and after ours, and print the ratio; "
                         "repeatable (e.g. several earlier commits, for a bisect)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    la = os.getloadavg()
    print(f"torch threads {torch.get_num_threads()}, cpus {os.cpu_count()}, load average {la[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        tiny = make_tiny_model(Path(tmp) / "tiny-llama")
        if args.e2e_only:
            paths = {f"compared{k + 1}": p for k, p in enumerate(args.compare or [])}
            times: dict[str, list[float]] = {label: [] for label in [*paths, "this"]}
            order = [*paths, "this"]
            order += order[::-1] if paths else []
            for label in order:  # interleaved (A B C C B A), so a change of load hits every copy alike
                times[label].append(e2e(tiny, args.source, args.descriptors, Path(tmp), paths.get(label), label))
            b = sum(times["this"]) / len(times["this"])
            for label, path in paths.items():
                a = sum(times[label]) / len(times[label])
                print(f"\nmean wall: {label} ({path}) {a:.1f} s, this checkout {b:.1f} s: {a / b:.2f}x faster")
            return
        if args.e2e_first:
            e2e(tiny, args.source, args.descriptors, Path(tmp))
        bench_model("tiny random Llama (2 layers, width 64)", str(tiny), args.source, args.descriptors, None,
                    args.sentence_subset, args.batch_size, args.lm_eval_texts)
        if not args.skip_default:
            from stereoprobe.providers.default_model import default_model_dir

            bench_model("bundled default model", str(default_model_dir()), args.source, args.descriptors,
                        args.default_texts, min(args.sentence_subset, args.default_texts), args.batch_size,
                        args.lm_eval_texts)
        if args.e2e and not args.e2e_first:
            e2e(tiny, args.source, args.descriptors, Path(tmp))
    la = os.getloadavg()
    print(f"load average at the end: {la[0]:.1f}")


if __name__ == "__main__":
    main()
