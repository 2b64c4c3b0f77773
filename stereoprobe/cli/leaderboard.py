"""``stereoprobe leaderboard INPUT... --out DIR``: models side by side over every probe, with intervals and
paired model-vs-model tests.

Reads the output folders of ``stereoprobe associations`` (+ ``judge-report``), ``dbb``, ``globalbias`` and
``profiles`` (or folders above them) and writes ``DIR/leaderboard.csv`` + ``.parquet`` (one row per model:
``model``, then ``<probe>.<metric>`` with ``_ci_low`` and ``_ci_high``), ``DIR/metrics`` (long form),
``DIR/pairwise`` (probe, metric, model_a, model_b, estimate, ci_low, ci_high, p_value, q_value),
``DIR/summary/<model>.json`` (validated against ``datasets/leaderboard/summary.schema.json``) and
``DIR/leaderboard.html``. ``--hub-eval-results HUB`` also writes ``HUB/<model>/.eval_results/*.yaml`` for
the model's Hugging Face Hub page: they are kept in ``DIR/hub_eval_results`` and ``HUB`` is a symbolic link to
it (:mod:`stereoprobe.output_links`), so the one swap of ``DIR`` replaces the tables and the Hub files together.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from stereoprobe.cli.common import (
    HelpFormatter,
    atomic_output_dir,
    info,
    out_dir,
    probability,
)
from stereoprobe.cli.common import bootstrap_count, finite_float, float_between, http_url, seed
from stereoprobe.probes import Setting, registered


def _settings() -> dict[str, Setting]:
    """Every registered probe's leaderboard settings (:attr:`stereoprobe.probes.ProbeDescriptor.settings`), by
    name: each becomes an option ``--<name>``."""
    return {name: s for d in registered() for name, s in d.settings.items()}  # type: ignore[misc]


def _setting_type(setting: Setting) -> Callable[[str], float]:
    """The argparse type of a setting's option: a number in its range."""
    if setting.low is None or setting.high is None:
        return finite_float
    if setting.open_range:
        def parse(text: str) -> float:
            value = finite_float(text)
            if not setting.low < value < setting.high:  # type: ignore[operator]
                raise argparse.ArgumentTypeError(f"{text!r} must be a number strictly between {setting.low:g} "
                                                 f"and {setting.high:g}")
            return value

        return parse
    return float_between(setting.low, setting.high)


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``leaderboard`` subcommand."""
    p = sub.add_parser(
        "leaderboard",
        help="models side by side: headline figures with 95%% intervals and paired model-vs-model tests",
        description="Put models side by side over every probe: one row per model with each probe's headline "
        "figures and 95% intervals, and paired model-vs-model tests on the items both models share (BH q-values "
        "over the whole table). Reads the output folders of stereoprobe associations (+ judge-report), dbb, "
        "globalbias and profiles, or folders above them, and lm-eval --log_samples output of dbb_mc, dbb_sg and "
        "globalbias. Writes DIR/leaderboard.csv and .parquet (model, then <probe>.<metric> with _ci_low and "
        "_ci_high), DIR/metrics.csv (long form), DIR/pairwise.csv, DIR/summary/<model>.json (versioned JSON "
        "schema) and DIR/leaderboard.html; with --hub-eval-results HUB also HUB/<model>/.eval_results/*.yaml for "
        "the model's Hugging Face Hub page. See docs/leaderboard.md.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="probe output folders (or folders above them); LABEL=PATH renames the folder's model "
                        "to LABEL, e.g. to compare two runs of one model")
    p.add_argument("--out", required=True, type=out_dir, metavar="DIR", help="output folder")
    for name, setting in _settings().items():
        p.add_argument(f"--{name.replace('_', '-')}", dest=f"setting_{name}", type=_setting_type(setting),
                       default=None, metavar=name.upper(),
                       help=f"{setting.help} (default: the value its probe's folders were made with, else "
                            f"{setting.default:g})")
    p.add_argument("--n-boot", type=bootstrap_count, default=2000, help="bootstrap draws of the intervals")
    p.add_argument("--seed", type=seed, default=0, help="bootstrap seed")
    p.add_argument("--level", type=probability, default=0.95, help="confidence level of the intervals")
    p.add_argument("--hub-eval-results", type=out_dir, metavar="HUB", default=None,
                   help="also write HUB/<model>/.eval_results/*.yaml (Hugging Face Hub evaluation results); "
                   "kept in DIR/hub_eval_results, HUB a link to it, so one swap replaces both")
    p.add_argument("--hub-model-id", action="append", default=None, metavar="LABEL=ORG/NAME",
                   help="with --hub-eval-results: write the files of the model LABEL under its Hugging Face Hub "
                        "model id, HUB/ORG__NAME/.eval_results/ (repeatable; other models keep their label's folder)")
    p.add_argument("--hub-source-url", default=None, type=http_url,
                   help="source URL written into the Hub files (e.g. where the logs are published)")
    p.add_argument("--accept-versions", default=None, metavar="NOTE",
                   help="rank runs of one task at different task versions (N of N-X: results not comparable) "
                        "side by side anyway, with NOTE shown on the page (default: refused in one line)")
    # it reads only probe output folders below its inputs: results/ --out results/leaderboard is fine
    p.set_defaults(func=_run, out_inside_inputs_ok=True)


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.leaderboard import build_leaderboard, write_leaderboard

    from stereoprobe.errors import InputError
    from stereoprobe.leaderboard.summary import parse_hub_model_ids

    if args.hub_model_id and args.hub_eval_results is None:
        raise InputError("--hub-model-id needs --hub-eval-results HUB (the folder the Hub files are written to)")
    settings = {name: getattr(args, f"setting_{name}") for name in _settings()}
    lb = build_leaderboard(args.inputs, n_boot=args.n_boot, seed=args.seed, level=args.level,
                           settings={k: v for k, v in settings.items() if v is not None},
                           accept_versions=args.accept_versions)
    hub_ids = parse_hub_model_ids(args.hub_model_id, sorted(map(str, lb.wide["model"])))
    if args.hub_eval_results is not None:  # written inside --out, linked from HUB: one swap replaces both
        from stereoprobe.output_links import HUB_ENTRY, carry_entries, link_dir, prepare_linked_dir

        with atomic_output_dir(args.out) as tmp:
            prepare_linked_dir(args.hub_eval_results, args.out)
            write_leaderboard(lb, tmp, hub_dir=tmp / HUB_ENTRY, hub_source_url=args.hub_source_url,
                              hub_model_ids=hub_ids)
            carry_entries(tmp / HUB_ENTRY, args.out)  # the user's own files in HUB stay
        link_dir(args.hub_eval_results, Path(args.out) / HUB_ENTRY)
    else:
        with atomic_output_dir(args.out) as tmp:
            write_leaderboard(lb, tmp)
    sig = int((lb.pairwise["q_value"] < 0.05).sum()) if len(lb.pairwise) else 0
    info(f"{len(lb.wide)} model(s), {lb.metrics['probe'].nunique()} probe(s); {len(lb.pairwise)} paired "
         f"comparison(s), {sig} with q < 0.05 -> {Path(args.out) / 'leaderboard.html'}")
    return 0
