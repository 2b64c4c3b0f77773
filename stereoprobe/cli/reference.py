"""``stereoprobe reference --out DIR``: the reference reports from the papers' published model outputs."""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoprobe.cli.common import HelpFormatter, bootstrap_count, existing_dir, int_between, out_dir, seed


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``reference`` subcommand."""
    p = sub.add_parser(
        "reference",
        help="reports of the papers' published model outputs, every printed figure next to ours",
        description="Obtain the GlobalBias paper's published model outputs at the pinned commit (checksummed; "
        "offline from $STEREOPROBE_UPSTREAM_DIR/GlobalBias/...), run stereoprobe globalbias on the Llama 3 8B APX "
        "results, stereoprobe profiles on the four models' character profiles (with Table 8's consistency), "
        "stereoprobe leaderboard of those models, and write DIR/paper_vs_stereoprobe/report.html with every "
        "figure the paper prints next to ours ('reproduced exactly', 'within x', 'differs' with the reason) and "
        "DIR/index.html. DBB and StereoTales publish no readable model outputs; the page says so. make reference "
        "runs this command.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--out", required=True, type=out_dir, help="output folder (e.g. results/reference)")
    p.add_argument("--docs", type=existing_dir, default=None,
                   help="also rewrite the evaluation-report sections of DOCS/globalbias.md, dbb.md and "
                   "stereotales.md from this run (make reference passes docs)")
    p.add_argument("--permutations", type=bootstrap_count, default=100,
                   help="profiles: label permutations of the test against chance")
    p.add_argument("--folds", type=int_between(2, 100), default=5, help="profiles: folds of the cross-validated interval")
    p.add_argument("--n-boot", type=bootstrap_count, default=2000, help="leaderboard: bootstrap draws of the intervals")
    p.add_argument("--seed", type=seed, default=0, help="leaderboard: bootstrap seed")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.console import info
    from stereoprobe.reference import ReferenceOptions, run_reference, write_docs
    from stereoprobe.report.run_info import command_line

    if args.docs is not None:  # before the run: a wrong folder is refused at once, not after minutes
        from stereoprobe.reference.docs import check_docs_dir

        check_docs_dir(args.docs)
    command = command_line("reference")
    opts = ReferenceOptions(permutations=args.permutations, folds=args.folds, n_boot=args.n_boot, seed=args.seed)
    from stereoprobe.console import step_line

    run = run_reference(Path(args.out), opts, command=command, step=step_line)
    counts = run.comparison["verdict"].str.replace(r"^within .*", "within tolerance", regex=True).value_counts()
    info(f"paper vs stereoprobe: {len(run.comparison)} printed items; "
         + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    if args.docs is not None:
        for path in write_docs(run.out, Path(args.docs)):
            info(f"updated {path}")
    info(f"wrote {run.out / 'index.html'}")
    return 0
