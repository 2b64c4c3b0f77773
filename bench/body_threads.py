"""One intra-op thread for a small body's forwards (stereoprobe.providers.body_threads) on and off, alternating.

The GlobalBias task's sentences (``--source`` a local copy of the upstream repository, ``--descriptors`` of them)
scored by the harness's tiny random Llama (2 layers, width 64, the default model's tokenizer; as
``bench/globalbias_harness.py`` builds it) in one merged plan, as the provider's worker scores the task's requests
(each grouped request its own planning group), with torch's thread count (``--threads``, default 2: the 2-core
machine's), alternately with the rule on (the default) and off. Prints per run the wall, the process's CPU seconds,
the output projection's wall (``project_scores``, the same on both sides) and the rest (the body's forwards, the
planning, the tensors), then the ratios off/on, and whether every log-probability is the same bit for bit (exit 1
if not). Wall time moves with the machine's load: read the ratios of runs made side by side, and the load printed.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/body_threads.py --source /path/to/GlobalBias --descriptors 2 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True, help="a local copy of the upstream GlobalBias repository")
    ap.add_argument("--descriptors", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--rounds", type=int, default=2, help="on/off pairs, alternating")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch
    from inspect_ai.model import GenerateConfig, get_model

    sys.path.insert(0, str(Path(__file__).parent))
    from globalbias_harness import make_tiny_model

    from stereoprobe.providers.text_batches import prepare_items
    from stereoprobe.tasks.globalbias import globalbias

    torch.set_num_threads(args.threads)
    tmp = tempfile.TemporaryDirectory()
    tiny = make_tiny_model(Path(tmp.name) / "tiny-llama")
    task = globalbias(source=args.source, descriptors=list(range(args.descriptors)))
    api = get_model(f"transformers/{tiny}", device="cpu").api
    seqs: list[list[int]] = []
    groups: list[int] = []
    for n, sample in enumerate(task.dataset):
        payloads, _, _, _ = prepare_items(api, sample.metadata["texts"], GenerateConfig(prompt_logprobs=1))
        seqs += [list(p["ids"]) for p in payloads]
        groups += [n] * len(payloads)
    scorer, policy = api.scorer, api.policy
    assert scorer is not None and scorer.body_threads is not None, "the rule is not attached on this model"
    print(f"{len(seqs)} sentences in {len(task.dataset)} requests; rule {scorer.body_threads.status}; torch threads "
          f"{torch.get_num_threads()}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    projection = [0.0]
    inner = scorer.project_scores

    def timed(*a, **k):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            projection[0] += time.perf_counter() - t0

    scorer.project_scores = timed  # type: ignore[method-assign]
    scorer.score(seqs[:64], policy, True, 0, groups[:64])  # warm-up
    walls: dict[bool, list[float]] = {True: [], False: []}
    cpus: dict[bool, list[float]] = {True: [], False: []}
    rests: dict[bool, list[float]] = {True: [], False: []}
    results = {}
    for r in range(args.rounds):
        for on in ((True, False) if r % 2 == 0 else (False, True)):
            scorer.body_threads.on = on
            projection[0] = 0.0
            t, c = time.perf_counter(), time.process_time()
            results[on] = scorer.score(seqs, policy, True, 0, groups)
            walls[on].append(time.perf_counter() - t)
            cpus[on].append(time.process_time() - c)
            rests[on].append(walls[on][-1] - projection[0])
            print(f"  round {r + 1} rule {'on ' if on else 'off'}: wall {walls[on][-1]:6.1f} s, CPU {cpus[on][-1]:6.1f} s,"
                  f" projection {projection[0]:6.1f} s, rest {rests[on][-1]:6.1f} s; load "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
    scorer.body_threads.on = True
    same = all(a.logprobs == b.logprobs for a, b in zip(results[True], results[False]))
    print(f"sum: wall {sum(walls[True]):.1f} s on, {sum(walls[False]):.1f} s off ({sum(walls[False]) / sum(walls[True]):.2f}x); "
          f"CPU {sum(cpus[True]):.1f} s on, {sum(cpus[False]):.1f} s off ({sum(cpus[False]) / sum(cpus[True]):.2f}x); "
          f"outside the projection {sum(rests[True]):.1f} s on, {sum(rests[False]):.1f} s off")
    print(f"log-probabilities identical bit for bit: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
