"""``stereoprobe associations INPUT... --out DIR``: StereoTales association mining.

Parses and validates the options, calls :func:`stereoprobe.stereotales.mining.analyze`
(the Python API) and writes its tables, ``run_info.json`` and ``report.html`` into ``DIR`` all at once
(:func:`~stereoprobe.cli.common.atomic_output_dir`). ``DIR/associations.csv`` holds one row per (model,
slice, base attribute, base value, compared attribute, compared value) passing the paper's filter.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from stereoprobe.cli.common import (
    existing_path,
    finite_float,
    info,
    out_dir,
    probability,
)
from stereoprobe.cli.common import int_between, jobs, mc_resamples, resample_count, seed

COMMAND = "associations"
EFFECTS = ("negligible", "small", "medium", "large")

# CLI option -> MiningConfig field
CONFIG_OPTIONS: dict[str, str] = {
    "min_row_sum": "min_row_sum",
    "resamples": "mc_resamples",
    "seed": "seed",
    "alpha": "alpha",
    "p_method": "p_method",
    "family": "fdr_family",
    "max_p_by": "filter_p_by",
    "min_lift": "filter_min_lift",
    "effects": "filter_effects",
    "ci_level": "lift_ci_level",
    "bootstrap": "bootstrap_reps",
    "jobs": "n_jobs",
    "effect_all_pairs": "effect_all_pairs",
}


def effect_list(text: str) -> tuple[str, ...]:
    """``medium,large`` -> ``("medium", "large")``; only Cramér's V categories."""
    items = tuple(e.strip() for e in text.split(",") if e.strip())
    bad = [e for e in items if e not in EFFECTS]
    if bad or not items:
        raise argparse.ArgumentTypeError(f"unknown categories {list(bad or items)} (use {', '.join(EFFECTS)})")
    return items


def lift_threshold(text: str) -> float:
    """A finite lift >= 0."""
    value = finite_float(text)
    if value < 0 or not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be a number >= 0")
    return value


def _show_paper_defaults(group: Any) -> None:
    """Append the paper's constant (the :class:`MiningConfig` default an unset option means) to each statistics
    option's help, in the help style of every command: ``(default: 10)``."""
    from stereoprobe.cli.common import show_default
    from stereoprobe.stereotales.mining.config import MiningConfig

    paper = MiningConfig()
    for action in group._group_actions:
        field = CONFIG_OPTIONS.get(action.dest)
        if field is not None and hasattr(paper, field):
            value = getattr(paper, field)
            shown = "off" if value is False else show_default(value)
            action.help = f"{action.help} (default: {shown})".replace("%", "%%")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        COMMAND,
        help="StereoTales: mine attribute associations from eval logs or the public release",
        description=(
            "Turn StereoTales stories (inspect eval logs of the stereotales task, inspect eval-set folders, or "
            "the public StereoTales release as Parquet/CSV) into association tables (CSV + Parquet) and an HTML "
            "report. Statistics default to the paper's constants (StereoTales, arXiv 2605.10442)."
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", type=existing_path,
                   help="eval log files/folders, or release Parquet/CSV files/folders")
    p.add_argument("--out", required=True, metavar="DIR", type=out_dir,
                   help="output folder (created; replaced as a whole at the end of a successful run, other commands' files kept)")
    p.add_argument("--by-language", action="store_true",
                   help="also run one slice per (model, language) and the cross-language analysis (Jaccard)")
    g = p.add_argument_group("statistics (unset: the paper's constant, shown as the default)")
    g.add_argument("--min-row-sum", type=int_between(1, 10**9), default=None,
                   help="drop base values with fewer stories in a table")
    g.add_argument("--resamples", type=mc_resamples, default=None,
                   help="Monte Carlo resamples of the step-1 test")
    g.add_argument("--seed", type=seed, default=None, help="Monte Carlo seed")
    g.add_argument("--alpha", type=probability, default=None, help="BH level of the attribute-pair tests")
    g.add_argument("--p-method", choices=["auto", "reference-mc", "sequential-mc", "asymptotic"], default=None,
                   help="step-1 p-values: auto = exact/asymptotic/sequential Monte Carlo with the reference's "
                        "decisions; reference-mc = the upstream Monte Carlo estimate exactly")
    g.add_argument("--family", choices=["attribute", "run"], default=None,
                   help="BH family: per (model, slice, base attribute) as upstream, or one family for the run")
    g.add_argument("--max-p-by", type=probability, default=None,
                   help="filter: BY-adjusted cell p below this")
    g.add_argument("--min-lift", type=lift_threshold, default=None, help="filter: lift at least this")
    g.add_argument("--effects", type=effect_list, default=None,
                   help="filter: kept Cramer's V categories, comma-separated")
    g.add_argument("--ci-level", type=probability, default=None, help="confidence level of the lift intervals")
    g.add_argument("--bootstrap", type=resample_count, default=None,
                   help="bootstrap resamples of the stories for each association's stability; 0 = off")
    g.add_argument("--effect-all-pairs", action="store_const", const=True, default=None,
                   help="give every attribute pair its effect category; upstream writes N/A for pairs that are "
                        "not significant")
    g.add_argument("--jobs", type=jobs, default=None, help="worker processes, one (model, slice) per task")
    _show_paper_defaults(g)
    o = p.add_argument_group("output")
    o.add_argument("--examples", type=int_between(0, 1000), default=3, help="example stories kept per association")
    o.add_argument("--excerpt-chars", type=int_between(1, 100_000), default=400, help="characters of each example excerpt")
    o.add_argument("--note", default="", help="a line shown at the top of the report (e.g. 'demo settings')")
    o.add_argument("--no-report", action="store_true", help="write the tables only")
    o.add_argument("--svg", action="store_true",
                   help="also save the report's figures as SVG (figures/*.svg, for papers and slides); PNG only "
                        "by default")
    p.set_defaults(func=run)


def mining_config(args: argparse.Namespace) -> Any:
    """The :class:`~stereoprobe.stereotales.mining.config.MiningConfig` of the given options (unset options:
    the paper's constants)."""
    from stereoprobe.stereotales.mining.config import MiningConfig

    kw = {fld: getattr(args, opt) for opt, fld in CONFIG_OPTIONS.items() if getattr(args, opt) is not None}
    return MiningConfig(**kw)


def run(args: argparse.Namespace) -> int:
    from stereoprobe.cli.common import atomic_output_dir, progress, spinner
    from stereoprobe.stereotales.mining import AssociationOptions, analyze, write
    from stereoprobe.stereotales.mining.api import stale_tables

    options = AssociationOptions(mining_config(args), by_language=args.by_language, examples=args.examples,
                                 excerpt_chars=args.excerpt_chars, note=args.note or None,
                                 accept_versions=getattr(args, "accept_versions", None))
    result = analyze(args.inputs, options, progress=lambda it, what: progress(it, description=what), step=spinner)
    with atomic_output_dir(args.out) as tmp:
        write(result, tmp, report=not args.no_report, step=spinner, svg=args.svg)
    for name in stale_tables(result):  # an earlier run's tables that this run does not produce
        for suffix in (".csv", ".parquet"):
            (args.out / f"{name}{suffix}").unlink(missing_ok=True)
    info(f"{result.summary()} -> {args.out}")
    return 0
