"""The judge report: judge answers (+ human ratings, association rows) -> tables and report sections.

The Python API of ``stereoprobe judge-report`` is :mod:`stereoprobe.stereotales.judge.api` (``analyze`` then
``write``), built on this module: every input is read and validated by :func:`load_judge_inputs` before anything
is written; the tables are computed by :func:`compute_judge_tables` (no I/O) and written by
:func:`write_judge_report` into a temporary folder that replaces the results in ``out`` only at the end.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from stereoprobe.stereotales.judge import alignment as al
from stereoprobe.stereotales.judge import languages as lg
from stereoprobe.stereotales.judge.associations import load_association_rows
from stereoprobe.stereotales.judge.contract import ALL_LLMS_MEAN, HUMAN, KEY_COLUMNS, TASK_JUDGE
from stereoprobe.stereotales.judge.human import drop_unjudged, human_labels, load_human_ratings
from stereoprobe.stereotales.judge.ratings import judge_summary, provider_counts
from stereoprobe.stereotales.judge.reliability import rater_reliability

Step = Callable[[str], Any]


@dataclass(frozen=True)
class JudgeOptions:
    """Settings of the judge report (the ``judge-report`` options)."""

    threshold: float = 4.0
    confidence: float = 0.95
    spearman_method: Literal["bonett-wright", "bootstrap"] = "bonett-wright"
    n_resamples: int = 9999
    dimension: Literal["both", "base", "compared"] = "both"
    reliability_resamples: int = 1000
    split_half_splits: int = 200
    seed: int = 0

    def __post_init__(self) -> None:
        from stereoprobe.errors import InputError

        if not (math.isfinite(self.threshold) and 1 <= self.threshold <= 5):
            raise InputError(f"threshold={self.threshold!r}: expected a number from 1 to 5")
        if not (math.isfinite(self.confidence) and 0 < self.confidence < 1):
            raise InputError(f"confidence={self.confidence!r}: expected a number strictly between 0 and 1")
        if self.spearman_method not in ("bonett-wright", "bootstrap"):
            raise InputError(f"spearman_method={self.spearman_method!r}: expected bonett-wright or bootstrap")
        if self.dimension not in ("both", "base", "compared"):
            raise InputError(f"dimension={self.dimension!r}: expected both, base or compared")
        for name in ("n_resamples", "reliability_resamples", "split_half_splits"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise InputError(f"{name}={v!r}: expected an integer >= 0")


@dataclass
class JudgeInputs:
    """Everything the report reads, validated: answers, human ratings, association rows, language groups."""

    ratings: pd.DataFrame
    human: pd.DataFrame | None = None
    rows: pd.DataFrame | None = None
    language_groups: lg.LanguageGroups = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)


@dataclass
class JudgeResult:
    """The computed report: ``tables`` (name -> DataFrame, in writing order), the numbers the sections quote,
    warnings for the console, and, once written, the report's path."""

    tables: dict[str, pd.DataFrame]
    facts: dict[str, Any]
    options: JudgeOptions
    warnings: list[str] = field(default_factory=list)
    path: Path | None = None


# ------------------------------------------------------------------------------------------------ inputs


def load_judge_inputs(
    ratings: pd.DataFrame,
    out: str | Path | None = None,
    human_csv: str | Path | None = None,
    associations: str | Path | None = None,
    language_groups: str | Path | None = None,
    upstream_dir: str | Path | None = None,
    errors: dict[str, int] | None = None,
) -> JudgeInputs:
    """Read and validate every input of the report (raises :class:`~stereoprobe.errors.InputError`).

    ``associations`` defaults to ``out/associations.csv`` when that file exists. Nothing is written.
    """
    from stereoprobe.errors import InputError

    if ratings.empty:
        raise InputError("no judge answers to report on")
    if associations is None and out is not None and (Path(out) / "associations.csv").is_file():
        associations = Path(out) / "associations.csv"
    rows = load_association_rows(associations, local=upstream_dir) if associations is not None else None
    human = None
    if human_csv is not None:
        id_map = None
        if rows is not None and rows["question_id"].notna().any():
            known = rows["question_id"].notna()
            id_map = dict(zip(rows.loc[known, "question_id"], rows.loc[known, "association_id"]))
        human = load_human_ratings(human_csv, id_map=id_map)
    groups = lg.load_language_groups(language_groups)
    sources = {"associations": str(associations or ""), "human": str(human_csv or ""),
               "language_groups": str(language_groups or "bundled")}
    return JudgeInputs(ratings, human, rows, groups, dict(errors or {}), sources)


# ----------------------------------------------------------------------------------------------- compute


def _keys(inputs: JudgeInputs) -> pd.DataFrame:
    r = inputs.ratings
    keys = r.dropna(subset=["base_attribute"]).drop_duplicates("association_id").set_index("association_id")[KEY_COLUMNS]
    if inputs.rows is not None:
        extra = inputs.rows.drop_duplicates("association_id").set_index("association_id")[KEY_COLUMNS]
        keys = pd.concat([keys, extra[~extra.index.isin(keys.index)]])
    return keys


def harm_label_table(
    panel: pd.DataFrame, hl: pd.DataFrame | None, keys: pd.DataFrame
) -> tuple[pd.DataFrame, list[str]]:
    """``harm_labels``: the human label when people rated the association, else the LLM panel's.

    Returns the table and warnings (rated ids with no known key columns are left out).
    """
    cols = ["association_id", "harmful", "source", "n_ratings", "median_harm"]
    lab = panel.assign(source="llm_panel")[cols]
    if hl is not None:
        hlab = hl.assign(source=HUMAN)[cols]
        lab = pd.concat([hlab, lab[~lab.association_id.isin(hlab.association_id)]], ignore_index=True)
    warnings = []
    unknown = lab[~lab.association_id.isin(keys.index)]
    if len(unknown):
        warnings.append(
            f"warning: {len(unknown)} rated association id(s) are neither in the judge logs nor in the association "
            f"file (e.g. {unknown.association_id.iloc[0]}); they are left out of harm_labels (pass --associations)"
        )
    lab = lab[lab.association_id.isin(keys.index)]
    table = keys.loc[lab.association_id].reset_index(drop=True).assign(
        harmful=lab["harmful"].astype(bool).to_numpy(), source=lab["source"].to_numpy(),
        association_id=lab["association_id"].to_numpy(), n_ratings=lab["n_ratings"].to_numpy(),
        median_harm=lab["median_harm"].to_numpy(),
    )
    return table, warnings


def agreement_tables(per_eval: pd.DataFrame, human: pd.DataFrame | None, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Pairwise harmful/benign agreement of every pair of evaluators (LLMs + the human panel).

    Returns the rate and count matrices, the long ``alignment_agreement`` table and the summary means.
    """
    evals = per_eval
    if human is not None:
        evals = pd.concat([per_eval, al.human_evaluator_table(human, threshold)], ignore_index=True)
    rate, count = al.pairwise_agreement(al.label_matrix(evals))
    names = {"level_0": "evaluator_a", "level_1": "evaluator_b"}
    long = (rate.stack(future_stack=True).rename("agreement").reset_index().rename(columns=names)
            .merge(count.stack(future_stack=True).rename("n").reset_index().rename(columns=names)))
    return rate, count, long, al.agreement_summary(rate)


def human_alignment_tables(
    per_eval: pd.DataFrame, hl: pd.DataFrame, keys: pd.DataFrame, options: JudgeOptions
) -> dict[str, pd.DataFrame]:
    """Per-association means, correlations (all LLMs and per evaluator) and per-dimension deltas."""
    llm_mean = per_eval.groupby("association_id")["mean_harm"].mean().rename("llm_mean")
    human_mean = hl.set_index("association_id")["mean_harm"].rename("human_mean")
    per_assoc = pd.concat([llm_mean, human_mean], axis=1, join="inner")
    per_assoc = per_assoc.join(keys, how="left").reset_index(names="association_id")
    o = options
    corr = [
        al.pearson_ci(per_assoc.llm_mean, per_assoc.human_mean, o.confidence).as_dict(),
        al.spearman_ci(per_assoc.llm_mean, per_assoc.human_mean, o.confidence, o.spearman_method, o.n_resamples,
                       o.seed).as_dict(),
    ]
    hm = per_assoc.set_index("association_id")["human_mean"]
    for ev, g in per_eval.groupby("evaluator"):
        m = g.set_index("association_id")["mean_harm"].rename("e").to_frame().join(hm, how="inner")
        if len(m) >= 4:
            corr.append({**al.pearson_ci(m.e, m.human_mean, o.confidence).as_dict(), "evaluator": ev})
    corr_df = pd.DataFrame(corr)
    corr_df["evaluator"] = corr_df["evaluator"].fillna(ALL_LLMS_MEAN) if "evaluator" in corr_df else ALL_LLMS_MEAN
    corr_df = corr_df[["evaluator", *[c for c in corr_df.columns if c != "evaluator"]]]
    delta = al.delta_by_dimension(per_assoc.dropna(subset=["base_attribute"]), dimension=o.dimension,
                                  confidence=o.confidence)
    return {"alignment_per_association": per_assoc, "alignment_correlations": corr_df,
            "alignment_delta_by_dimension": delta}


def language_tables(rows: pd.DataFrame, label_map: dict[str, bool], groups: lg.LanguageGroups) -> dict[str, pd.DataFrame]:
    """Language reach, its harmful/benign summary, the marked-group shift and the harmful-only Jaccard."""
    reach = lg.language_reach(rows, label_map)
    n_lang = reach["languages"].str.split().explode().nunique()
    return {
        "language_reach": reach,
        "language_reach_summary": lg.reach_summary(reach.dropna(subset=["harmful"]), n_languages=n_lang),
        "marked_group_shift": lg.marked_group_shift(rows, label_map, groups),
        "language_jaccard_harmful": lg.harmful_language_jaccard(rows, label_map).rename_axis("language").reset_index(),
    }


def compute_judge_tables(inputs: JudgeInputs, options: JudgeOptions | None = None, step: Step | None = None) -> JudgeResult:
    """Every table of the judge report from validated inputs (no I/O). ``step(description)`` is called before
    each long step (a progress hook)."""
    o = options or JudgeOptions()
    say = step or (lambda _d: None)
    ratings, human = inputs.ratings, inputs.human
    keys = _keys(inputs)
    tables: dict[str, pd.DataFrame] = {"judge_ratings": ratings}
    facts: dict[str, Any] = {"has_human": human is not None}
    say("per-model ratings")
    per_eval = al.evaluator_ratings(ratings, o.threshold)
    tables["judge_evaluator_ratings"] = per_eval
    tables["judge_summary"] = judge_summary(ratings, per_eval, inputs.errors)
    tables["judge_provider_counts"] = provider_counts(per_eval)
    unjudged = None
    if human is not None:  # ratings of associations the judge never saw: left out, with one line
        human, unjudged = drop_unjudged(human, set(ratings["association_id"].astype(str)), inputs.sources["human"])
    hl = human_labels(human, o.threshold) if human is not None else None
    if hl is not None:
        tables["human_labels"] = hl
    tables["harm_labels"], warnings = harm_label_table(al.panel_labels(ratings, o.threshold), hl, keys)
    warnings = ([unjudged] if unjudged else []) + warnings
    say("agreement between evaluators")
    rate, count, long, summary = agreement_tables(per_eval, human, o.threshold)
    tables["alignment_agreement"] = long
    facts.update(agreement_rate=rate, agreement_count=count, agreement_summary=summary)
    all_ratings = ratings[["evaluator", "association_id", "harm"]]
    if human is not None:
        all_ratings = pd.concat([all_ratings, human.assign(evaluator=HUMAN)[["evaluator", "association_id", "harm"]]])
    tables["alignment_top_score"] = al.top_score_use(all_ratings)
    say("agreement among human raters and among LLM judges")
    tables["rater_reliability"] = rater_reliability(
        ratings, human, o.threshold, o.confidence, o.reliability_resamples, o.split_half_splits, o.seed,
        per_eval=per_eval)
    if hl is not None:
        say("human-LLM correlations")
        tables.update(human_alignment_tables(per_eval, hl, keys, o))
        if inputs.rows is not None and len(inputs.rows):
            gen, rho = al.generation_vs_delta(tables["alignment_delta_by_dimension"], inputs.rows, dimension=o.dimension)
            tables["generation_vs_delta"] = gen
            facts["generation_rho"] = rho
    rows = inputs.rows
    facts["has_languages"] = rows is not None and bool((rows["slice"].astype(str) != "all").any())
    if facts["has_languages"]:
        say("language analyses")
        label_map = dict(zip(tables["harm_labels"].association_id, tables["harm_labels"].harmful))
        tables.update(language_tables(rows, label_map, inputs.language_groups))
    return JudgeResult(tables, facts, o, warnings)


# ------------------------------------------------------------------------------------------------- write


def _merged_view(out: Path, work: Path) -> Path:
    """A scratch folder showing ``out``'s files overlaid with the new ones of ``work`` (symbolic links), so the
    associations report can be rebuilt with the new harm labels before anything in ``out`` changes."""
    view = Path(tempfile.mkdtemp(prefix=".view-", dir=work.parent))
    for folder in (out, work):
        for entry in folder.iterdir() if folder.is_dir() else ():
            if entry.name.startswith(".") or entry.suffix == ".html" or entry.name == "figures":
                continue  # reports and their figures are rebuilt, never written through a link into ``out``
            target = view / entry.name
            if target.is_symlink():
                target.unlink()
            os.symlink(entry.resolve(), target)
    return view


def write_judge_report(report: JudgeResult, work: str | Path, out: str | Path | None = None) -> Path:
    """Write the tables and the report into ``work``; return the report path.

    When ``out`` holds an associations table, the judge sections are added to its ``report.html`` (rebuilt
    into ``work`` from ``out``'s tables plus the new harm labels); otherwise ``work/judge_report.html``.
    """
    import shutil

    from stereoprobe.report.html import write_report
    from stereoprobe.stereotales.judge.sections import judge_sections
    from stereoprobe.tables import write_table

    work = Path(work)
    for name, df in report.tables.items():
        write_table(df, work, name)
    sections = judge_sections(report, base=work)
    target = Path(out) if out is not None else work
    if (target / "associations.csv").is_file():
        from stereoprobe.stereotales.mining.report import write_associations_report

        view = _merged_view(target, work)
        try:
            built = Path(write_associations_report(view, extra_sections=sections))
            if built.is_symlink():  # the report was not rebuilt (unexpected): keep the symlink's target intact
                raise RuntimeError(f"{built} was not rebuilt")
            shutil.move(str(built), work / built.name)
            from stereoprobe.report.html import FIGURES

            if (view / FIGURES).is_dir():  # the merged report's figures (PNG + SVG), linked from it
                shutil.rmtree(work / FIGURES, ignore_errors=True)
                shutil.move(str(view / FIGURES), work / FIGURES)
        finally:
            shutil.rmtree(view, ignore_errors=True)
        report.path = target / built.name
        return work / built.name
    from stereoprobe.report.run_info import write_run_info

    models = sorted(set(report.tables["judge_ratings"]["evaluator"].astype(str)))
    write_run_info(work, probe=TASK_JUDGE, models=models, settings=asdict(report.options))
    path = write_report(work / "judge_report.html", "StereoTales harm judge", sections)
    report.path = target / path.name
    return path
