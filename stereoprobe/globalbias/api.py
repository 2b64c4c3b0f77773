"""The Python API of ``stereoprobe globalbias`` and ``stereoprobe profiles``: inputs in, tables (and report) out.

    from stereoprobe.globalbias import GlobalBiasOptions, ProfilesOptions, analyze, analyze_profiles, write
    result = analyze(["logs/globalbias"], GlobalBiasOptions(test_method="permutation"))   # nothing written
    result.tables["bias_scores"]                # DataFrame per table name (globalbias.contract.TABLES)
    write(result, "results/globalbias")         # CSV + Parquet, report.html, run_info.json
    write(analyze_profiles(["logs/profiles"], ProfilesOptions()), "results/profiles")

:func:`analyze` reads (through :mod:`stereoprobe.globalbias.inputs`) and computes
(:func:`stereoprobe.globalbias.report.compute_globalbias`, per model :func:`~stereoprobe.globalbias.report.analyse`);
:func:`write` writes either probe's result (:func:`~stereoprobe.globalbias.report.write_globalbias`,
:func:`~stereoprobe.globalbias.profiles_report.write_profiles`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.globalbias.profiles_report import ProfilesResult, compute_profiles, write_profiles
from stereoprobe.globalbias.report import GlobalBiasResult, compute_globalbias, write_globalbias
from stereoprobe.inputs import Progress, no_progress

__all__ = ["GlobalBiasOptions", "GlobalBiasResult", "ProfilesOptions", "ProfilesResult", "analyze",
           "analyze_profiles", "write"]


@dataclass(frozen=True)
class GlobalBiasOptions:
    """Settings of ``stereoprobe globalbias``: the perplexity ``measure`` (``token``, the paper's, or ``byte``),
    the reference rounding, the stricter test (``welch`` or ``permutation``, its FDR level ``alpha``,
    permutations, seed, ``test_scale``) and the templates of the validation."""

    measure: str = "token"
    faithful_rounding: bool = True
    test_method: str = "welch"
    alpha: float = 0.05
    n_permutations: int = 2000
    seed: int = 0
    test_scale: str = "log"
    validation_templates: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha must lie strictly between 0 and 1, got {self.alpha}")
        if self.n_permutations < 1:
            raise InputError(f"the number of permutations must be at least 1, got {self.n_permutations}")


@dataclass(frozen=True)
class ProfilesOptions:
    """Settings of ``stereoprobe profiles``: label permutations, cross-validation folds, the feature ablation,
    seed, classifier (``svc`` as the reference code, or ``linear-ovr``), top words' direction, the reference's
    rounding (``faithful``) and duplicate handling."""

    n_permutations: int = 100
    folds: int = 5
    ablation: bool = True
    seed: int = 42
    classifier: str = "svc"
    over_represented_only: bool = False
    faithful: bool = True
    keep_duplicates: bool = False

    def __post_init__(self) -> None:
        if self.n_permutations < 1:
            raise InputError(f"the number of permutations must be at least 1, got {self.n_permutations}")
        if self.folds < 2:
            raise InputError(f"cross-validation needs at least 2 folds, got {self.folds}")


def analyze(inputs: Iterable[str | Path], options: GlobalBiasOptions = GlobalBiasOptions(), *,
            tokenizer: Any = None, progress: Progress = no_progress) -> GlobalBiasResult:
    """GlobalBias' tables from logs, lm-eval samples or sentence tables (``tokenizer``: counts the tokens of
    lm-eval samples for ``measure="token"``). Only complete group x descriptor units enter the statistics.
    ``progress``: the input layer's progress callback (the command line draws a bar)."""
    o = options
    return compute_globalbias(inputs, measure=o.measure, tokenizer=tokenizer, faithful_rounding=o.faithful_rounding,
                              test_method=o.test_method, alpha=o.alpha, n_permutations=o.n_permutations,
                              seed=o.seed, test_scale=o.test_scale, validation_templates=o.validation_templates,
                              progress=progress)


def analyze_profiles(inputs: Iterable[str | Path], options: ProfilesOptions = ProfilesOptions(), *,
                     apx_scores: str | Path | None = None, progress: Progress = no_progress) -> ProfilesResult:
    """The character profiles' tables from logs of ``globalbias_profiles`` or profile tables; ``apx_scores``:
    the ``bias_scores`` table (or output folder) of ``stereoprobe globalbias`` for the religion consistency
    table (paper Table 8). ``progress``: the input layer's progress callback (the command line draws a bar)."""
    o = options
    return compute_profiles(inputs, n_permutations=o.n_permutations, folds=o.folds, ablation=o.ablation,
                            seed=o.seed, classifier=o.classifier, over_represented_only=o.over_represented_only,
                            apx_scores=apx_scores, faithful=o.faithful, keep_duplicates=o.keep_duplicates,
                            progress=progress)


def write(result: GlobalBiasResult | ProfilesResult, out: str | Path) -> Path:
    """Write a result of :func:`analyze` or :func:`analyze_profiles` (tables, ``run_info.json``,
    ``report.html``) into ``out``; return ``out``."""
    if isinstance(result, ProfilesResult):
        return write_profiles(result, out)
    return write_globalbias(result, out)
