"""``stereoprobe associations INPUT... --out DIR [--by-language]``: StereoTales association mining.

Reads StereoTales eval logs or the public release tables (see :mod:`stereoprobe.stereotales.stories`), runs
the paper's two-step statistics (:mod:`stereoprobe.stereotales.associations`), writes every table as CSV and
Parquet into ``DIR`` and the single-file ``DIR/report.html``. Contract E: ``DIR/associations.csv`` holds one
row per (model, slice, base attribute, base value, compared attribute, compared value) passing the filter
with the columns ``model, slice, base_attribute, base_value, compared_attribute, compared_value, n, fraction,
lift, lift_ci_low, lift_ci_high, p_by, cramers_v, effect`` first; ``DIR/associations_across_models.csv``
aggregates them across models.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

COMMAND = "associations"

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
}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        COMMAND,
        help="StereoTales: mine attribute associations from eval logs or the public release",
        description=(
            "Turn StereoTales stories (inspect eval logs of the stereotales task, or the public StereoTales "
            "release as Parquet/CSV) into association tables (CSV + Parquet) and an HTML report. Defaults are "
            "the paper's constants (spec stereotales.md §5)."
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="eval log files/folders, or release Parquet/CSV files/folders")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
    p.add_argument("--by-language", action="store_true",
                   help="also run one slice per (model, language) and the cross-language analysis (Jaccard)")
    g = p.add_argument_group("statistics (unset: MiningConfig's default, the paper's constant, in brackets)")
    g.add_argument("--min-row-sum", type=int, default=None, help="drop base values with fewer stories in a table (10)")
    g.add_argument("--resamples", type=int, default=None, help="Monte Carlo resamples of the step-1 test (500000)")
    g.add_argument("--seed", type=int, default=None, help="Monte Carlo seed (42)")
    g.add_argument("--alpha", type=float, default=None, help="BH level of the attribute-pair tests (0.05)")
    g.add_argument("--p-method", choices=["auto", "reference-mc", "sequential-mc", "asymptotic"], default=None,
                   help="step-1 p-values: auto = exact/asymptotic/sequential MC with the reference's decisions "
                        "(default); reference-mc = the upstream Monte Carlo exactly")
    g.add_argument("--family", choices=["attribute", "run"], default=None,
                   help="BH family: per (model, slice, base attribute) as upstream, or one family for the run")
    g.add_argument("--max-p-by", type=float, default=None, help="filter: BY-adjusted cell p below this (0.05)")
    g.add_argument("--min-lift", type=float, default=None, help="filter: lift at least this (2)")
    g.add_argument("--effects", default=None, help="filter: kept Cramér's V categories (medium,large)")
    g.add_argument("--ci-level", type=float, default=None, help="confidence level of the lift intervals (0.95)")
    g.add_argument("--bootstrap", type=int, default=None,
                   help="bootstrap resamples of the stories for each association's stability (0 = off)")
    g.add_argument("--jobs", type=int, default=None, help="worker processes (one (model, slice) per task)")
    o = p.add_argument_group("output")
    o.add_argument("--examples", type=int, default=3, help="example stories kept per association (3)")
    o.add_argument("--excerpt-chars", type=int, default=400, help="characters of each example excerpt (400)")
    o.add_argument("--note", default="", help="a line shown at the top of the report (e.g. 'demo settings')")
    o.add_argument("--no-report", action="store_true", help="write the tables only")
    p.set_defaults(func=run)


def mining_config(args: argparse.Namespace):
    from stereoprobe.stereotales.associations import MiningConfig

    kw: dict[str, Any] = {}
    for opt, fld in CONFIG_OPTIONS.items():
        v = getattr(args, opt)
        if v is None:  # not given: MiningConfig's default (the paper's constant) applies
            continue
        if opt == "effects":
            v = tuple(e.strip() for e in str(v).split(",") if e.strip())
            bad = [e for e in v if e not in ("negligible", "small", "medium", "large")]
            if bad or not v:
                raise ValueError(f"--effects: unknown categories {bad or v} (use negligible, small, medium, large)")
        kw[fld] = v
    return MiningConfig(**kw)


def _jsonable_columns(df):
    """Nested values (tables, value lists) as JSON strings, so CSV and Parquet hold the same text."""
    import json

    import numpy as np

    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object and out[c].map(lambda v: isinstance(v, (list, tuple, dict, np.ndarray))).any():
            out[c] = out[c].map(
                lambda v: json.dumps(v.tolist() if isinstance(v, np.ndarray) else v, default=lambda x: x.tolist()
                                     if hasattr(x, "tolist") else str(x))
                if isinstance(v, (list, tuple, dict, np.ndarray)) else v
            )
    return out


def run_associations(args: argparse.Namespace) -> dict[str, Any]:
    """Do the work of the command; return the run manifest (also written to ``DIR/run_info.json``)."""
    import json
    import time
    from pathlib import Path

    import pandas as pd

    from stereoprobe import __version__
    from stereoprobe.stereotales import association_tables as T
    from stereoprobe.stereotales.associations import (
        aggregate_across_languages,
        aggregate_across_models,
        config_dict,
        mine_associations,
    )
    from stereoprobe.stereotales.report import RUN_INFO, TABLES, write_associations_report
    from stereoprobe.stereotales.stories import read_stories, read_story_excerpts
    from stereoprobe.tables import write_table

    out = Path(args.out)
    config = mining_config(args)
    timings: dict[str, float] = {}
    t = time.perf_counter()
    stories = read_stories(args.inputs)
    timings["read_s"] = time.perf_counter() - t
    frame, attributes = stories.frame, stories.attributes
    if frame.empty:
        raise ValueError(f"no usable stories in {args.inputs} (see the counts: {stories.issues['kind'].value_counts().to_dict()})")

    t = time.perf_counter()
    res = mine_associations(frame, attributes, config, by_language=False)
    pairs, values = [res.pair_tests], [res.value_tests]
    timings["mine_global_s"] = time.perf_counter() - t
    if args.by_language:
        t = time.perf_counter()
        res_l = mine_associations(frame, attributes, config, by_language=True)
        pairs.append(res_l.pair_tests[res_l.pair_tests["slice"] != T.GLOBAL_SLICE])
        values.append(res_l.value_tests[res_l.value_tests["slice"] != T.GLOBAL_SLICE])
        timings["mine_by_language_s"] = time.perf_counter() - t
    pair_tests = pd.concat(pairs, ignore_index=True)
    value_tests = pd.concat(values, ignore_index=True)

    t = time.perf_counter()
    models = sorted(frame["model"].unique())
    associations = T.associations_table(value_tests)
    across = aggregate_across_models(value_tests)
    # models_total = models with stories in the slice (value_tests only knows models with significant pairs)
    per_slice_models = {T.GLOBAL_SLICE: len(models), **frame.groupby("language")["model"].nunique().to_dict()}
    across["models_total"] = across["slice"].map(per_slice_models).astype("int64")
    across = T.with_association_id(across)
    tables: dict[str, pd.DataFrame] = {
        "associations": associations,
        "associations_across_models": across,
        "explorer_global": T.explorer_table(associations, n_models=len(models)),
        "pair_tests": pair_tests,
        "value_tests": value_tests,
        "attribute_distributions": T.attribute_distributions(frame, attributes),
        "refusal_rates": T.refusal_rates(frame, stories.issues),
        "unknown_rates": T.unknown_rates(frame, attributes),
        "input_issues": stories.issues,
        "input_sources": stories.sources,
    }
    if args.by_language:
        # every language of the input gets a Jaccard row, also one without any significant pair
        per_assoc, jac, specific = aggregate_across_languages(value_tests, languages=sorted(frame["language"].unique()))
        tables["associations_by_language"] = T.with_association_id(per_assoc)
        tables["language_jaccard"] = jac.rename_axis("language").reset_index()
        tables["language_specific"] = T.with_association_id(specific)

    examples = T.pick_examples(frame, associations, per_association=args.examples)
    keys = {(r.model, r.sample_id, int(r.epoch)) for r in examples.itertuples(index=False)}
    excerpts = read_story_excerpts(args.inputs, keys, max_chars=args.excerpt_chars) if keys else {}
    examples["excerpt"] = [excerpts.get((r.model, r.sample_id, int(r.epoch)), "") for r in examples.itertuples(index=False)]
    tables["association_examples"] = examples

    for name, df in tables.items():
        write_table(_jsonable_columns(df), out, name)
    for name in TABLES:  # tables of an earlier run into the same folder (e.g. --by-language) would be stale
        if name not in tables:
            for suffix in (".csv", ".parquet"):
                (out / f"{name}{suffix}").unlink(missing_ok=True)
    timings["tables_s"] = time.perf_counter() - t

    issue_counts = stories.issues["kind"].value_counts().to_dict() if len(stories.issues) else {}
    info: dict[str, Any] = {
        "command": "stereoprobe associations " + " ".join(sys.argv[2:]) if sys.argv[1:2] == [COMMAND] else None,
        "stereoprobe_version": __version__,
        "inputs": [str(i) for i in args.inputs],
        "by_language": bool(args.by_language),
        "stories": int(len(frame)),
        "refused": int(stories.n_refused),
        "extraction_failed": int(frame["extraction_failed"].sum()),
        "issues": {k: int(v) for k, v in issue_counts.items()},
        "models": models,
        "languages": sorted(frame["language"].unique()),
        "attributes": attributes,
        "config": config_dict(config),
        "p_methods": {str(k): int(v) for k, v in pair_tests["p_method"].value_counts().items()},
        "pair_tests": int(len(pair_tests)),
        "associations": int(len(associations)),
        "associations_global": int((associations["slice"] == T.GLOBAL_SLICE).sum()),
        "subtitle": args.note or None,
        "timings": {k: round(v, 3) for k, v in timings.items()},
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / RUN_INFO).write_text(json.dumps(info, indent=2, default=str), encoding="utf-8")
    if not args.no_report:
        t = time.perf_counter()
        write_associations_report(out)
        info["timings"]["report_s"] = round(time.perf_counter() - t, 3)
        (out / RUN_INFO).write_text(json.dumps(info, indent=2, default=str), encoding="utf-8")
    return info


def run(args: argparse.Namespace) -> int:
    from stereoprobe.stereotales.stories import StoriesError

    try:
        info = run_associations(args)
    except (StoriesError, FileNotFoundError, ValueError) as exc:
        print(f"stereoprobe {COMMAND}: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{info['stories']} stories ({info['refused']} refused) from {len(info['models'])} model(s), "
        f"{len(info['languages'])} language(s); {info['pair_tests']} attribute-pair tests; "
        f"{info['associations_global']} global associations, {info['associations']} in all slices -> {args.out}"
    )
    return 0
