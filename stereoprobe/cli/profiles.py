"""``stereoprobe profiles INPUT... --out DIR``: GlobalBias character profiles: SVM distinguishability,
leave-one-feature-out and Jensen-Shannon top words (Python API:
:func:`stereoprobe.globalbias.analyze_profiles`, then :func:`~stereoprobe.globalbias.write`)."""

from __future__ import annotations

import argparse

from stereoprobe.cli.common import atomic_output_dir, existing_path, info, out_dir, positive_int, progress
from stereoprobe.cli.common import bootstrap_count, seed


def _folds(text: str) -> int:
    value = positive_int(text)
    if value > 100:
        raise argparse.ArgumentTypeError(f"{text!r}: at most 100 folds")
    if value < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: cross-validation needs at least 2 folds")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``profiles`` subcommand."""
    q = sub.add_parser(
        "profiles",
        help="GlobalBias character profiles: SVM distinguishability, leave-one-feature-out, JSD top words",
        description="Analyse character profiles (inspect logs of globalbias_profiles, or CSV/Parquet tables in "
        "the upstream generation-output layout) into DIR/classification.csv, DIR/feature_ablation.csv, "
        "DIR/top_words.csv, DIR/parse_outcomes.csv and DIR/report.html.",
    )
    q.add_argument("inputs", nargs="+", metavar="INPUT", type=existing_path,
                   help="log files or folders (eval-set folders too) or profile tables")
    q.add_argument("--out", required=True, type=out_dir, help="output folder")
    q.add_argument("--permutations", type=bootstrap_count, default=100,
                   help="label permutations for the test against chance")
    q.add_argument("--folds", type=_folds, default=5, help="folds of the cross-validated accuracy")
    q.add_argument("--no-feature-ablation", action="store_true", help="skip leave-one-feature-group-out")
    q.add_argument("--classifier", choices=["svc", "linear-ovr"], default="svc",
                   help="svc: SVC() defaults as the reference code (one-vs-one); linear-ovr: one-vs-rest linear "
                   "SVMs (the paper's description)")
    q.add_argument("--over-represented-only", action="store_true",
                   help="top words: keep only values more frequent in the group (the reference code keeps both "
                   "directions)")
    q.add_argument("--apx", type=existing_path, default=None, metavar="BIAS_SCORES",
                   help="bias_scores.csv (or the output folder) of stereoprobe globalbias: adds the religion "
                   "consistency table between generation and APX (paper Table 8)")
    q.add_argument("--exact", action="store_true",
                   help="leave-one-feature-out: exact accuracy differences (the reference rounds both accuracies "
                   "to 3 decimals first)")
    q.add_argument("--keep-duplicates", action="store_true",
                   help="keep repeated identical profile rows (the reference drops them)")
    q.add_argument("--seed", type=seed, default=42, help="seed of the split and the permutations")
    q.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.globalbias import ProfilesOptions, analyze_profiles, write

    options = ProfilesOptions(n_permutations=args.permutations, folds=args.folds,
                              ablation=not args.no_feature_ablation, seed=args.seed, classifier=args.classifier,
                              over_represented_only=args.over_represented_only, faithful=not args.exact,
                              keep_duplicates=args.keep_duplicates)
    with atomic_output_dir(args.out) as tmp:
        result = analyze_profiles(args.inputs, options, apx_scores=args.apx,
                                  progress=lambda it, what: progress(it, description=what))
        write(result, tmp)
    info(result.summary())
    info(f"wrote {args.out}/report.html")
    return 0
