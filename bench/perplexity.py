"""Throughput of sentence log-likelihood scoring: stereoprobe's transformers provider vs lm-eval HFLM.

Sentences of the GlobalBias shape, "<Name> is <descriptor>.", on the bundled default model
(SmolLM2-135M-Instruct, float32, CPU). All runs share one loaded copy of the weights and score the same
sentences with the same BOS convention (BOS prepended, every word scored: lm-eval's
``loglikelihood_rolling`` and our ``-M score_first_token=true``). Prints sentences/s for

- our provider called directly (``TransformersAPI.score_texts``), with and without prefix sharing;
- our provider through ``inspect eval`` (a Task with ``generate()`` + ``perplexity()``, prompt_logprobs=1);
- lm-eval HFLM ``loglikelihood_rolling`` at batch sizes 16, 32 and 64 (its best is the reference);

the ratios to lm-eval's best, and the largest per-token disagreement between the two.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/perplexity.py            # 2,000 sentences
    HF_HUB_OFFLINE=1 .venv/bin/python bench/perplexity.py --n 300    # quick run
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

# Small word lists for the benchmark only (the probes' own names and descriptors live in datasets/).
NAMES = ["Alice", "Mohammed", "Wei Chen", "Olga", "Aarav", "Chidi", "Sofia", "Hiroshi", "Fatima", "Diego",
         "Ngozi", "Ivan", "Mei", "Kwame", "Lucia", "Arjun", "Amara", "Jonas", "Yusuf", "Ingrid",
         "Thabo", "Camila", "Dmitri", "Priya", "Kofi", "Elena", "Tariq", "Hannah", "Juan Carlos", "Aiko",
         "Oluwaseun", "Pierre", "Zainab", "Mateo", "Anjali", "Sven", "Nadia", "Kenji", "Abebe", "Rosa"]
QUALIFIERS = ["", "very ", "not ", "quite ", "rarely "]
TRAITS = ["kind", "lazy", "a nurse", "good at maths", "a loud neighbour", "religious", "rich",
          "afraid of dogs", "a talented engineer", "hard-working"]


def sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` sentences "<Name> is <descriptor>.", names × descriptors in a shuffled order."""
    pool = [f"{name} is {q}{t}." for name in NAMES for q in QUALIFIERS for t in TRAITS]
    while len(pool) < n:  # more than 2,000: repeat with a second sentence frame
        pool += [s.replace(" is ", " was ", 1) for s in pool[: n - len(pool)]]
    rng = random.Random(seed)
    chosen = rng.sample(pool, n)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="number of sentences (default 2000)")
    parser.add_argument("--batch-size", type=int, default=64, help="our forward batch size (default 64)")
    parser.add_argument("--lm-eval-batch-sizes", default="16,32,64")
    parser.add_argument("--skip-inspect", action="store_true")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    args = parser.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig, get_model
    from inspect_ai.scorer import perplexity
    from inspect_ai.solver import generate
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    if args.threads:
        torch.set_num_threads(args.threads)
    texts = sentences(args.n)
    model = get_model("transformers/default", score_first_token=True, batch_size=args.batch_size, device="cpu")
    api = model.api
    load = os.getloadavg()
    print(f"{len(texts)} sentences, e.g. {texts[:3]}; torch threads {torch.get_num_threads()}, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    api.score_texts(texts[:32])  # warm-up

    rows: list[tuple[str, float, float]] = []

    def timed(label: str, fn):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
        rows.append((label, len(texts) / seconds, len(texts) / cpu_seconds))
        print(f"  {label:<50} {seconds:7.1f} s wall {len(texts) / seconds:7.1f} sent/s | "
              f"{cpu_seconds:7.1f} s CPU {len(texts) / cpu_seconds:7.1f} sent/CPU-s", flush=True)
        return result

    tok = api.tokenizer
    lm_eval_results = {}

    def lm_eval_run(bs: int) -> None:
        lm = HFLM(pretrained=api.model, tokenizer=tok, batch_size=bs, device="cpu")
        requests = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(t,), idx=i)
                    for i, t in enumerate(texts)]
        lm_eval_results[bs] = timed(f"lm-eval HFLM loglikelihood_rolling, batch {bs}",
                                    lambda: lm.loglikelihood_rolling(requests, disable_tqdm=True))

    def inspect_run() -> dict[int, float]:
        task = Task(dataset=[Sample(id=i, input=t) for i, t in enumerate(texts)], solver=generate(),
                    scorer=perplexity(), config=GenerateConfig(prompt_logprobs=1))
        with tempfile.TemporaryDirectory() as log_dir:
            [log] = timed("stereoprobe through inspect eval (prefix sharing)",
                          lambda: eval(task, model=model, log_dir=log_dir, display="none",
                                       max_connections=512, max_samples=512))
            assert log.status == "success", log.error
            return {int(s.id): s.scores["perplexity"].metadata["sum_log_probs"] for s in log.samples}

    # interleaved, so that a change of load on this shared machine hits every contender
    lm_eval_sizes = [int(b) for b in args.lm_eval_batch_sizes.split(",")]
    ours = timed("stereoprobe direct (prefix sharing)", lambda: api.score_texts(texts))
    lm_eval_run(lm_eval_sizes[0])
    api.prefix_sharing = False
    plain = timed("stereoprobe direct (no prefix sharing)", lambda: api.score_texts(texts))
    api.prefix_sharing = True
    for bs in lm_eval_sizes[1:-1]:
        lm_eval_run(bs)
    inspect_totals = None if args.skip_inspect else inspect_run()
    if len(lm_eval_sizes) > 1:
        lm_eval_run(lm_eval_sizes[-1])

    best_label, best, best_cpu = max((r for r in rows if r[0].startswith("lm-eval")), key=lambda r: r[1])
    print(f"\nreference: {best_label} = {best:.1f} sentences/s wall, {best_cpu:.1f} per CPU-second")
    for label, rate, cpu_rate in rows:
        if not label.startswith("lm-eval"):
            print(f"  {label:<50} {rate / best:5.2f}x lm-eval (wall)  {cpu_rate / best_cpu:5.2f}x (CPU time)")

    # numerics: per-sentence sums against lm-eval, per scored token; prefix sharing vs none
    ref = lm_eval_results[lm_eval_sizes[-1]]
    worst = max(abs(o.total - r) / len(o.logprobs) for o, r in zip(ours, ref))
    share = max(abs(a - b) for o, p in zip(ours, plain) for a, b in zip(o.logprobs, p.logprobs))
    print(f"\nmax |ours - lm-eval| per sentence-token: {worst:.2e} nats; prefix sharing vs none, per token: {share:.2e}")
    if inspect_totals is not None:
        gap = max(abs(inspect_totals[i] - o.total) / len(o.logprobs) for i, o in enumerate(ours))
        print(f"max |inspect eval - direct| per sentence-token: {gap:.2e} nats")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
