"""The ``stereoprobe`` command line: post-processing of eval logs into tables and reports.

Each subcommand lives in its own module, which exposes ``register(subparsers)``; that function adds an
argparse sub-parser and sets ``func`` (called with the parsed namespace, returns an exit code). Modules keep
heavy imports inside ``func`` so ``stereoprobe --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# One line per subcommand module; each probe adds its own.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "stereoprobe.lm_eval_cli",
    "stereoprobe.index_cli",
    "stereoprobe.globalbias.cli",
    "stereoprobe.stereotales.cli_associations",
    "stereoprobe.stereotales.cli_judge",
    "stereoprobe.stereotales.cli_taxonomy",
    "stereoprobe.dbb.cli",
    "stereoprobe.dbb.lm_eval_docs",
    "stereoprobe.dbb.builder",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stereoprobe",
        description="Aggregate stereoprobe eval logs into association tables and HTML reports.",
    )
    from stereoprobe import __version__

    parser.add_argument("--version", action="version", version=f"stereoprobe {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
