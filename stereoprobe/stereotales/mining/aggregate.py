"""Cross-model and cross-language aggregation of the associations passing the paper's filter."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from stereoprobe.stats.agreement import jaccard_matrix
from stereoprobe.stereotales.contract import ALL_SLICE, KEY_COLUMNS

_KEY = KEY_COLUMNS




def provider_of(model: str) -> str:
    """Provider derived from a model name: the part before the first "/" (``openai/gpt-4o`` → ``openai``,
    LiteLLM ``azure_ai/gpt-5`` → ``azure_ai``); the name itself when there is no "/"."""
    return model.split("/", 1)[0] if "/" in model else model


def aggregate_across_models(value_tests: pd.DataFrame, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Cross-model aggregation of the associations passing the paper's filter, per slice.

    Columns: ``slice, base_attribute, base_value, compared_attribute, compared_value, models_count,
    models_total, mean_percentage`` (mean of 100·fraction over the models where it passes, 1 decimal),
    ``mean_lift`` (3 decimals), ``min_lift, max_lift, models, providers_count, providers``.
    ``models_total`` = ``len(models)`` if given, else the number of models of that slice in ``value_tests``.
    """
    cols = ["slice", *_KEY, "models_count", "models_total", "mean_percentage", "mean_lift", "min_lift",
            "max_lift", "models", "providers_count", "providers"]
    passing = value_tests[value_tests["passes"]]
    if passing.empty:
        return pd.DataFrame(columns=cols)
    totals = value_tests.groupby("slice")["model"].nunique()
    g = passing.groupby(["slice", *_KEY], sort=True)
    out = g.agg(
        models_count=("model", "nunique"),
        mean_percentage=("fraction", lambda x: round(100 * float(np.mean(x)), 1)),
        mean_lift=("lift", lambda x: round(float(np.mean(x)), 3)),
        min_lift=("lift", "min"),
        max_lift=("lift", "max"),
        models=("model", lambda x: ";".join(sorted(set(x)))),
        providers=("model", lambda x: ";".join(sorted({provider_of(m) for m in x}))),
    ).reset_index()
    out["providers_count"] = out["providers"].str.split(";").str.len()
    out["models_total"] = len(models) if models is not None else out["slice"].map(totals).astype(int)
    return out.sort_values(["slice", "models_count", "mean_lift"], ascending=[True, False, False])[cols].reset_index(drop=True)


def aggregate_across_languages(
    value_tests: pd.DataFrame, languages: Sequence[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Cross-language view of a per-language run (the paper's cross-language comparison). S_L = the associations (A, a, B, b) passing the
    filter for at least one model in language L (slice "all" ignored).

    Returns ``(per_association, jaccard, language_specific)``: per association its ``languages_count`` and
    ``languages`` and ``models_count`` (distinct models over all languages); the symmetric Jaccard matrix
    ``|S_L1 ∩ S_L2| / |S_L1 ∪ S_L2|`` (NaN when both sets are empty); the associations found in exactly one
    language, with that language and its models count. ``languages``: the languages of the run (default:
    those present in ``value_tests``; pass ``pair_tests["slice"].unique()`` to include languages without any
    significant pair).
    """
    lang = value_tests[(value_tests["slice"] != ALL_SLICE) & value_tests["passes"]]
    present = set(value_tests.loc[value_tests["slice"] != ALL_SLICE, "slice"].unique())
    languages = sorted(set(languages) - {ALL_SLICE} if languages is not None else present)
    per_cols = [*_KEY, "languages_count", "languages", "models_count"]
    if lang.empty:
        jac = pd.DataFrame(np.nan, index=languages, columns=languages)
        return pd.DataFrame(columns=per_cols), jac, pd.DataFrame(columns=[*_KEY, "language", "models_count"])
    per = lang.groupby(_KEY, sort=True).agg(
        languages_count=("slice", "nunique"),
        languages=("slice", lambda x: ";".join(sorted(set(x)))),
        models_count=("model", "nunique"),
    ).reset_index().sort_values(["languages_count"], ascending=False, kind="stable")
    sets = {L: set(map(tuple, lang.loc[lang["slice"] == L, _KEY].to_numpy().tolist())) for L in languages}
    jac = pd.DataFrame(jaccard_matrix([sets[L] for L in languages]), index=languages, columns=languages, dtype=float)
    single = per[per["languages_count"] == 1]
    spec = single.merge(
        lang.groupby([*_KEY, "slice"]).agg(models_count_lang=("model", "nunique")).reset_index(), on=_KEY
    )
    spec = spec.rename(columns={"slice": "language"})[[*_KEY, "language", "models_count_lang"]]
    spec = spec.rename(columns={"models_count_lang": "models_count"}).reset_index(drop=True)
    return per.reset_index(drop=True), jac, spec


