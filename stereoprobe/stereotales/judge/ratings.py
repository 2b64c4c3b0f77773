"""Judge logs -> one row per judge answer; per judged model summaries and per-provider counts.

Logs are read through the shared input layer (:mod:`stereoprobe.inputs`): files and folders of inspect logs,
``inspect eval-set`` folders (their index files are not logs), one record per model x task x sample x epoch
across all files (a retry supersedes its interrupted original; errored samples are counted, never rated).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.stereotales.judge.associations import same_model
from stereoprobe.stereotales.judge.contract import (
    JUDGE_SCORER,
    KEY_COLUMNS,
    META_GENERATORS,
    META_ORDER,
    RATING_COLUMNS,
    SCORE_META_HARM,
    SCORE_META_ORDER,
    SCORE_META_PARSE_ERROR,
    SCORE_META_REALISM,
    TASK_ARG_ASSOCIATIONS,
    TASK_JUDGE,
)


@dataclass
class JudgeRatings:
    """The judge answers read from logs: ``table`` (columns :data:`~.contract.RATING_COLUMNS`) and read counts.

    ``errors`` maps each judged model to its errored samples (counted by the input layer, not rated);
    ``files`` is the number of log files read and ``superseded`` the number of records replaced by a newer copy
    (an ``eval-retry`` of an interrupted run).
    """

    table: pd.DataFrame
    files: int = 0
    superseded: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    summary: str = ""


def _rating_record(model: str, task_args: dict[str, Any], s: dict[str, Any], error: str = "") -> dict[str, Any]:
    md = s.get("metadata") or {}
    sc = (s.get("scores") or {}).get(JUDGE_SCORER)
    meta = (sc.get("metadata") or {}) if sc is not None else {}
    harm = meta.get(SCORE_META_HARM)
    if harm is not None and (isinstance(harm, bool) or not isinstance(harm, (int, float))
                             or not (harm != harm or harm in (1, 2, 3, 4, 5))):
        raise InputError(f"sample {s.get('id')!r} epoch {s.get('epoch', 1)}: score metadata field "
                         f"{SCORE_META_HARM!r} is {harm!r}, not a harm rating from 1 to 5")
    if not error and sc is None:
        error = "not scored"
    return {
        "evaluator": model,
        "association_id": str(s["id"]),
        "epoch": int(s.get("epoch", 1)),
        **{c: md.get(c) for c in KEY_COLUMNS},
        "harm": float(harm) if harm is not None else math.nan,
        "realism": meta.get(SCORE_META_REALISM),
        "parse_failure": bool(meta.get(SCORE_META_PARSE_ERROR)) if sc is not None else None,
        "error": error,
        "question_order": meta.get(SCORE_META_ORDER, md.get(META_ORDER)),
        "own": any(same_model(model, m) for m in md.get(META_GENERATORS) or []),
        "associations_file": str(task_args.get(TASK_ARG_ASSOCIATIONS, "")),
    }


def ratings_table(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Rating records -> the ``judge_ratings`` table sorted by evaluator, association, epoch."""
    df = pd.DataFrame(list(records), columns=RATING_COLUMNS)
    return df.sort_values(["evaluator", "association_id", "epoch"]).reset_index(drop=True)


def read_judge_ratings(
    inputs: Sequence[str | Path], progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None
) -> JudgeRatings:
    """Read every ``stereotales_judge`` answer of ``inputs`` (log files or folders) with the read counts.

    Raises :class:`~stereoprobe.errors.InputError` (or the input layer's ``LogReadError``) naming the file when
    a log cannot be read, and when no judge sample is found. ``progress`` wraps the sample iterator (a progress
    bar, e.g. :func:`stereoprobe.console.progress`).
    """
    from stereoprobe.errors import InputError
    from stereoprobe.inputs import ReadStats, iter_samples

    stats = ReadStats()
    recs = []
    try:
        for info, s in (progress or (lambda it: it))(iter_samples(inputs, task=TASK_JUDGE, stats=stats)):
            try:
                recs.append(_rating_record(info.model, dict(info.task_args or {}), s))
            except InputError as e:
                raise InputError(f"{info.path}: {e}") from None
    except InputError as e:
        if not str(e).startswith(("no inspect logs", "no log of task")):
            raise
        raise InputError(f"no {TASK_JUDGE} samples found: {e}") from e
    errors: dict[str, int] = {}
    for (_task, model), counter in stats.by_run.items():
        if counter.get("errors"):
            errors[str(model)] = errors.get(str(model), 0) + int(counter["errors"])
    if not recs:
        where = ", ".join(map(str, inputs))
        extra = f" ({stats.errors} errored samples, none answered)" if stats.errors else ""
        raise InputError(f"no {TASK_JUDGE} samples found in {where}{extra}")
    return JudgeRatings(ratings_table(recs), files=len(stats.files), superseded=stats.duplicates, errors=errors,
                        summary=stats.summary())


# --------------------------------------------------------------------------------------------- summaries


#: the share of a judged model's answered harm questions that must parse for its mean harm and harmful share
#: to be its headline; below it the headline reads "not established (k of n answers parsed)"
MIN_PARSED_SHARE = 0.5
PARSED_RULE = (f"A judged model's mean harm and harmful share are its headline only when at least "
               f"{MIN_PARSED_SHARE:.0%} of its answered harm questions parsed; below that the headline is "
               "'not established' with the count parsed.")


def headline_text(harm_parsed: int, harm_answers: int, harmful_share: float, mean_harm: float,
                  associations: int) -> str:
    """The judge headline of one judged model: ``harmful share S; mean harm (1-5) M of N associations``, or
    ``not established (k of n answers parsed)`` below :data:`MIN_PARSED_SHARE` (the one owner of this rule:
    the report, the index and the console read the ``headline`` column it fills).

    >>> headline_text(1, 8, 1.0, 4.0, 4)
    'not established (1 of 8 answers parsed)'
    >>> headline_text(7, 8, 0.25, 2.5, 4)
    'harmful share 0.250; mean harm (1-5) 2.50 of 4 associations'
    """
    if harm_answers == 0 or harm_parsed < MIN_PARSED_SHARE * harm_answers:
        return f"not established ({harm_parsed} of {harm_answers} answers parsed)"
    share = "–" if math.isnan(harmful_share) else f"{harmful_share:.3f}"
    mean = "–" if math.isnan(mean_harm) else f"{mean_harm:.2f}"
    return f"harmful share {share}; mean harm (1-5) {mean} of {associations} associations"


def judge_summary(ratings: pd.DataFrame, per_eval: pd.DataFrame, errors: dict[str, int] | None = None) -> pd.DataFrame:
    """Per judged model: answers, parse failures, errors, mean harm, harmful share, scale use, own associations,
    harm answers parsed of those answered and the ``headline`` (:func:`headline_text`).

    ``per_eval``: :func:`~stereoprobe.stereotales.judge.alignment.evaluator_ratings`. ``errors``: errored
    samples per model counted by the input layer (added to the ``errors`` column).
    """
    errors = errors or {}
    recs = []
    for ev, g in ratings.groupby("evaluator", sort=True):
        pe = per_eval[per_eval.evaluator == ev]
        valid = g["harm"].dropna()
        answered = g[g["error"] == ""]
        labelled = pe.dropna(subset=["median_harm"])
        own_ids = set(g.loc[g["own"].astype(bool), "association_id"])
        own = labelled[labelled.association_id.isin(own_ids)]
        recs.append({
            "evaluator": ev,
            "associations_file": " ".join(sorted(set(g["associations_file"].astype(str)))),
            "associations": g["association_id"].nunique(),
            "answers": len(g),
            "errors": int((g["error"] != "").sum()) + int(errors.get(str(ev), 0)),
            "parse_failure_rate": float(answered["parse_failure"].astype(float).mean()) if len(answered) else math.nan,
            "harm_unparsed_rate": float(answered["harm"].isna().mean()) if len(answered) else math.nan,
            "mean_harm": float(labelled["mean_harm"].mean()) if len(labelled) else math.nan,
            "harmful_share": float(labelled["harmful"].astype(float).mean()) if len(labelled) else math.nan,
            **{f"share_{k}": float((valid == k).mean()) if len(valid) else math.nan for k in range(1, 6)},
            "own_associations": len(own),
            "own_harmful": int(own["harmful"].astype(bool).sum()),
            "own_harmful_share": float(own["harmful"].astype(float).mean()) if len(own) else math.nan,
            "harm_parsed": int(answered["harm"].notna().sum()),
            "harm_answers": len(answered),
        })
        r = recs[-1]
        r["headline"] = headline_text(r["harm_parsed"], r["harm_answers"], r["harmful_share"], r["mean_harm"],
                                      r["associations"])
    return pd.DataFrame(recs)


def provider_of(model: str) -> str:
    """Provider of an inspect model name: the part before the first ``/`` (``openai/gpt-4o`` -> ``openai``).

    Names routed through a gateway keep the gateway's model family (``openrouter/google/gemini-2.5`` ->
    ``openrouter/google``) so models of one family stay together; a bare name is its own provider.
    """
    parts = str(model).split("/")
    if len(parts) >= 3 and parts[0] in {"openrouter", "together", "hf", "vllm", "transformers", "ollama", "groq", "bedrock", "azureai", "fireworks"}:
        return "/".join(parts[:2])
    return parts[0] if len(parts) > 1 else str(model)


def provider_counts(per_eval: pd.DataFrame) -> pd.DataFrame:
    """Per judged model, grouped by provider: harmful and benign association counts (the model's own labels).

    ``per_eval``: :func:`~stereoprobe.stereotales.judge.alignment.evaluator_ratings`. Columns: ``provider,
    evaluator, labelled, harmful, benign, harmful_share``; a ``provider total`` row (evaluator ``(all)``) follows
    each provider's models, counting each (model, association) label once. Associations without a valid rating
    are left out.
    """
    cols = ["provider", "evaluator", "labelled", "harmful", "benign", "harmful_share"]
    lab = per_eval.dropna(subset=["median_harm"])
    if lab.empty:
        return pd.DataFrame(columns=cols)
    lab = lab.assign(provider=lab["evaluator"].map(provider_of), harmful=lab["harmful"].astype(bool))
    rows: list[dict[str, Any]] = []
    for prov, gp in lab.groupby("provider", sort=True):
        for ev, g in gp.groupby("evaluator", sort=True):
            h = int(g["harmful"].sum())
            rows.append({"provider": prov, "evaluator": ev, "labelled": len(g), "harmful": h, "benign": len(g) - h,
                         "harmful_share": h / len(g)})
        h = int(gp["harmful"].sum())
        rows.append({"provider": prov, "evaluator": "(all)", "labelled": len(gp), "harmful": h, "benign": len(gp) - h,
                     "harmful_share": h / len(gp)})
    return pd.DataFrame(rows, columns=cols)
