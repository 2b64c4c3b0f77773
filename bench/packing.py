"""Row packing on and off (stereoprobe.providers.packing): the scorer's CPU seconds on the GlobalBias sentences.

The GlobalBias task's texts (bundled set by default: 1,152 sentences in 24 grouped requests) scored by the default
model's scorer in one merged plan, as the provider's worker scores the task's requests (each grouped request its
own planning group, batch 64), alternately with the per-position modules packed (the default on CPU) and on the
padded batch. Prints, per round, the process's CPU seconds (the scorer scores on a helper thread, never the main
thread: stereoprobe.providers.main_thread) and the wall, then the ratio unpacked/packed of the CPU seconds (with
one torch thread, the scoring's own time: far less sensitive to the other processes of a shared machine than the
wall), the padded and real positions through the body, and whether every log-probability is the same bit for bit
(exit 1 if not).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/packing.py --threads 1 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="bundled")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1: CPU seconds are work)")
    ap.add_argument("--rounds", type=int, default=2, help="packed/unpacked pairs, alternating")
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch
    from inspect_ai.model import GenerateConfig, get_model

    from stereoprobe.providers.text_batches import prepare_items
    from stereoprobe.tasks.globalbias import globalbias

    torch.set_num_threads(args.threads)
    task = globalbias(source=args.source)
    api = get_model("transformers/default", score_first_token=True, batch_size=args.batch_size, device="cpu").api
    seqs: list[list[int]] = []
    groups: list[int] = []
    for n, sample in enumerate(task.dataset):
        payloads, _, _, _ = prepare_items(api, sample.metadata["texts"], GenerateConfig(prompt_logprobs=1))
        seqs += [list(p["ids"]) for p in payloads]
        groups += [n] * len(payloads)
    scorer, policy = api.scorer, api.policy
    assert scorer is not None and scorer.packing is not None, "no row packing on this model/device"
    print(f"{len(seqs)} sentences in {len(task.dataset)} requests; packing {scorer.packing.status} "
          f"({len(scorer.packing.modules)} modules); torch threads {torch.get_num_threads()}; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    print_positions(seqs, groups, policy)
    scorer.score(seqs[:64], policy, True, 0, groups[:64])  # warm-up
    cpu: dict[bool, list[float]] = {True: [], False: []}
    results = {}
    for r in range(args.rounds):
        for on in ((True, False) if r % 2 == 0 else (False, True)):
            scorer.packing.on = on
            t, c = time.perf_counter(), time.process_time()
            results[on] = scorer.score(seqs, policy, True, 0, groups)
            cpu[on].append(time.process_time() - c)
            print(f"  round {r + 1} packing {'on ' if on else 'off'}: {cpu[on][-1]:6.1f} CPU s, "
                  f"{time.perf_counter() - t:6.1f} s wall", flush=True)
    scorer.packing.on = True
    same = all(a.logprobs == b.logprobs for a, b in zip(results[True], results[False]))
    ratio = sum(cpu[False]) / sum(cpu[True])
    print(f"\nCPU seconds unpacked/packed = {ratio:.2f}; log-probabilities identical bit for bit: {same}; "
          f"load average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if same else 1


def print_positions(seqs: list[list[int]], groups: list[int], policy: object) -> None:
    """Positions through the body: padded (what runs unpacked) and real (what the packed modules run)."""
    padded = real = 0
    for c in policy.plan(seqs, True, groups):  # type: ignore[attr-defined]
        prefixes = {tuple(seqs[i][:p]) for i, p in zip(c.indices, c.prefix_lens) if p}
        padded += len(prefixes) * c.prefix_width + len(c.indices) * c.width
        real += sum(len(t) for t in prefixes) + sum(len(seqs[i]) - p for i, p in zip(c.indices, c.prefix_lens))
    print(f"positions through the body: {padded} padded, {real} real ({100 * (1 - real / padded):.0f} % padding)")


if __name__ == "__main__":
    raise SystemExit(main())
