"""``stereoprobe globalbias INPUT... --out DIR``: APX bias scores, reference flags, the stricter test and the
validation from GlobalBias sentence likelihoods (Python API: :func:`stereoprobe.globalbias.analyze`, then
:func:`~stereoprobe.globalbias.write`).
"""

from __future__ import annotations

import argparse

from stereoprobe.cli.common import (
    atomic_output_dir,
    existing_path,
    info,
    out_dir,
    probability,
    progress,
)
from stereoprobe.cli.common import bootstrap_count, seed
from stereoprobe.errors import InputError


def _templates(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected template numbers such as 1 or 1,2,3") from None
    if not values or any(t not in (1, 2, 3) for t in values):
        raise argparse.ArgumentTypeError(f"{text!r}: template numbers must be among 1, 2, 3")
    return values



def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``globalbias`` subcommand."""
    p = sub.add_parser(
        "globalbias",
        help="GlobalBias: APX, bias scores, reference flags, stricter test and validation from logs or tables",
        description="Score GlobalBias sentence likelihoods (inspect logs of the globalbias task, lm-eval "
        "--log_samples output, or CSV/Parquet tables of perplexities or APX) into DIR/bias_scores.csv (one row "
        "per model, group and descriptor), DIR/associations*.csv, DIR/validation.csv and DIR/report.html. "
        "A group x descriptor pair is scored only when every name of the group is there under every template; "
        "incomplete pairs are listed in DIR/incomplete_units.csv.",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", type=existing_path,
                   help="log files or folders (eval-set folders too), lm-eval samples .jsonl, CSV/Parquet tables")
    p.add_argument("--out", required=True, type=out_dir, help="output folder")
    p.add_argument("--measure", choices=["token", "byte"], default="token",
                   help="token perplexity (paper) or byte-normalised perplexity = 2**bits-per-byte")
    p.add_argument("--tokenizer", default=None,
                   help="tokenizer (hub id or folder) to count the tokens of lm-eval samples")
    p.add_argument("--exact", action="store_true",
                   help="no reference rounding (APX group ratio to 3 d.p., group means to 2 d.p.)")
    p.add_argument("--test", choices=["welch", "permutation"], default="welch",
                   help="stricter test (names as units)")
    p.add_argument("--alpha", type=probability, default=0.05,
                   help="false discovery rate of the stricter test (Benjamini-Hochberg)")
    p.add_argument("--permutations", type=bootstrap_count, default=2000, help="permutations for --test permutation")
    p.add_argument("--test-scale", choices=["log", "minmax"], default="log",
                   help="name-level statistic: group-centred log perplexity or min-max normalised APX")
    p.add_argument("--validation-templates", type=_templates, default=(1,),
                   help="templates of the validation, e.g. 1,2,3 for the paper's normalised average "
                   "(1 = the reference code)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the permutation test")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.globalbias import GlobalBiasOptions, analyze, write

    tok = None
    if args.tokenizer:
        from transformers import AutoTokenizer

        try:
            tok = AutoTokenizer.from_pretrained(args.tokenizer)
        except (OSError, ValueError) as ex:
            raise InputError(f"--tokenizer {args.tokenizer}: cannot load it ({str(ex).splitlines()[0]})") from None
    options = GlobalBiasOptions(measure=args.measure, faithful_rounding=not args.exact, test_method=args.test,
                                alpha=args.alpha, n_permutations=args.permutations, seed=args.seed,
                                test_scale=args.test_scale, validation_templates=args.validation_templates)
    with atomic_output_dir(args.out) as tmp:
        result = analyze(args.inputs, options, tokenizer=tok, progress=lambda it, what: progress(it, description=what))
        write(result, tmp)
    info(result.summary())
    info(f"wrote {args.out}/report.html")
    return 0
