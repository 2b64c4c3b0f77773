"""Where the time of a likelihood task through ``inspect eval`` goes, stage by stage, beside the provider direct.

One process, one command: the GlobalBias task (``--unit group``, the task's default, or ``sentence``) on the
bundled default model (or ``--model``), on CPU. It prints the seconds of each stage of the task path

- process start (interpreter, before this script's first line) and the imports (torch, transformers,
  inspect_ai, the task's module);
- the task build (counted: a task built twice shows 2), the model load (counted: the provider's
  ``from_pretrained`` calls; a second load shows 2), the capability probe (counted; in-process providers
  are never probed);
- ``inspect eval`` itself, split with inspect's own log timings (``stats.started_at``/``completed_at``, the
  samples' ``total_time``) and wall marks into: eval start-up (before the first sample), the provider's scoring
  (seconds its worker spends in ``score_ids``), inspect's per-sample, scoring and log work beside it, and the
  finish (metrics, log write) after the last sample;

then the same requests scored by the provider called directly (``TransformersAPI.score_texts``, one call per
grouped sample, or all texts at once with ``--unit sentence``) and, unless ``--lm-eval-batch-sizes ''``,
lm-eval HFLM ``loglikelihood_rolling`` (same weights). ``--profile N`` adds the N heaviest functions of the
eval's main thread (cProfile; the model runs on the provider's worker thread).

Regression guard: the ratio task/direct (wall of the ``inspect eval`` call over the direct scoring's wall, both
on the same texts in this process) is printed; the exit status is 1 when it is above ``--max-ratio``.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/task_path.py                       # bundled set, grouped
    HF_HUB_OFFLINE=1 .venv/bin/python bench/task_path.py --unit sentence --max-ratio 3
"""

from __future__ import annotations

import time

T_TOP = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402

from stage_clock import Counter, process_age  # noqa: E402  (bench/, the script's folder)


AGE_AT_TOP = process_age()


class Sampler:
    """A low-overhead stack sampler (py-spy's idea in-process): every ``interval`` seconds it records the main
    thread's and the provider worker's stacks; :meth:`report` prints, per thread, the share of samples in which
    each function was on the stack (cumulative) and the share spent waiting (innermost frame a wait/select)."""

    def __init__(self, interval: float = 0.005) -> None:
        import threading

        self.interval, self.stop_flag = interval, False
        self.counts: dict[str, dict[str, int]] = {"main": {}, "worker": {}}
        self.totals = {"main": 0, "worker": 0}
        self.main_id = threading.get_ident()
        self.thread = threading.Thread(target=self._run, name="bench-sampler", daemon=True)

    def _run(self) -> None:
        import sys
        import threading

        while not self.stop_flag:
            time.sleep(self.interval)
            names = {t.ident: t.name for t in threading.enumerate()}
            for tid, frame in sys._current_frames().items():
                who = "main" if tid == self.main_id else (
                    "worker" if names.get(tid) == "stereoprobe-transformers" else None)
                if who is None:
                    continue
                self.totals[who] += 1
                seen: set[str] = set()
                f, first = frame, True
                while f is not None:
                    co = f.f_code
                    key = f"{co.co_filename.rsplit('site-packages/', 1)[-1].rsplit('/perf44/', 1)[-1]}:{co.co_name}"
                    if first:
                        seen.add("<innermost> " + key)
                        first = False
                    seen.add(key)
                    f = f.f_back
                for k in seen:
                    self.counts[who][k] = self.counts[who].get(k, 0) + 1

    def start(self) -> None:
        self.thread.start()

    def report(self, top: int) -> None:
        self.stop_flag = True
        self.thread.join()
        for who in ("main", "worker"):
            n = max(1, self.totals[who])
            print(f"\n{who} thread: {self.totals[who]} stack samples; functions on the stack (share of samples):")
            rows = sorted(self.counts[who].items(), key=lambda x: -x[1])[:top]
            for k, c in rows:
                print(f"  {100 * c / n:5.1f} %  {k}")


def eval_split(log: object, t_call: float, t_return: float, wall0: float) -> dict[str, float]:
    """inspect's own timings of one eval: start-up before the first sample, the samples' span, the finish."""
    from datetime import datetime

    def ts(x: object) -> float:
        return datetime.fromisoformat(str(x)).timestamp()

    started, completed = ts(log.stats.started_at), ts(log.stats.completed_at)  # type: ignore[attr-defined]
    call_epoch = wall0 + (t_call - T_TOP)
    return_epoch = wall0 + (t_return - T_TOP)
    samples = log.samples or []  # type: ignore[attr-defined]
    return {"before eval started (task/model resolve)": started - call_epoch,
            "eval started to completed (samples, metrics)": completed - started,
            "after completed (log finish, return)": return_epoch - completed,
            "sum of sample total_time": sum(s.total_time or 0.0 for s in samples),
            "samples": float(len(samples))}


def run(args: argparse.Namespace) -> int:
    wall0 = time.time() - (time.perf_counter() - T_TOP)
    stages: list[tuple[str, float, str]] = [("process start (interpreter, before the script)", AGE_AT_TOP, "")]
    t = time.perf_counter()
    import torch
    import transformers  # noqa: F401
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    import stereoprobe.providers.loading as loading
    import stereoprobe.solvers.capability as capability
    from stereoprobe.tasks.globalbias import globalbias

    stages.append(("imports (torch, transformers, inspect_ai, task)", time.perf_counter() - t, ""))
    loads = Counter(loading, "_from_pretrained")
    from stereoprobe.providers.transformers_api import TransformersAPI

    providers = Counter(TransformersAPI, "__init__")  # provider objects built (inspect's model-info lookup built a 2nd)
    probes = Counter(capability, "_probe", is_async=True)

    t = time.perf_counter()
    kw = {"source": args.source, "unit": args.unit}
    if args.templates:
        kw["templates"] = [int(x) for x in args.templates.split(",")]
    task = globalbias(**kw)
    stages.append(("task build", time.perf_counter() - t, "1 build"))

    t = time.perf_counter()
    model = get_model(args.model, score_first_token=True, device="cpu", memoize=False,
                      **({"batch_size": args.batch_size} if args.batch_size else {}))
    api = model.api
    stages.append(("model load", time.perf_counter() - t, f"{loads.calls} from_pretrained"))
    if args.unit == "group":
        chunks = [[it["text"] for it in s.metadata["texts"]] for s in task.dataset]
    else:
        chunks = [[str(s.input) for s in task.dataset]]
    n = sum(len(c) for c in chunks)
    api.score_texts(chunks[0][:32])  # warm-up (first forward), outside both timed paths
    scoring = Counter(api, "score_ids")

    import tempfile

    la = os.getloadavg()
    print(f"{n} GlobalBias texts in {len(task.dataset)} samples (unit={args.unit}, source={args.source}), model "
          f"{args.model}, torch threads {torch.get_num_threads()}, load average {la[0]:.1f} {la[1]:.1f} {la[2]:.1f}",
          flush=True)
    prof = None
    sampler = Sampler() if args.sample else None
    if sampler:
        sampler.start()
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
    with tempfile.TemporaryDirectory() as log_dir:
        cpu0, main0 = time.process_time(), time.thread_time()
        t_call = time.perf_counter()
        if prof:
            prof.enable()
        [log] = inspect_eval(task, model=model, log_dir=log_dir, display="none", max_connections=512,
                             max_samples=512)
        if prof:
            prof.disable()
        t_return = time.perf_counter()
        cpu_task, cpu_main = time.process_time() - cpu0, time.thread_time() - main0
        if sampler:
            sampler.report(args.sample)
        print(f"inspect eval call {t_return - t_call:.2f} s wall, {cpu_task:.2f} s CPU (main thread {cpu_main:.2f}); "
              f"worker score_ids {scoring.seconds:.2f} s in {scoring.calls} calls", flush=True)
        if log.status != "success":
            print(f"inspect eval failed: {log.error}")
            return 2
        split = eval_split(log, t_call, t_return, wall0)  # the log's samples load lazily from the folder
    task_wall = t_return - t_call
    stages.append(("capability probe", probes.seconds, f"{probes.calls} probes"))
    stages.append(("inspect eval call (whole)", task_wall, f"{int(split['samples'])} samples"))
    stages.append(("  before eval started (task/model resolve)", split["before eval started (task/model resolve)"], ""))
    stages.append(("  eval started to completed", split["eval started to completed (samples, metrics)"], ""))
    stages.append(("    provider scoring (worker's score_ids)", scoring.seconds, f"{scoring.calls} requests"))
    stages.append(("    inspect per-sample/scoring/log beside it",
                   split["eval started to completed (samples, metrics)"] - scoring.seconds, "the rest"))
    stages.append(("  after completed (log finish, return)", split["after completed (log finish, return)"], ""))
    stages.append(("model loads during the eval", 0.0, f"{loads.calls} from_pretrained in all"))
    stages.append(("provider objects built", providers.seconds, f"{providers.calls} in all (1 before the eval)"))

    t, cpu0 = time.perf_counter(), time.process_time()
    for c in chunks:
        api.score_texts(c, group=args.unit == "group")
    direct = time.perf_counter() - t
    cpu_direct = time.process_time() - cpu0
    stages.append(("provider direct (score_texts, same requests)", direct, ""))
    stages.append(("CPU seconds (all threads): inspect eval call", cpu_task, f"main thread {cpu_main:.2f}"))
    stages.append(("CPU seconds (all threads): provider direct", cpu_direct, ""))

    rates = {"task (inspect eval)": n / task_wall, "provider direct": n / direct}
    lm_rates = lm_eval_rates(api, [x for c in chunks for x in c], args.lm_eval_batch_sizes)
    print(f"\n{'stage':<52} {'seconds':>8}  note")
    for name, sec, note in stages:
        print(f"{name:<52} {sec:8.2f}  {note}")
    if prof:
        print_profile(prof, args.profile)
    ratio = task_wall / direct
    print(f"\nCPU seconds task/direct = {cpu_task / cpu_direct:.2f} (all threads, OpenMP's spin-waiting included: not a measure of work); "
          f"inspect's main thread {cpu_main:.2f} s CPU during the eval")
    print(f"\ntexts/s: task {rates['task (inspect eval)']:.1f}, provider direct {rates['provider direct']:.1f}"
          + "".join(f", lm-eval batch {b} {r:.1f}" for b, r in lm_rates.items()))
    if lm_rates:
        best_b, best = max(lm_rates.items(), key=lambda x: x[1])
        print(f"vs lm-eval's best (batch {best_b}): task {rates['task (inspect eval)'] / best:.2f}x, "
              f"provider direct {rates['provider direct'] / best:.2f}x")
    la = os.getloadavg()
    verdict = "ok" if ratio <= args.max_ratio else "TOO SLOW"
    print(f"task/direct = {ratio:.2f} (guard: at most {args.max_ratio}): {verdict}; load average at the end "
          f"{la[0]:.1f} {la[1]:.1f} {la[2]:.1f}")
    return 0 if ratio <= args.max_ratio else 1


def lm_eval_rates(api: object, texts: list[str], sizes: str) -> dict[int, float]:
    if not sizes.strip():
        return {}
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    out = {}
    for bs in [int(b) for b in sizes.split(",")]:
        lm = HFLM(pretrained=api.model, tokenizer=api.tokenizer, batch_size=bs, device="cpu")  # type: ignore[attr-defined]
        reqs = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(t,), idx=i)
                for i, t in enumerate(texts)]
        t0 = time.perf_counter()
        lm.loglikelihood_rolling(reqs, disable_tqdm=True)
        out[bs] = len(texts) / (time.perf_counter() - t0)
    return out


def print_profile(prof: object, top: int) -> None:
    """The eval's main thread: seconds per area (own time) and the heaviest functions (cumulative)."""
    import pstats

    st = pstats.Stats(prof)  # type: ignore[arg-type]
    areas: dict[str, float] = {}
    for (file, _line, fn), (_cc, _nc, tt, _ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        key = "other"
        for mark in ("inspect_ai/log", "inspect_ai/_eval", "inspect_ai/scorer", "inspect_ai/event",
                     "inspect_ai/model", "inspect_ai/_util", "inspect_ai", "pydantic", "stereoprobe", "asyncio",
                     "anyio", "select", "json", "copy"):
            if mark in file or mark in fn:
                key = mark
                break
        areas[key] = areas.get(key, 0.0) + tt
    print("\nmain thread during the eval, own seconds by area (cProfile): " + ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(areas.items(), key=lambda x: -x[1])))
    st.sort_stats("cumulative").print_stats(top)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="bundled")
    ap.add_argument("--unit", default="group", choices=["group", "sentence"])
    ap.add_argument("--templates", default=None, help="comma-separated template numbers")
    ap.add_argument("--model", default="transformers/default")
    ap.add_argument("--batch-size", type=int, default=64, help="provider forward batch size (0: auto)")
    ap.add_argument("--lm-eval-batch-sizes", default="64")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile the eval, print the top N")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="sample the main and worker threads' stacks during the eval, print the top N functions")
    ap.add_argument("--max-ratio", type=float, default=1.3,
                    help="exit 1 when the inspect eval call takes more than this multiple of the direct scoring")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
