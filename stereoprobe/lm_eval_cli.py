"""``stereoprobe lm-eval-path``: print the folder of lm-eval task YAMLs for ``--include_path``."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lm-eval-path", help="print the lm-evaluation-harness --include_path of stereoprobe's tasks")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.lm_eval_tasks import include_path

    print(include_path())
    return 0
