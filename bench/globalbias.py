"""GlobalBias sentences per second: the stereoprobe globalbias task (transformers provider) vs lm-eval.

Same sentences (the GlobalBias sentence set of the chosen source/selection), same loaded weights of the
bundled default model (SmolLM2-135M-Instruct, CPU), same convention (BOS prepended, every token scored: our
``score_first_token=true`` and lm-eval's ``loglikelihood_rolling``). Prints sentences/s for

- the ``globalbias`` inspect task end to end (``inspect eval`` with the transformers provider), in the task's
  default layout (``--unit group``: one sample and one request per name group x template) or one sample per
  sentence (``--unit sentence``);
- the provider direct: the task's own requests, recorded during the eval and sent again to the same provider
  object all at once (``bench/replay.py``), so its worker thread merges and plans them as it did for the task,
  without inspect's sample, scoring and log work: task/direct is what inspect adds to the provider;
- with ``--main-thread-peer``, the earlier peer as well: ``TransformersAPI.score_texts`` called on the main
  thread, one call per grouped sample (another plan on another thread: shown, not guarded; see
  docs/performance.md, "Issue 44, fourth session", why the main thread scores several times slower on a
  shared machine);
- lm-eval HFLM ``loglikelihood_rolling`` at each batch size of ``--lm-eval-batch-sizes`` (best = reference),
  on the main thread as lm-eval's command line runs it, or with ``--lm-eval-thread`` on a thread of its own
  as the task's provider scores (on a shared machine the main thread's OpenMP team spin-waits: see above);

the ratios to lm-eval's best, the ratio task/direct (wall seconds) and the largest per-token disagreement of
the sentence totals. Regression guard: the exit status is 1 when task/direct is above ``--max-ratio`` (a ratio
of two runs in this process, never an absolute time; ``tests/test_bench_globalbias_guard.py`` checks that it trips on a
slower task path). Stage by stage: ``bench/task_path.py``. The generic
sentence-scoring comparison (prefix sharing on/off, synthetic sentences) is ``bench/perplexity.py``.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/globalbias.py                    # bundled set, 1,152 sentences
    HF_HUB_OFFLINE=1 .venv/bin/python bench/globalbias.py --templates 1 --groups CHINESE,ARAB
    HF_HUB_OFFLINE=1 .venv/bin/python bench/globalbias.py --source /path/to/GlobalBias --limit 5000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> int:
    return run(parser().parse_args())


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="bundled")
    ap.add_argument("--groups", default=None, help="comma-separated groups or ethnicities")
    ap.add_argument("--templates", default=None, help="comma-separated template numbers")
    ap.add_argument("--limit", type=int, default=None, help="first N sentences only")
    ap.add_argument("--batch-size", type=int, default=64, help="provider forward batch size")
    ap.add_argument("--lm-eval-batch-sizes", default="32,64", help="'' for none")
    ap.add_argument("--unit", default="group", choices=["group", "sentence"], help="the task's sample layout")
    ap.add_argument("--max-ratio", type=float, default=1.3,
                    help="exit 1 when the task's wall time is above this multiple of the provider direct")
    ap.add_argument("--main-thread-peer", action="store_true",
                    help="also time score_texts per sample on the main thread (not guarded)")
    ap.add_argument("--lm-eval-thread", action="store_true",
                    help="run lm-eval on a thread of its own, as the task's provider scores (default: the main "
                         "thread, as lm-eval's command line runs)")
    return ap


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import sys

    import torch
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from stereoprobe.tasks.globalbias import globalbias

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from replay import Recorder

    task = globalbias(source=args.source, unit=args.unit, groups=args.groups.split(",") if args.groups else None,
                      templates=[int(t) for t in args.templates.split(",")] if args.templates else None)
    if args.limit:
        task.dataset = task.dataset[: args.limit]  # --unit group: the first N samples
    if args.unit == "group":
        chunks = [[it["text"] for it in s.metadata["texts"]] for s in task.dataset]
        texts = [t for c in chunks for t in c]
    else:
        texts = [s.input for s in task.dataset]
        chunks = [texts]
    model = get_model("transformers/default", score_first_token=True, batch_size=args.batch_size, device="cpu")
    api = model.api
    la = os.getloadavg()
    print(f"{len(texts)} GlobalBias sentences ({args.source}), e.g. {texts[:2]}; torch threads "
          f"{torch.get_num_threads()}, load average {la[0]:.1f} {la[1]:.1f} {la[2]:.1f}")
    api.score_texts(texts[:32])  # warm-up

    rows: list[tuple[str, float]] = []
    secs: dict[str, float] = {}

    def timed(label, fn):
        t0 = time.perf_counter()
        out = fn()
        sec = time.perf_counter() - t0
        rows.append((label, len(texts) / sec))
        secs[label] = sec
        print(f"  {label:<46} {sec:7.1f} s  {len(texts) / sec:7.1f} sentences/s", flush=True)
        return out

    rec = Recorder(api)
    with tempfile.TemporaryDirectory() as log_dir:
        [log] = timed(TASK, lambda: inspect_eval(task, model=model, log_dir=log_dir, display="none",
                                                 max_connections=512, max_samples=512))
        assert log.status == "success", log.error
        task_totals = task_sums(log, task, args.unit)
    rec.stop()
    timed(DIRECT, rec.replay)
    direct = direct_sums(rec)
    if args.main_thread_peer:
        grouped = args.unit == "group"
        timed(MAIN_THREAD, lambda: [r for c in chunks for r in api.score_texts(c, group=grouped)])

    ref = {}
    for bs in [int(b) for b in args.lm_eval_batch_sizes.split(",") if b.strip()]:
        lm = HFLM(pretrained=api.model, tokenizer=api.tokenizer, batch_size=bs, device="cpu")
        reqs = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(t,), idx=i) for i, t in enumerate(texts)]
        where = ", own thread" if args.lm_eval_thread else ""
        ref[bs] = timed(f"lm-eval HFLM loglikelihood_rolling, batch {bs}{where}",
                        lambda: on_thread(lambda: lm.loglikelihood_rolling(reqs, disable_tqdm=True),
                                          args.lm_eval_thread))

    print_agreement(rows, texts, task_totals, direct, ref)
    la = os.getloadavg()
    ratio = secs[TASK] / secs[DIRECT]
    ok = ratio <= args.max_ratio
    print(f"task/direct = {ratio:.2f} wall (guard: at most {args.max_ratio}): {'ok' if ok else 'TOO SLOW'}")
    print(f"load average at the end: {la[0]:.1f} {la[1]:.1f} {la[2]:.1f}")
    return 0 if ok else 1


TASK = "stereoprobe globalbias task (inspect eval)"
DIRECT = "provider direct (the task's requests replayed)"
MAIN_THREAD = "score_texts per sample, main thread (unguarded)"


def print_agreement(rows: list[tuple[str, float]], texts: list[str], task_totals: dict[str, float],
                    direct: dict[str, tuple[float, int]], ref: dict[int, list[float]]) -> None:
    """The rates against lm-eval's best and the largest disagreements (task vs direct, both vs lm-eval)."""
    gap = max(abs(task_totals[t] - direct[t][0]) for t in texts)
    print(f"\nmax |task - direct| sentence total: {gap:.2e} nats (the same requests, the same provider)")
    if ref:
        best_label, best = max(((lbl, r) for lbl, r in rows if lbl.startswith("lm-eval")), key=lambda x: x[1])
        print(f"reference: {best_label} = {best:.1f} sentences/s")
        for label, rate in rows:
            if not label.startswith("lm-eval"):
                print(f"  {label:<46} {rate / best:5.2f}x lm-eval")
        lm_tot = ref[max(ref)]
        gap_task = max(abs(task_totals[t] - r) / direct[t][1] for t, r in zip(texts, lm_tot))
        gap_direct = max(abs(direct[t][0] - r) / direct[t][1] for t, r in zip(texts, lm_tot))
        print(f"max |task - lm-eval| per token: {gap_task:.2e} nats; max |direct - lm-eval| per token: "
              f"{gap_direct:.2e}")


def on_thread(fn, thread: bool):
    """``fn()``, on a new thread when ``thread`` (its own OpenMP team, as the provider's worker has)."""
    if not thread:
        return fn()
    import threading

    box: list = []
    worker = threading.Thread(target=lambda: box.append(fn()), name="bench-lm-eval")
    worker.start()
    worker.join()
    if not box:
        raise RuntimeError("lm-eval failed on its thread (traceback above)")
    return box[0]


def direct_sums(rec) -> dict[str, tuple[float, int]]:
    """Sentence text -> (total log-probability, scored tokens), from the replay's answers (grouped requests:
    the provider's per-item results, in the items' order; single texts: the prompt log-probabilities)."""
    from stereoprobe.likelihood import N_TOKENS, RESULTS_KEY, SUM_LOGPROB, TEXTS_KEY

    out: dict[str, tuple[float, int]] = {}
    for (msgs, _), answer in zip(rec.requests, rec.outputs):
        items = (msgs[-1].metadata or {}).get(TEXTS_KEY)
        if items is None:
            lps = [lp.logprob for lp in answer.choices[0].prompt_logprobs.content]
            out[msgs[-1].text] = (float(sum(lps)), len(lps))
            continue
        res = answer.metadata[RESULTS_KEY]
        for it, total, n in zip(items, res[SUM_LOGPROB], res[N_TOKENS]):
            out[it["text"]] = (total, n)
    return out


def task_sums(log, task, unit: str) -> dict[str, float]:
    """Sentence text -> total log-probability, from the eval log (either layout; texts by id from the task)."""
    if unit == "sentence":
        return {s.input: s.scores["sentence_logprob"].value["sum_logprob"] for s in log.samples}
    from stereoprobe.likelihood import SCORER, read_results

    text_of = {it["id"]: it["text"] for s in task.dataset for it in s.metadata["texts"]}
    return {text_of[r.id]: r.sum_logprob for s in log.samples for r in read_results(s.scores[SCORER])}


if __name__ == "__main__":
    raise SystemExit(main())
