"""``stereoprobe lm-eval-path``: print the folder of stereoprobe's lm-eval task YAMLs for ``--include_path``."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``lm-eval-path`` subcommand."""
    p = sub.add_parser(
        "lm-eval-path",
        help="print the lm-evaluation-harness --include_path of stereoprobe's tasks",
        description="Print the folder holding stereoprobe's lm-evaluation-harness tasks (dbb_mc, dbb_sg, "
        "globalbias; one sub-folder with a README per probe), for lm-eval's --include_path, e.g. "
        "lm-eval run --include_path \"$(stereoprobe lm-eval-path)\" --tasks globalbias ...",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the include path."""
    from stereoprobe.lm_eval_tasks import include_path

    print(include_path())
    return 0
