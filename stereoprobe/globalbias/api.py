"""The Python API of ``stereoprobe globalbias`` and ``stereoprobe profiles``: inputs in, tables (and report) out.

    from stereoprobe.globalbias import GlobalBiasOptions, ProfilesOptions, analyze, analyze_profiles, write
    result = analyze(["logs/globalbias"], GlobalBiasOptions(test_method="permutation"))   # nothing written
    result.tables["bias_scores"]                # DataFrame per table name (globalbias.contract.TABLES)
    write(result, "results/globalbias")         # CSV + Parquet, report.html, run_info.json
    write(analyze_profiles(["logs/profiles"], ProfilesOptions()), "results/profiles")

:func:`analyze` reads (through :mod:`stereoprobe.globalbias.inputs`, complete units only:
:func:`~stereoprobe.globalbias.completeness.split_complete`) and computes
(:func:`stereoprobe.globalbias.compute.compute`, per model :func:`~stereoprobe.globalbias.compute.compute_model`;
the :class:`GlobalBiasOptions` passed whole); :func:`analyze_profiles` reads
(:func:`~stereoprobe.globalbias.profiles_report.read_profiles`) and computes
(:func:`stereoprobe.globalbias.profiles_compute.compute_profiles`, the :class:`ProfilesOptions` passed whole);
:func:`write` writes either probe's result (:func:`~stereoprobe.globalbias.report.write_globalbias`,
:func:`~stereoprobe.globalbias.profiles_report.write_profiles`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stereoprobe.globalbias.completeness import split_complete
from stereoprobe.globalbias.compute import GlobalBiasResult, compute
from stereoprobe.globalbias.inputs import read_sentences
from stereoprobe.globalbias.options import GlobalBiasOptions, ProfilesOptions
from stereoprobe.globalbias.profiles_compute import ProfilesResult, compute_profiles
from stereoprobe.globalbias.profiles_report import read_apx_scores, read_profiles, write_profiles
from stereoprobe.globalbias.report import write_globalbias
from stereoprobe.inputs import Progress, no_progress

__all__ = ["GlobalBiasOptions", "GlobalBiasResult", "ProfilesOptions", "ProfilesResult", "analyze",
           "analyze_profiles", "write"]


def analyze(inputs: Iterable[str | Path], options: GlobalBiasOptions = GlobalBiasOptions(), *,
            tokenizer: Any = None, progress: Progress = no_progress) -> GlobalBiasResult:
    """GlobalBias' tables from logs, lm-eval samples or sentence tables (``tokenizer``: counts the tokens of
    lm-eval samples for ``measure="token"``). Only complete group x descriptor units enter the statistics.
    ``progress``: the input layer's progress callback (the command line draws a bar)."""
    inputs = list(inputs)
    sentences, read = read_sentences(inputs, measure=options.measure, tokenizer=tokenizer, progress=progress)
    sentences, incomplete = split_complete(sentences, read.expected)
    return compute(sentences, incomplete, read, options, sources=inputs, progress=progress)


def analyze_profiles(inputs: Iterable[str | Path], options: ProfilesOptions = ProfilesOptions(), *,
                     apx_scores: str | Path | None = None, progress: Progress = no_progress) -> ProfilesResult:
    """The character profiles' tables from logs of ``globalbias_profiles`` or profile tables; ``apx_scores``:
    the ``bias_scores`` table (or output folder) of ``stereoprobe globalbias`` for the religion consistency
    table (paper Table 8). ``progress``: the input layer's progress callback (the command line draws a bar)."""
    apx = read_apx_scores(apx_scores) if apx_scores is not None else None
    read = read_profiles(inputs, progress=progress)
    return compute_profiles(read.profiles, read.outcomes, options, apx=apx, log_stats=read.log_stats,
                            sources=read.sources, progress=progress)


def write(result: GlobalBiasResult | ProfilesResult, out: str | Path) -> Path:
    """Write a result of :func:`analyze` or :func:`analyze_profiles` (tables, ``run_info.json``,
    ``report.html``) into ``out``; return ``out``."""
    if isinstance(result, ProfilesResult):
        return write_profiles(result, out)
    return write_globalbias(result, out)
