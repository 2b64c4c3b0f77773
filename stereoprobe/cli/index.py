"""``stereoprobe index DIR``: a landing page linking every probe report found under DIR.

For each report the page shows the probe, the models, the date and the settings (from the ``run_info.json``
its command wrote), and links every CSV and Parquet table beside it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoprobe.errors import InputError
from stereoprobe.report.index import build_index


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``index`` subcommand."""
    p = sub.add_parser(
        "index",
        help="write DIR/index.html linking every report and table under DIR",
        description="Write DIR/index.html: one row per HTML report found under DIR (the probe, its models, the "
        "date and the settings of the run, read from run_info.json), with links to the report and to every CSV "
        "and Parquet table beside it. make demo ends with this command.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("dir", type=Path, help="folder holding the probes' report folders (e.g. results/demo)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if not Path(args.dir).is_dir():
        raise InputError(f"index: {args.dir} is not a folder")
    print(build_index(args.dir))
    return 0
