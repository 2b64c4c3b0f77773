"""``stereoprobe globalbias`` (APX bias scores, flags, validation) and ``stereoprobe profiles`` (character
profiles: SVM distinguishability and top words)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "globalbias",
        help="GlobalBias: APX, bias scores, reference flags, stricter test and validation from logs or CSVs",
        description="Score GlobalBias sentence likelihoods (inspect logs of the globalbias task, lm-eval "
        "--log_samples output, or CSVs of perplexities/APX) into DIR/bias_scores.csv and DIR/report.html.",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="log files/folders, lm-eval samples .jsonl, CSVs")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--measure", choices=["token", "byte"], default="token",
                   help="token perplexity (paper) or byte-normalised perplexity = 2**bits-per-byte")
    p.add_argument("--tokenizer", default=None, help="tokenizer (hub id or folder) to count tokens of lm-eval samples")
    p.add_argument("--exact", action="store_true",
                   help="no reference rounding (APX group ratio to 3 d.p., group means to 2 d.p.)")
    p.add_argument("--test", choices=["welch", "permutation"], default="welch", help="stricter test (names as units)")
    p.add_argument("--alpha", type=float, default=0.05, help="FDR level of the stricter test (Benjamini-Hochberg)")
    p.add_argument("--permutations", type=int, default=2000, help="permutations for --test permutation")
    p.add_argument("--test-scale", choices=["log", "minmax"], default="log",
                   help="name-level statistic: group-centred log perplexity (default) or min-max normalised APX")
    p.add_argument("--validation-templates", default="1",
                   help="templates of the validation, e.g. 1,2,3 for the paper's normalised average (default 1, the code)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_run_globalbias)

    q = sub.add_parser(
        "profiles",
        help="GlobalBias character profiles: SVM distinguishability, leave-one-feature-out, JSD top words",
        description="Analyse character profiles (inspect logs of globalbias_profiles, or CSVs in the upstream "
        "generation-output layout) into DIR/classification.csv, DIR/top_words.csv and DIR/report.html.",
    )
    q.add_argument("inputs", nargs="+", metavar="INPUT", help="log files/folders or profile CSVs")
    q.add_argument("--out", required=True, help="output folder")
    q.add_argument("--permutations", type=int, default=100, help="label permutations for the test against chance")
    q.add_argument("--folds", type=int, default=5, help="folds of the cross-validated accuracy")
    q.add_argument("--no-feature-ablation", action="store_true", help="skip leave-one-feature-group-out")
    q.add_argument("--classifier", choices=["svc", "linear-ovr"], default="svc",
                   help="svc: SVC() defaults as the reference code (one-vs-one); linear-ovr: one-vs-rest linear SVMs")
    q.add_argument("--seed", type=int, default=42)
    q.set_defaults(func=_run_profiles)


def _run_globalbias(args: argparse.Namespace) -> int:
    from stereoprobe.globalbias.report import run_globalbias

    tok = None
    if args.tokenizer:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(args.tokenizer)
    run_globalbias(
        args.inputs, args.out, measure=args.measure, tokenizer=tok, faithful_rounding=not args.exact,
        test_method=args.test, alpha=args.alpha, n_permutations=args.permutations, seed=args.seed,
        test_scale=args.test_scale,
        validation_templates=tuple(int(t) for t in str(args.validation_templates).split(",")),
    )
    return 0


def _run_profiles(args: argparse.Namespace) -> int:
    from stereoprobe.globalbias.profiles_report import run_profiles

    run_profiles(args.inputs, args.out, n_permutations=args.permutations, folds=args.folds,
                 ablation=not args.no_feature_ablation, seed=args.seed, classifier=args.classifier)
    return 0
