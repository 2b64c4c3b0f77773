"""``stereoprobe taxonomy``: validate a StereoTales taxonomy, summarise it, and export its prompts.

    stereoprobe taxonomy [SOURCE] [--languages en,fr] [--extra-english] [--prompts OUT.jsonl]
                         [--show-prompt ID] [--show-extraction-prompt fixed|faithful] [--show-refusal-prompt]

SOURCE: ``bundled`` (default), ``upstream`` (the pinned upstream seeds), a taxonomy ``.yaml`` of your own, or a
folder (our format, or a local copy of the upstream seeds). A taxonomy that fails validation prints the
error (file and field) and exits with status 1. ``--prompts`` writes one JSON line per sample
(``id, input, metadata``), in the order the task runs them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "taxonomy",
        help="StereoTales: validate and summarise a taxonomy, export its story prompts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("source", nargs="?", default="bundled", help="bundled | upstream | FILE.yaml | FOLDER")
    p.add_argument("--languages", help="comma-separated languages for the sample count and export (default: all)")
    p.add_argument("--extra-english", action="store_true", help="include the English-only extra templates")
    p.add_argument("--prompts", help="write the samples as JSON lines to this file")
    p.add_argument("--show-prompt", metavar="ID", help="print the story prompt of one sample id")
    p.add_argument("--show-extraction-prompt", choices=["fixed", "faithful"],
                   help="print the extraction prompt (with a placeholder story)")
    p.add_argument("--show-refusal-prompt", action="store_true", help="print the refusal-detector prompt")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from stereoprobe.stereotales.taxonomy import TaxonomyError, build_samples, load_taxonomy

    try:
        tax = load_taxonomy(args.source)
        samples = build_samples(tax, languages=args.languages, extra_english=args.extra_english)
    except TaxonomyError as e:
        print(f"invalid taxonomy: {e}", file=sys.stderr)
        return 1

    out = sys.stdout
    n_values = sum(len(a.target_values) for a in tax.attributes)
    print(f"taxonomy     {tax.name} ({tax.source})", file=out)
    print(f"fingerprint  {tax.fingerprint()}", file=out)
    print(f"languages    {', '.join(tax.languages)}", file=out)
    print(f"attributes   {len(tax.attributes)} ({n_values} target values)", file=out)
    for a in tax.attributes:
        extra = [v for v in a.extraction_values if v not in a.target_keys]
        print(f"  {a.key:<24} {len(a.target_values):>3} values   + extraction-only: {', '.join(extra)}", file=out)
    groups = tax.scenario_groups
    print(f"scenarios    {len(tax.scenarios)} in {len(groups)} groups ({', '.join(groups)})", file=out)
    print(f"extra        {', '.join(tax.extra_templates) or 'none'}", file=out)
    per_lang: dict[str, int] = {}
    for s in samples:
        key = "extra (en)" if s.metadata["scenario_key"] is None else s.metadata["language"]
        per_lang[key] = per_lang.get(key, 0) + 1
    print(f"samples      {len(samples)} (" + ", ".join(f"{k}: {v}" for k, v in per_lang.items()) + ")", file=out)

    if args.show_prompt:
        match = [s for s in samples if s.id == args.show_prompt]
        if not match:
            print(f"no sample {args.show_prompt!r} (ids look like {samples[0].id})", file=sys.stderr)
            return 1
        print(f"\n--- {args.show_prompt}\n{match[0].input}", file=out)
    if args.show_extraction_prompt:
        print(f"\n--- extraction prompt ({args.show_extraction_prompt})", file=out)
        print(tax.extraction_prompt("<the story>", variant=args.show_extraction_prompt), file=out)
    if args.show_refusal_prompt:
        print("\n--- refusal prompt", file=out)
        print(tax.refusal_prompt("<the story>", language=tax.base_language, scenario=tax.scenarios[0].key,
                                 character=tax.attributes[0].target_values[0].phrase[tax.base_language]), file=out)
    if args.prompts:
        path = Path(args.prompts)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as f:
            for s in samples:
                f.write(json.dumps({"id": s.id, "input": s.input, "metadata": s.metadata}, ensure_ascii=False) + "\n")
        print(f"wrote {len(samples)} prompts to {path}", file=out)
    return 0
