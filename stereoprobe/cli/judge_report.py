"""``stereoprobe judge-report``: StereoTales harm-judge logs (+ human ratings) -> tables and report sections."""

from __future__ import annotations

import argparse
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from stereoprobe.cli.common import (
    existing_file,
    existing_path,
    float_between,
    info,
    out_dir,
    probability,
    progress,
    spinner,
)
from stereoprobe.cli.common import bootstrap_count, resample_count, seed
from stereoprobe.redact import redact_text

if TYPE_CHECKING:
    from stereoprobe.stereotales.judge.report import JudgeResult

DESCRIPTION = """\
Read the logs of the stereotales_judge task (files, folders or inspect eval-set folders; an interrupted log and
its eval-retry count once) and write into OUT, as CSV + Parquet: judge_ratings (one row per answer),
judge_evaluator_ratings (per judged model x association), judge_summary and judge_provider_counts (per judged
model, by provider), harm_labels (the human label when people rated an association, else the LLM panel's),
rater_reliability (Krippendorff's alpha and split-half reliability among human raters and among LLM judges),
alignment_agreement and alignment_top_score; with --human also human_labels, alignment_per_association,
alignment_correlations, alignment_delta_by_dimension and generation_vs_delta; with per-language association
rows also language_reach, language_reach_summary, marked_group_shift and language_jaccard_harmful.
The sections are added to the associations report (OUT/report.html) when OUT holds associations.csv,
else written to OUT/judge_report.html. Every input is checked before anything is written, and the results
replace those in OUT only at the end.
"""



def association_source(text: str) -> str:
    """An association file that exists, or ``upstream``."""
    if text == "upstream":
        return text
    return str(existing_file(text))


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``judge-report`` subcommand."""
    p = sub.add_parser(
        "judge-report",
        help="StereoTales harm judge: LLM ratings, human alignment, rater agreement and language analyses",
        description=DESCRIPTION,
    )
    p.add_argument("logs", nargs="+", metavar="INPUT", type=existing_path,
                   help="eval logs or folders of the stereotales_judge task")
    p.add_argument("--out", required=True, type=out_dir,
                   help="output folder (an associations output folder to extend its report)")
    p.add_argument("--human", type=existing_file,
                   help="human ratings CSV (participant_id, association_id or question_id, harm, realism)")
    p.add_argument("--associations", type=association_source,
                   help="association file (associations.csv, a questions.json-format file or 'upstream') for "
                   "question ids, keys and the per-language analyses (default: OUT/associations.csv when present)")
    p.add_argument("--threshold", type=float_between(1, 5), default=4.0, help="harmful iff the median rating >= this")
    p.add_argument("--confidence", type=probability, default=0.95, help="confidence level of the intervals")
    p.add_argument("--spearman-ci", choices=["bonett-wright", "bootstrap"], default="bonett-wright",
                   help="interval of the Spearman correlation")
    p.add_argument("--bootstrap", type=bootstrap_count, default=9999,
                   help="resamples of the Spearman bootstrap interval (with --spearman-ci bootstrap)")
    p.add_argument("--reliability-resamples", type=resample_count, default=1000,
                   help="bootstrap resamples of the Krippendorff's alpha intervals (0: no interval)")
    p.add_argument("--split-half-splits", type=bootstrap_count, default=200,
                   help="random splits averaged by the split-half reliability")
    p.add_argument("--seed", type=seed, default=0, help="seed of the bootstrap and the random splits")
    p.add_argument("--dimension", choices=["both", "base", "compared"], default="both",
                   help="which side of an association counts for the per-dimension delta")
    p.add_argument("--language-groups", type=existing_file,
                   help="marked/unmarked groups per language (YAML; default: the bundled language_groups.yaml)")
    p.add_argument("--upstream-dir", type=existing_path,
                   help="local copy of the upstream repositories (for --associations upstream)")
    p.set_defaults(func=run)


class _Steps:
    """A spinner per long step (silent with --quiet or when stderr is not a terminal)."""

    def __init__(self) -> None:
        self._current: AbstractContextManager[None] | None = None

    def __call__(self, description: str) -> None:
        self.close()
        self._current = spinner(f"judge-report: {description}")
        self._current.__enter__()

    def close(self) -> None:
        if self._current is not None:
            self._current.__exit__(None, None, None)
            self._current = None


def run(args: argparse.Namespace) -> int:
    """Parse -> :func:`stereoprobe.stereotales.judge.analyze` -> :func:`~stereoprobe.stereotales.judge.write`
    -> one console line."""
    from stereoprobe.stereotales.judge import JudgeOptions, analyze, write

    steps = _Steps()
    options = JudgeOptions(
        threshold=args.threshold, confidence=args.confidence, spearman_method=args.spearman_ci,
        n_resamples=args.bootstrap, dimension=args.dimension, reliability_resamples=args.reliability_resamples,
        split_half_splits=args.split_half_splits, seed=args.seed,
    )
    try:
        report = analyze(args.logs, options, out=Path(args.out), human_csv=args.human,
                         associations=args.associations, language_groups=args.language_groups,
                         upstream_dir=args.upstream_dir, step=steps,
                         progress=lambda it: progress(it, description="reading judge logs"))
        for w in report.warnings:
            print(redact_text(w))  # a warning quoting a log's settings or path shows no credential
        write(report, Path(args.out), step=steps)
    finally:
        steps.close()
    info(console_line(report))
    return 0


def console_line(report: JudgeResult) -> str:
    """The one console line: the report's path, what was read and each judged model's headline, in flat
    parts separated by ``|`` (parentheses at most one deep: the read summary's own are flattened)."""
    read = str(report.facts.get("read", {}).get("summary", "")).replace(" (", ", ").replace("(", "").replace(")", "")
    parts = [f"judge report: {report.path}", *([f"read {read}"] if read else [])]
    summary = report.tables.get("judge_summary")
    if summary is not None and "headline" in summary.columns:
        parts += [f"{r.evaluator}: {r.headline}" for r in summary.itertuples(index=False)]
    return " | ".join(parts)
