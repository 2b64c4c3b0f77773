"""The Python API of ``stereoprobe associations``: stories in, association tables (and report) out.

    from stereoprobe.stereotales.mining import AssociationOptions, analyze, write
    from stereoprobe.stereotales.mining.config import MiningConfig

    run = analyze(["logs/"], AssociationOptions(MiningConfig(), by_language=True))
    run.tables["associations"]          # DataFrame, one row per association passing the paper's filter
    write(run, "results/associations")   # CSV + Parquet + run_info.json + report.html

:func:`analyze` reads the stories (:func:`~stereoprobe.stereotales.mining.stories.read_stories`) and does every
computation, returning the tables as DataFrames; :func:`write` only writes them (the command line writes into
a temporary folder that replaces ``--out`` at the end).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.inputs import Progress, Step, no_progress, no_step
from stereoprobe.report.html import SVG_KEY
from stereoprobe.report.run_info import RUN_INFO
from stereoprobe.stereotales.contract import ALL_SLICE, TABLES
from stereoprobe.stereotales.extraction.agreement import extractor_agreement_table
from stereoprobe.stereotales.mining import tables as T
from stereoprobe.stereotales.mining.aggregate import aggregate_across_languages, aggregate_across_models
from stereoprobe.stereotales.mining.associations import mine_associations, mine_global_and_by_language
from stereoprobe.stereotales.mining.config import MiningConfig, config_dict
from stereoprobe.stereotales.mining.report import write_associations_report
from stereoprobe.stereotales.mining.stories import Stories, StoriesError, read_stories, read_story_excerpts

__all__ = ["AssociationOptions", "AssociationsResult", "analyze", "stale_tables", "write"]


@dataclass
class AssociationsResult:
    """The result of :func:`analyze`: ``tables`` (name -> DataFrame, names of
    :data:`~stereoprobe.stereotales.contract.TABLES`) and ``info`` (the run manifest written to
    ``run_info.json``: counts, models, languages, settings, p-value methods, timings)."""

    tables: dict[str, pd.DataFrame]
    info: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The one-line console summary of the run."""
        i = self.info
        return (
            f"{i['stories']} stories ({i['refused']} refused) from {len(i['models'])} model(s), "
            f"{len(i['languages'])} language(s); {i['pair_tests']} attribute-pair tests; "
            f"{i['associations_global']} global associations, {i['associations']} in all slices"
            + _not_analysed(i.get("issues") or {})
        )


def _not_analysed(counts: dict[str, int]) -> str:
    """"; N samples not analysed (kind: n, ...)" for the console line, "" when every sample was used."""
    n = sum(counts.values())
    if not n:
        return ""
    kinds = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    return f"; {n} sample(s) not analysed ({kinds}; input_issues.csv lists them)"


def _mine(frame: pd.DataFrame, attributes: list[str], config: MiningConfig, by_language: bool,
          timings: dict[str, float], progress: Progress) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pair and value tests of the global run (languages pooled), plus the per-language slices if asked (both
    in one pass, :func:`mine_global_and_by_language`)."""
    t = time.perf_counter()
    if not by_language:
        res = mine_associations(frame, attributes, config, by_language=False, progress=progress)
        timings["mine_global_s"] = time.perf_counter() - t
        return res.pair_tests, res.value_tests
    res, res_l = mine_global_and_by_language(frame, attributes, config, progress=progress)
    pairs = [res.pair_tests, res_l.pair_tests[res_l.pair_tests["slice"] != ALL_SLICE]]
    values = [res.value_tests, res_l.value_tests[res_l.value_tests["slice"] != ALL_SLICE]]
    timings["mine_s"] = time.perf_counter() - t
    return pd.concat(pairs, ignore_index=True), pd.concat(values, ignore_index=True)


def _tables(stories: Stories, pair_tests: pd.DataFrame, value_tests: pd.DataFrame, by_language: bool) -> dict[str, pd.DataFrame]:
    frame, attributes = stories.frame, stories.attributes
    models = sorted(frame["model"].unique())
    associations = T.associations_table(value_tests)
    across = aggregate_across_models(value_tests)
    # models_total = models with stories in the slice (value_tests only knows models with significant pairs)
    per_slice_models = {ALL_SLICE: len(models), **frame.groupby("language", observed=True)["model"].nunique().to_dict()}
    across["models_total"] = across["slice"].map(per_slice_models).astype("int64")
    tables: dict[str, pd.DataFrame] = {
        "associations": associations,
        "associations_across_models": T.with_association_id(across),
        "explorer_global": T.explorer_table(associations, n_models=len(models)),
        "pair_tests": pair_tests,
        "value_tests": value_tests,
        "attribute_distributions": T.attribute_distributions(frame, attributes),
        "attribute_distributions_by_scenario": T.attribute_distributions_by_scenario(frame, attributes),
        "refusal_rates": T.refusal_rates(frame, stories.issues),
        "unknown_rates": T.unknown_rates(frame, attributes),
        "input_issues": stories.issues,
        "input_sources": stories.sources,
    }
    if by_language:
        # every language of the input gets a Jaccard row, also one without any significant pair
        per_assoc, jac, specific = aggregate_across_languages(value_tests, languages=sorted(frame["language"].unique()))
        tables["associations_by_language"] = T.with_association_id(per_assoc)
        tables["language_jaccard"] = jac.rename_axis("language").reset_index()
        tables["language_specific"] = T.with_association_id(specific)
    return tables


@dataclass(frozen=True)
class AssociationOptions:
    """Settings of ``stereoprobe associations``: ``config`` (the paper's statistical constants,
    :class:`~stereoprobe.stereotales.mining.config.MiningConfig`); ``by_language`` adds one slice per (model,
    language) and the cross-language tables (Jaccard, language-specific associations); ``examples`` stories
    (excerpts of ``excerpt_chars`` characters) are kept per association; ``note`` is shown at the top of the
    report."""

    config: MiningConfig = MiningConfig()
    by_language: bool = False
    examples: int = 3
    excerpt_chars: int = 400
    note: str | None = None
    accept_versions: str | None = None  # the note accepting logs of different task versions (--accept-versions)

    def __post_init__(self) -> None:
        if self.examples < 0 or self.excerpt_chars < 1:
            raise ValueError("examples must be >= 0 and excerpt_chars >= 1")


def analyze(inputs: Sequence[str | Path], options: AssociationOptions = AssociationOptions(), *,
            progress: Progress = no_progress, step: Step = no_step) -> AssociationsResult:
    """Read StereoTales stories (inspect eval logs of the ``stereotales`` task, or the public release as
    Parquet/CSV) and run the paper's two-step association statistics with ``options``; ``progress`` reports
    the reading and the tests (:data:`stereoprobe.inputs.Progress`, e.g. the CLI's progress bar), ``step``
    the reading of the example stories (:data:`stereoprobe.inputs.Step`, e.g. the CLI's spinner); both
    silent by default. Bad input raises
    :class:`~stereoprobe.stereotales.mining.stories.StoriesError` (an ``InputError``) naming the file.
    """
    config, by_language, examples = options.config, options.by_language, options.examples
    excerpt_chars, note = options.excerpt_chars, options.note
    timings: dict[str, float] = {}
    t = time.perf_counter()
    stories = read_stories(inputs, progress=progress, accept_versions=options.accept_versions)
    timings["read_s"] = time.perf_counter() - t
    frame, attributes = stories.frame, stories.attributes
    if frame.empty:
        counts = stories.issues["kind"].value_counts().to_dict() if len(stories.issues) else {}
        raise StoriesError(f"no usable stories in {[str(i) for i in inputs]} (samples not used, by reason: {counts})")
    pair_tests, value_tests = _mine(frame, attributes, config, by_language, timings, progress)
    t = time.perf_counter()
    tables = _tables(stories, pair_tests, value_tests, by_language)
    ex = T.pick_examples(frame, tables["associations"], per_association=examples)
    keys = {(r.model, r.sample_id, int(r.epoch)) for r in ex.itertuples(index=False)}
    if keys:
        with step(f"reading {len(keys)} example stories"):
            excerpts = read_story_excerpts(inputs, keys, max_chars=excerpt_chars)
    else:
        excerpts = {}
    ex["excerpt"] = [excerpts.get((r.model, r.sample_id, int(r.epoch)), "") for r in ex.itertuples(index=False)]
    tables["association_examples"] = ex
    tables["extractor_agreement"] = extractor_agreement_table(_log_files(stories), attributes)
    timings["tables_s"] = time.perf_counter() - t
    info = _manifest(inputs, stories, tables, config, by_language, note, timings)
    return AssociationsResult(tables, info)


def _log_files(stories: Stories) -> list[Path]:
    """The eval logs the stories were read from (none for the release tables, which hold no extractor's own
    answers: their ``extractor_agreement`` table is empty)."""
    src = stories.sources
    if src.empty or "kind" not in src.columns:
        return []
    used = src["used"].fillna(False).astype(bool) if "used" in src.columns else True
    return [Path(p) for p in src.loc[(src["kind"] == "log") & used, "path"]]


def _manifest(inputs: Sequence[str | Path], stories: Stories, tables: dict[str, pd.DataFrame], config: MiningConfig,
              by_language: bool, note: str | None, timings: dict[str, float]) -> dict[str, Any]:
    from stereoprobe import __version__

    from stereoprobe.report.run_info import command_line, version_note
    from stereoprobe.report.run_settings import log_run_settings

    frame, pair_tests, associations = stories.frame, tables["pair_tests"], tables["associations"]
    issue_counts = stories.issues["kind"].value_counts().to_dict() if len(stories.issues) else {}
    return {
        "probe": "stereotales",
        "created": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "command": command_line("associations"),  # shell-quoted; None outside `stereoprobe associations`
        "stereoprobe_version": __version__,
        "inputs": [str(i) for i in inputs],
        "runs": log_run_settings(inputs),  # each run's -M arguments, model roles, generation settings
        "read": stories.read_summary or None,
        "by_language": bool(by_language),
        "stories": int(len(frame)),
        "refused": int(stories.n_refused),
        "extraction_failed": int(frame["extraction_failed"].sum()),
        "issues": {str(k): int(v) for k, v in issue_counts.items()},
        "models": sorted(frame["model"].astype(str).unique()),
        "languages": sorted(frame["language"].astype(str).unique()),
        "attributes": list(stories.attributes),
        "config": config_dict(config),
        "p_methods": {str(k): int(v) for k, v in pair_tests["p_method"].value_counts().items()},
        "pair_tests": int(len(pair_tests)),
        "associations": int(len(associations)),
        "associations_global": int((associations["slice"] == ALL_SLICE).sum()),
        "subtitle": note or None,
        "timings": {k: round(v, 3) for k, v in timings.items()},
        **({"version_note": version_note()} if version_note() else {}),  # --accept-versions (cli._versions)
    }


def _jsonable_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Nested values (tables, value lists) as JSON strings, so CSV and Parquet hold the same text."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object and out[c].map(lambda v: isinstance(v, (list, tuple, dict, np.ndarray))).any():
            out[c] = out[c].map(
                lambda v: json.dumps(v.tolist() if isinstance(v, np.ndarray) else v, default=lambda x: x.tolist()
                                     if hasattr(x, "tolist") else str(x))
                if isinstance(v, (list, tuple, dict, np.ndarray)) else v
            )
    return out


def write(run: AssociationsResult, out_dir: str | Path, *, report: bool = True, step: Step = no_step,
          svg: bool = False) -> Path:
    """Write every table (CSV + Parquet), ``run_info.json`` and, with ``report``, ``report.html`` into
    ``out_dir`` (created); returns ``out_dir``. ``step`` reports the report's writing (:data:`stereoprobe.inputs.Step`,
    e.g. the CLI's spinner; default: silent). ``svg``: the report's figures also as SVG files (recorded in
    ``run_info.json``, so a rebuilt report keeps them); PNG only by default."""
    from stereoprobe.redact import redact  # no credential of a run's settings or error messages reaches the file
    from stereoprobe.tables import write_table

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, df in run.tables.items():
        write_table(_jsonable_columns(df), out, name)
    info = run.info
    info.pop(SVG_KEY, None)
    if svg:
        info[SVG_KEY] = True
    (out / RUN_INFO).write_text(json.dumps(redact(info), indent=2, default=str), encoding="utf-8")
    if report:
        t = time.perf_counter()
        with step("writing the association report"):
            write_associations_report(out)
        info.setdefault("timings", {})["report_s"] = round(time.perf_counter() - t, 3)
        (out / RUN_INFO).write_text(json.dumps(redact(info), indent=2, default=str), encoding="utf-8")
    return out


def stale_tables(run: AssociationsResult) -> list[str]:
    """Table names of :data:`TABLES` this run did not write (an earlier run's copies in the same folder are
    stale, e.g. the per-language tables of an earlier ``--by-language`` run)."""
    return [name for name in TABLES if name not in run.tables]
