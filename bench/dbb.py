"""DBB throughput: sampled mode (the paper's protocol, 10 answers per question) vs logprob mode (exact P(A)
from the answer letter's next-token probabilities; 2 passes per question, one per option order), same
questions, same model, same process. Prints questions/s and test instances/s of each mode and the ratio.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/dbb.py                      # default model, CPU
    HF_HUB_OFFLINE=1 .venv/bin/python bench/dbb.py --model transformers/meta-llama/Llama-3.1-8B-Instruct \
        --templates 20                                                  # a GPU machine
    HF_HUB_OFFLINE=1 .venv/bin/python bench/dbb.py --harness --templates 8 --categories age,gender,race,ses,religion
    HF_HUB_OFFLINE=1 .venv/bin/python bench/dbb.py --direct --templates 4     # task/direct of logprob and DBB-SG

The paper needed ~18 h per 7B model for 77,350 questions x >= 10 samples on an A100 (paper §5 and
Appendix A); the script extrapolates logprob mode's time for the full 77,350 questions on the machine it runs
on. ``--harness`` compares one inspect sample per question with one per template (``-T unit``) for the
logprob MCQ and DBB-SG, printing texts/s of each and the ratio.
"""

from __future__ import annotations

import argparse
import time

FULL_QUESTIONS = 77_350
FULL_INSTANCES = 103_649


def run(model: str, mode: str, templates: int, categories: str, max_tokens: int
        ) -> tuple[float, int, int, float]:
    """Seconds, questions, test instances (pairs of groups, whether or not S is defined), refusal rate."""
    from inspect_ai import eval as inspect_eval

    from stereoprobe.dbb.data import bundled_templates, expand, pair_instances
    from stereoprobe.tasks.dbb import dbb

    kw = {"source": "bundled", "faithful": False, "mode": mode, "limit_templates": templates,
          "categories": categories}
    if mode == "sampled":
        kw.update(epochs=10, max_tokens=max_tokens)
    task = dbb(**kw)
    n_q = len(task.dataset)
    t0 = time.perf_counter()
    [log] = inspect_eval(task, model=model, display="none", log_dir="/tmp/stereoprobe-bench-dbb",
                         log_realtime=False, log_samples=False)
    dt = time.perf_counter() - t0
    if log.status != "success":
        raise SystemExit(f"{mode} run failed: {log.error}")
    chosen = {tt.template_id for tt in bundled_templates()[:templates]}
    n_inst = len(pair_instances([q for q in expand(bundled_templates(), categories=categories.split(","))
                                 if q.template_id in chosen]))
    return dt, n_q, n_inst, float(log.results.scores[0].metrics["dbb_refusal_rate"].value)


def harness(model: str, templates: int, categories: str) -> None:
    """Wall time per scored text through inspect: one sample per question vs one per template (``-T unit``),
    for logprob-mode MCQ (questions x 2 orders) and DBB-SG (questions x variations x 2 options)."""
    from inspect_ai import eval as inspect_eval

    from stereoprobe.tasks.dbb import dbb, dbb_sg

    sel = {"source": "bundled", "faithful": False, "limit_templates": templates, "categories": categories}
    for name, make in (("dbb logprob", lambda u: dbb(**sel, mode="logprob", unit=u)),
                       ("dbb_sg", lambda u: dbb_sg(**sel, unit=u))):
        times = {}
        for unit in ("question", "template"):
            task = make(unit)
            texts = sum(int((s.metadata or {}).get("n_texts") or 0) for s in task.dataset) or None
            t0 = time.perf_counter()
            [log] = inspect_eval(task, model=model, display="none", log_dir="/tmp/stereoprobe-bench-dbb",
                                 log_realtime=False)
            times[unit] = time.perf_counter() - t0
            if log.status != "success":
                raise SystemExit(f"{name} unit={unit} failed: {log.error}")
            if texts:
                print(f"  {name:12s} unit={unit:8s}: {times[unit]:7.1f} s, {texts / times[unit]:8.1f} texts/s")
            else:
                print(f"  {name:12s} unit={unit:8s}: {times[unit]:7.1f} s")
        print(f"  {name:12s} ratio question/template wall time: {times['question'] / times['template']:.1f}x")


def direct(model_name: str, templates: int, categories: str, max_ratio: float) -> int:
    """Task/direct per likelihood task (logprob MCQ, DBB-SG; their default grouped layout): the ``inspect eval``
    wall over the same requests replayed straight to the same provider object (``bench/replay.py``, on the
    provider's worker thread as in the task), one line each, and the eval split by inspect's own
    ``started_at``/``completed_at``; exit 1 (the regression guard) when a ratio is above ``max_ratio``."""
    import os
    import sys
    from datetime import datetime

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from stereoprobe.tasks.dbb import dbb, dbb_sg

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from replay import Recorder

    model = get_model(model_name, device="cpu")
    sel = {"source": "bundled", "limit_templates": templates, "categories": categories}  # the tasks' defaults else
    worst = 0.0
    for name, make in (("dbb logprob", lambda: dbb(**sel, mode="logprob")), ("dbb_sg", lambda: dbb_sg(**sel))):
        for warm in (True, False):  # the first run of each warms the model and the chat template up
            task = make()
            rec = Recorder(model.api)
            t0, epoch0 = time.perf_counter(), time.time()
            [log] = inspect_eval(task, model=model, display="none", log_dir="/tmp/stereoprobe-bench-dbb",
                                 max_connections=512, max_samples=512)
            wall, epoch1 = time.perf_counter() - t0, time.time()
            rec.stop()
            if log.status != "success":
                raise SystemExit(f"{name} failed: {log.error}")
            if warm:
                continue
            replay = rec.replay()
            la = os.getloadavg()
            worst = max(worst, wall / replay)
            print(f"  {name:12s} {len(task.dataset)} samples, {len(rec.requests)} requests: task {wall:6.1f} s, "
                  f"provider direct {replay:6.1f} s, task/direct = {wall / replay:.2f} (load {la[0]:.1f})",
                  flush=True)
            started, completed = (datetime.fromisoformat(str(t)).timestamp()
                                  for t in (log.stats.started_at, log.stats.completed_at))
            print(f"  {'':12s} task = {started - epoch0:5.2f} s before inspect's started_at (task and model "
                  f"resolve) + {completed - started:6.2f} s samples and metrics + {epoch1 - completed:5.2f} s "
                  f"after completed_at (log finish)", flush=True)
    print(f"guard: task/direct at most {max_ratio}: {'ok' if worst <= max_ratio else 'TOO SLOW'}")
    return 0 if worst <= max_ratio else 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="transformers/default")
    ap.add_argument("--templates", type=int, default=1)
    ap.add_argument("--categories", default="gender,ses")
    ap.add_argument("--max-tokens", type=int, default=256, help="sampled-mode answer length (task default)")
    ap.add_argument("--harness", action="store_true",
                    help="compare one sample per question with one per template (logprob MCQ and DBB-SG)")
    ap.add_argument("--direct", action="store_true",
                    help="task/direct ratio of logprob MCQ and DBB-SG (the same requests replayed to the provider)")
    ap.add_argument("--max-ratio", type=float, default=1.3, help="with --direct: exit 1 above this task/direct")
    a = ap.parse_args()
    if a.direct:
        print(f"model {a.model}, {a.templates} bundled template(s), {a.categories}:")
        raise SystemExit(direct(a.model, a.templates, a.categories, a.max_ratio))
    if a.harness:
        print(f"model {a.model}, {a.templates} bundled template(s), {a.categories}:")
        harness(a.model, a.templates, a.categories)
        return
    # warm-up: loads the model once (memoized by inspect for the later runs)
    run(a.model, "logprob", 1, "ses", a.max_tokens)
    t_lp, n_q, n_i, r_lp = run(a.model, "logprob", a.templates, a.categories, a.max_tokens)
    t_sp, _, _, r_sp = run(a.model, "sampled", a.templates, a.categories, a.max_tokens)
    print(f"model {a.model}: {n_q} questions, {n_i} test instances ({a.templates} template(s), {a.categories})")
    print(f"  sampled (10 epochs): {t_sp:8.1f} s  {n_q / t_sp:8.3f} questions/s  {n_i / t_sp:8.3f} instances/s"
          f"  refusal/invalid rate {100 * r_sp:.1f}%")
    print(f"  logprob (2 orders):  {t_lp:8.1f} s  {n_q / t_lp:8.3f} questions/s  {n_i / t_lp:8.3f} instances/s"
          f"  no-letter rate {100 * r_lp:.1f}%")
    print(f"  ratio logprob/sampled throughput: {t_sp / t_lp:.1f}x")
    full_h = FULL_QUESTIONS / (n_q / t_lp) / 3600
    print(f"  full DBB ({FULL_QUESTIONS} questions, {FULL_INSTANCES} instances): logprob mode = "
          f"{2 * FULL_QUESTIONS} one-token forward passes, no decoding (sampled: >= {10 * FULL_QUESTIONS} "
          f"generations); ~{full_h:.1f} h at this machine's measured rate (paper, sampled, A100: ~18 h per 7B model)")


if __name__ == "__main__":
    main()
