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
    p.add_argument("source", nargs="?", metavar="SOURCE", default="bundled",
                   help="bundled | upstream | FILE.yaml | FOLDER")
    p.add_argument("--languages", type=comma_list, default=None,
                   help="comma-separated languages for the sample count and export (unset: every language)")
    p.add_argument("--extra-english", action="store_true", help="include the English-only extra templates")
    p.add_argument("--prompts", metavar="FILE", type=out_file, help="write the samples as JSON lines to this file")
    p.add_argument("--show-prompt", metavar="ID", help="print the story prompt of one sample id")
    p.add_argument("--show-extraction-prompt", choices=["fixed", "faithful"],
                   help="print stereoprobe's wording of the extraction prompt (-T role_prompts=bundled), with a "
                        "placeholder story")
    p.add_argument("--show-refusal-prompt", nargs="?", const="upstream", choices=["upstream", "bundled"],
                   help="print the refusal-detector request for the first sample, with a placeholder story: "
                        "'upstream' (the default run's: flare's template, read from the pinned upstream file) or "
                        "'bundled' (stereoprobe's wording, -T role_prompts=bundled)")
    p.set_defaults(func=run)


def _upstream_refusal_prompt(view: Any) -> str:
    """The default run's refusal request for the view's first sample (flare's template, filled by the
    scorer's own function), or one line saying that it needs the pinned upstream file."""
    from stereoprobe.stereotales.extraction.refusal_prompt import refusal_prompt
    from stereoprobe.stereotales.extraction.upstream_prompts import upstream_role_prompts
    from stereoprobe.upstream import UpstreamDataError

    if not view.samples:
        return "(no sample to show the request of)"
    try:
        prompts = upstream_role_prompts()
    except UpstreamDataError as e:
        return f"(needs flare's pinned upstream file: {e}; our wording: --show-refusal-prompt bundled)"
    return refusal_prompt(view.taxonomy, "<the story>", view.samples[0].metadata, upstream_prompts=prompts)


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
    if args.show_refusal_prompt == "bundled":
        print("\n--- refusal prompt (stereoprobe's wording, -T role_prompts=bundled)")
        print(view.refusal_prompt())
    elif args.show_refusal_prompt:
        print("\n--- refusal prompt (flare's, what the default run sends)")
        print(_upstream_refusal_prompt(view))
    if args.prompts:
        path = view.write_prompts(args.prompts)
        info(f"wrote {len(view.samples)} prompts to {path}")
    return 0
