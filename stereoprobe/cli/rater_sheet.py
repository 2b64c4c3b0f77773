"""``stereoprobe rater-sheet``: export StereoTales associations as a CSV sheet for human raters."""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoprobe.cli.common import existing_path, info, out_file, seed


def _source(text: str) -> str:
    if text == "upstream":
        return text
    p = existing_path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a folder (expected an association file)")
    return str(p)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``rater-sheet`` subcommand."""
    r = sub.add_parser(
        "rater-sheet",
        help="StereoTales: export associations as a CSV sheet for human raters (plain-language sentences)",
        description="Write one row per distinct association with the plain-language sentence of the published "
        "human study and empty harm (1-5) and realism (yes/no/don't know) columns, plus OUT.questions.txt with "
        "the two questions. Rate it, then pass the filled sheet to 'stereoprobe judge-report --human'.",
    )
    r.add_argument("associations", metavar="ASSOCIATIONS", type=_source,
                   help="associations.csv / .parquet, a questions.json-format file or 'upstream'")
    r.add_argument("--out", required=True, type=out_file, help="CSV file to write")
    r.add_argument("--slices", nargs="*", help="keep only these slices (e.g. all)")
    r.add_argument("--shuffle-seed", type=seed, help="shuffle the rows with this seed")
    r.add_argument("--upstream-dir", type=existing_path,
                   help="local copy of the upstream repositories (for 'upstream')")
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Parse -> :func:`stereoprobe.stereotales.judge.human.make_rater_sheet` -> one console line."""
    from stereoprobe.stereotales.judge.human import make_rater_sheet

    path, n = make_rater_sheet(args.associations, args.out, slices=args.slices, shuffle_seed=args.shuffle_seed,
                               upstream_dir=args.upstream_dir)
    info(f"{n} associations -> {path} (questions in {path.name}.questions.txt)")
    return 0
