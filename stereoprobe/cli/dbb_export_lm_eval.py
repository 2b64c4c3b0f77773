"""``stereoprobe dbb-export-lm-eval``: write the docs of a DBB selection for the lm-eval tasks to JSONL."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``dbb-export-lm-eval`` subcommand."""
    from stereoprobe.cli.common import int_between, out_file, seed
    from stereoprobe.dbb import contract as Q  # not .questions: it imports inspect_ai (seconds of --help)

    p = sub.add_parser(
        "dbb-export-lm-eval",
        help="write DBB docs for the lm-eval tasks (dbb_mc, dbb_sg) to JSONL",
        description="Write the lm-eval docs of a DBB selection (dbb_mc: two docs per question, one per option "
        "order; dbb_sg: one per question) to a JSONL file, to run lm-eval on a fixed, inspectable set: "
        "--metadata '{\"data_file\": FILE}'.",
    )
    p.add_argument("--variant", choices=["mc", "sg"], required=True, help="mc: dbb_mc docs; sg: dbb_sg docs")
    p.add_argument("--out", required=True, type=out_file, help="JSONL file to write")
    p.add_argument("--source", default=Q.DEFAULT_SOURCE,
                   help="upstream (the paper's data), bundled (a small demo set), or a local copy of the upstream data")
    p.add_argument("--faithful", action=argparse.BooleanOptionalAction, default=Q.DEFAULT_FAITHFUL,
                   help="reproduce the upstream expansion quirks (--no-faithful: the fixed expansion)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the name draws")
    p.add_argument("--categories", default=None, help="comma-separated subset of age,gender,race,ses,religion")
    p.add_argument("--limit-templates", type=int_between(1, 10**6), default=None, help="only the first N templates")
    p.add_argument("--variations", default=None, help="DBB-SG variations CSV")
    p.add_argument("--prompt", choices=["upstream", "stereoprobe"], default="upstream",
                   help="upstream (default: upstream's prompt files, read at run time from the pinned commit) or "
                   "stereoprobe (the project's own wording, no download)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build and write the docs."""
    from stereoprobe.lm_eval_tasks.docs_builder import build_docs, write_jsonl

    docs = build_docs(args.variant, args.source, args.faithful, args.seed, args.categories, args.limit_templates,
                      variations=args.variations, prompt=args.prompt)
    print(write_jsonl(docs, args.out), f"({len(docs)} docs)")
    return 0
