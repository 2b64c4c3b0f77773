"""``stereoprobe index DIR``: a landing page linking every probe report found under DIR.

For each report the page shows the probe, the models, the date and the settings (from the ``run_info.json``
its command wrote), and links every CSV and Parquet table beside it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from stereoprobe.cli.common import HelpFormatter, existing_dir
from stereoprobe.redact import redact_text


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``index`` subcommand."""
    p = sub.add_parser(
        "index",
        help="write DIR/index.html linking every report and table under DIR",
        description="Write DIR/index.html: one row per HTML report found under DIR (the probe, its models, the "
        "date and the settings of the run, read from run_info.json), with links to the report and to every CSV "
        "and Parquet table beside it. make demo ends with this command.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", type=_results_dir,
                   help="folder holding the probes' report folders (e.g. results/demo)")
    p.set_defaults(func=_run, claimed_files=_page)  # the page is locked before the folder is read


def _results_dir(text: str) -> Path:
    """An existing folder other than the file-system root (the page is written into it)."""
    p = existing_dir(text)
    if Path(os.path.abspath(p)) == Path(os.path.abspath(p)).parent:
        raise argparse.ArgumentTypeError(f"{text}: is the file-system root (name the folder of the results)")
    return p


def _page(args: argparse.Namespace) -> list[Path]:
    return [Path(args.dir) / "index.html"]


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.report.index import build_index

    print(redact_text(str(build_index(Path(args.dir)))))  # the path of the page, no credential
    return 0
