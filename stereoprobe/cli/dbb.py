"""``stereoprobe dbb LOGS... --out DIR``: DBB bias scores from inspect eval logs of ``dbb`` / ``dbb_sg``.

Parses and validates the options, then calls :func:`stereoprobe.dbb.analyze` and :func:`stereoprobe.dbb.write`
(the Python API), writing into a temporary folder that replaces ``--out`` only when everything is written.
"""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "DBB (Pan et al., Findings of EMNLP 2025) post-processing: read the eval logs of the dbb and dbb_sg tasks "
    "(files, folders or inspect eval-set folders; retries supersede their originals), compute P(A) per complete "
    "question, the bias score S = |P1(A) - P2(A)| per test instance, counts and mean S of instances with "
    "S >= threshold per category and descriptor type with cluster-bootstrap CIs, refusal rates per response "
    "and per question, and write responses, runs, questions, instances, incomplete, summary and "
    "top_associations (CSV and Parquet) plus report.html. Questions missing epochs (interrupted runs, error "
    "samples) are left out and counted."
)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``dbb`` subcommand."""
    from stereoprobe.cli.common import bootstrap_count, existing_path, float_between, int_between, out_dir, seed

    p = sub.add_parser("dbb", help="DBB: bias scores S, counts of S >= 20, refusal rates and report from eval logs",
                       description=DESCRIPTION)
    p.add_argument("inputs", nargs="+", metavar="INPUT", type=existing_path,
                   help="eval log files or folders of the dbb and dbb_sg tasks, or lm-eval "
                   "--log_samples output of dbb_mc / dbb_sg (samples_<task>_<time>.jsonl)")
    p.add_argument("--out", required=True, type=out_dir, help="output folder (replaced atomically)")
    p.add_argument("--threshold", type=float_between(0, 100), default=20.0,
                   help="S threshold of a biased test instance, from 0 to 100 (the paper's 20)")
    p.add_argument("--n-boot", type=bootstrap_count, default=2000,
                   help="bootstrap draws for the CIs (cluster bootstrap over templates)")
    p.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    p.add_argument("--top", type=int_between(0, 10_000), default=5, help="top biased associations per category")
    p.add_argument("--term-based", nargs="+", default=None, metavar="PATH",
                   help="stereoprobe/dbb_baselines logs (the paper's generative protocol), lm-eval results files "
                        "(results_*.json: log-likelihood, a different protocol) or other inspect logs of BBQ, "
                        "CrowS-Pairs or StereoSet runs (files or folders), shown next to DBB as in the paper's "
                        "Tables 1 and 6 with their protocol")
    p.set_defaults(func=run)



def run(args: argparse.Namespace) -> int:
    """Validate the inputs, analyse into a temporary folder, move it into place, print one line per run."""
    from stereoprobe.cli.common import atomic_output_dir, info, progress
    from stereoprobe.dbb import contract as C
    from stereoprobe.dbb import DBBOptions, analyze, write
    from stereoprobe.inputs import partition, read_headers

    part = partition(args.inputs, ("logs", "lm_eval"), what="DBB inputs", lm_eval_task=tuple(C.LM_EVAL_TASKS))
    if not part.lm_eval:  # lm-eval output is read as well
        read_headers(part.logs, task=tuple(C.TASKS))  # no dbb/dbb_sg log -> one line, before anything is written
    if args.term_based:
        from stereoprobe.dbb.term_based import read_term_based

        read_term_based(args.term_based)  # checked before anything is written
    options = DBBOptions(threshold=args.threshold, n_boot=args.n_boot, seed=args.seed, top=args.top)
    with atomic_output_dir(args.out) as tmp:
        result = analyze(args.inputs, options, term_based=args.term_based,
                         progress=lambda it, what: progress(it, description=what))
        write(result, tmp)
    for line in result.lines:
        info(line)
    info(f"wrote {args.out}/summary.csv, instances.csv, report.html")
    return 0
