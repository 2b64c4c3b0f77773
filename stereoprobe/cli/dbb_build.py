"""``stereoprobe dbb-build-export LOGS... --out DIR``: the DBB builder's logs to data files.

Calls :func:`stereoprobe.dbb.builder.export` (the Python API) into a temporary folder that replaces the
files of ``--out`` only when everything is written.
"""

from __future__ import annotations

import argparse

DESCRIPTION = (
    "Export the logs of the DBB dataset builder tasks (dbb_build_concepts, dbb_build_questions) to "
    "concepts.csv (kept concept pairs), templates.csv and sg_variations.csv (complete question templates and "
    "their DBB-SG sentence variations), and build_log.csv (every input with its status: ok, filtered, "
    "unparsed_*, refused, duplicate_pair, error). Pass templates.csv to the evaluation with "
    "-T source=DIR/templates.csv and the variations with -T variations=DIR/sg_variations.csv."
)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``dbb-build-export`` subcommand."""
    from stereoprobe.cli.common import existing_path, out_dir

    p = sub.add_parser("dbb-build-export", help="DBB builder logs -> concepts.csv / templates.csv / sg_variations.csv",
                       description=DESCRIPTION)
    p.add_argument("inputs", nargs="+", metavar="INPUT", type=existing_path,
                   help="eval logs (files or folders) of dbb_build_concepts / dbb_build_questions")
    p.add_argument("--out", required=True, type=out_dir, help="output folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Validate the inputs, export into a temporary folder, move the files into place."""
    from stereoprobe.cli.common import atomic_output_dir, info, progress
    from stereoprobe.dbb import contract as C
    from stereoprobe.dbb.builder import export
    from stereoprobe.inputs import read_headers

    read_headers(args.inputs, task=C.BUILD_TASKS)
    with atomic_output_dir(args.out) as tmp:
        written = export(args.inputs, tmp, progress=lambda it, what: progress(it, description=what))
    for name, path in written.items():
        info(f"{name}: {args.out / path.name}")
    return 0
