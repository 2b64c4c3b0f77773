"""``stereoprobe taxonomy [SOURCE]``: validate a StereoTales taxonomy, summarise it, export its prompts.

Parses the options and calls :func:`stereoprobe.stereotales.taxonomy.summary.inspect_taxonomy` (the Python
API). A taxonomy that fails validation prints one line naming the file and field, exit code 2.
"""

from __future__ import annotations

import argparse
from typing import Any

from stereoprobe.cli.common import comma_list, info, out_file
from stereoprobe.errors import InputError

COMMAND = "taxonomy"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        COMMAND,
        help="StereoTales: validate and summarise a taxonomy, export its story prompts",
        description=(
            "Validate a StereoTales taxonomy and print a summary (languages, attributes, scenarios, samples per "
            "language). SOURCE is 'bundled' (stereoprobe's wording), 'upstream' (the paper's seeds at the pinned "
            "commit, checksum-verified), a taxonomy .yaml of your own, or a folder (our format, or a local copy "
            "of the upstream seeds). --prompts writes one JSON line per sample (id, input, metadata) in the order "
            "the task runs them."
        ),
    )
    p.add_argument("source", nargs="?", default="bundled", help="bundled | upstream | FILE.yaml | FOLDER")
    p.add_argument("--languages", type=comma_list, default=None,
                   help="comma-separated languages for the sample count and export (unset: every language)")
    p.add_argument("--extra-english", action="store_true", help="include the English-only extra templates")
    p.add_argument("--prompts", metavar="FILE", type=out_file, help="write the samples as JSON lines to this file")
    p.add_argument("--show-prompt", metavar="ID", help="print the story prompt of one sample id")
    p.add_argument("--show-extraction-prompt", choices=["fixed", "faithful"],
                   help="print the extraction prompt (with a placeholder story)")
    p.add_argument("--show-refusal-prompt", action="store_true", help="print the refusal-detector prompt")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from stereoprobe.stereotales.taxonomy.summary import inspect_taxonomy

    if args.prompts and Path(args.prompts).is_dir():
        raise InputError(f"--prompts {args.prompts}: is a folder, expected a file")
    view = inspect_taxonomy(args.source, languages=args.languages, extra_english=args.extra_english)
    shown = view.story_prompt(args.show_prompt) if args.show_prompt else None
    print("\n".join(view.summary_lines()))
    if shown is not None:
        print(f"\n--- {args.show_prompt}\n{shown}")
    if args.show_extraction_prompt:
        print(f"\n--- extraction prompt ({args.show_extraction_prompt})")
        print(view.extraction_prompt(args.show_extraction_prompt))
    if args.show_refusal_prompt:
        print("\n--- refusal prompt")
        print(view.refusal_prompt())
    if args.prompts:
        path = view.write_prompts(args.prompts)
        info(f"wrote {len(view.samples)} prompts to {path}")
    return 0
