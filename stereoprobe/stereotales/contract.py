"""The names StereoTales' stages share: written by one stage, read by the next.

Writers and readers both import from here, so a renamed key breaks loudly instead of silently:

- the task and its scorer (``tasks/stereotales.py``, ``scorers/stereotales.py``) write the sample metadata
  and the ``stereotales_extraction`` score (value keys and metadata keys below);
- the stories readers (:mod:`stereoprobe.stereotales.mining.stories`) read those into the *stories frame*
  (:data:`ID_COLUMNS`, :data:`EXTRA_COLUMNS`, one column per attribute);
- association mining writes tables keyed by :data:`KEY_COLUMNS` and :func:`association_id`, which the harm
  judge (:mod:`stereoprobe.stereotales.judge`) reads back.

Missing or undecidable attribute values are :data:`UNKNOWN` everywhere (the upstream pipeline's
``"unknown"``, Giskard-AI/stereotales-pipeline ``attribute_extraction/schema.py``); :data:`OTHER` is the
extraction outcome outside the prompted values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "ALL_SLICE",
    "EXTRA_COLUMNS",
    "EXTRACTOR_ROLE",
    "ID_COLUMNS",
    "ISSUE_COLUMNS",
    "KEY_COLUMNS",
    "LANGUAGE_ALIASES",
    "OTHER",
    "REFUSAL_ROLE",
    "SCORER_NAME",
    "TASK_STORIES",
    "UNKNOWN",
    "association_id",
    "normalize_language",
    "PAIR_COLUMNS",
    "REFUSAL_RATE_COLUMNS",
    "TABLES",
    "VALUE_COLUMNS",
]

# --------------------------------------------------------------------------------------- task and scorer
TASK_STORIES: Final = "stereotales"
SCORER_NAME: Final = "stereotales_extraction"
EXTRACTOR_ROLE: Final = "extractor"
REFUSAL_ROLE: Final = "refusal"

UNKNOWN: Final = "unknown"
OTHER: Final = "other"

# Sample metadata written by ``build_samples`` (one sample per language x attribute x value x scenario).
META_LANGUAGE: Final = "language"
META_ATTRIBUTE: Final = "attribute"
META_VALUE: Final = "attribute_value"  # localised label
META_VALUE_KEY: Final = "attribute_value_key"  # English key
META_SCENARIO_KEY: Final = "scenario_key"
META_SCENARIO_GROUP: Final = "scenario_group"
META_CHARACTER: Final = "character"  # rendered phrase ("a person who is ...")
META_FINGERPRINT: Final = "taxonomy_fingerprint"

# Score value keys of ``stereotales_extraction`` (floats, read by the live metrics).
SCORE_REFUSED: Final = "refused"
SCORE_JUDGE_FAILED: Final = "refusal_judge_failed"
SCORE_EXTRACTOR_CALLS: Final = "extractor_calls"
SCORE_PARSE_FAILURES: Final = "parse_failures"
SCORE_API_ERRORS: Final = "api_errors"
SCORE_EXTRACTORS_OK: Final = "n_extractors_ok"
SCORE_EXTRACTION_FAILED: Final = "extraction_failed"
SCORE_UNKNOWN_PREFIX: Final = "unknown_"  # + attribute: 1.0 when the consensus is unknown

# Score metadata keys (read by the stories reader).
MD_REFUSAL: Final = "refusal"  # {"label", "reason", "votes"}
MD_REFUSED: Final = "refused"
MD_PROFILE: Final = "profile"  # attribute -> value, base attribute overwritten by the prompted value
MD_CONSENSUS_RAW: Final = "consensus_raw"
MD_EXTRACTIONS: Final = "extractions"
MD_EXTRACTORS_OK: Final = "n_extractors_ok"
MD_EXTRACTION_FAILED: Final = "extraction_failed"

# ------------------------------------------------------------------------------------------ stories frame
ID_COLUMNS: tuple[str, ...] = (
    "model",
    "language",
    "sample_id",
    "epoch",
    "target_attribute",
    "attribute_value_key",
    "scenario_key",
    "scenario_group",
    "refused",
)
EXTRA_COLUMNS: tuple[str, ...] = ("refusal_label", "n_extractors_ok", "extraction_failed")
ISSUE_COLUMNS: tuple[str, ...] = ("source", "model", "language", "sample_id", "epoch", "kind", "detail")

# ------------------------------------------------------------------------------------ association tables
KEY_COLUMNS: list[str] = ["base_attribute", "base_value", "compared_attribute", "compared_value"]
ALL_SLICE: Final = "all"  # the slice pooling every language of a model
#: attribute keys a stories table may use: association mining tests every ordered pair (19 in the paper's release)
MAX_ATTRIBUTES: Final = 100

#: ``pair_tests``: one row per tested (model, slice, A, B) (step 1 of the mining)
PAIR_COLUMNS: list[str] = [
    "model", "slice", "base_attribute", "compared_attribute", "n", "rows", "cols", "p", "p_method",
    "p_bh", "significant", "cramers_v", "effect", "chi2", "dof", "n_resamples", "p_bh_run",
    "row_values", "col_values", "table",
]
#: ``value_tests`` (and ``associations``, its passing rows): one row per cell of a significant pair (step 2)
VALUE_COLUMNS: list[str] = [
    "model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value", "n", "count",
    "base_total", "compared_total", "expected", "fraction", "lift", "lift_ci_low", "lift_ci_high", "p",
    "p_by", "cramers_v", "effect", "passes", "stability", "pair_p_method",
]
#: ``refusal_rates``: per model x language x prompted attribute (with ``all`` pools)
REFUSAL_RATE_COLUMNS: list[str] = [
    "model", "language", "target_attribute", "stories", "refused", "extraction_failed", "errored", "no_profile",
    "refusal_rate", "extraction_failure_rate", "error_rate",
]

#: tables written by ``stereoprobe associations`` (CSV + Parquet each) -> what each holds
TABLES: Mapping[str, str] = {
    "associations": "associations passing the filter, one row per model × slice × (A=a → B=b)",
    "associations_across_models": "per slice and association: models count, mean percentage, mean lift",
    "explorer_global": "per model, the global associations with the association-explorer columns",
    "associations_by_language": "per association: languages count in the per-language run",
    "language_jaccard": "language × language Jaccard similarity of the association sets",
    "language_specific": "associations found in exactly one language",
    "pair_tests": "step 1: every attribute-pair test (p-value and the method that produced it, BH, Cramér's V)",
    "value_tests": "step 2: every value-pair test of the significant pairs (BY, fraction, lift, CI)",
    "attribute_distributions": "extracted attribute values per model and language",
    "attribute_distributions_by_scenario": "extracted attribute values per model and scenario (languages pooled)",
    "refusal_rates": "stories, refusals and errored samples per model, language, prompted attribute",
    "unknown_rates": "unknown/other answers per model, language, attribute",
    "extractor_agreement": "Fleiss' kappa between the extractors per model, language, attribute (eval logs)",
    "association_examples": "a few stories (ids + excerpt) per association",
    "input_issues": "samples that are not stories of the analysis (errored, no profile, extra set)",
    "input_sources": "input files read",
}


def association_id(base_attribute: str, base_value: str, compared_attribute: str, compared_value: str) -> str:
    """Stable id of an association: ``assoc-`` + first 16 hex digits of SHA-256 of the four fields.

    Values are compared exactly (no case folding): the association tables use the normalised English keys.
    """
    raw = "\n".join([base_attribute, base_value, compared_attribute, compared_value]).encode("utf-8")
    return "assoc-" + hashlib.sha256(raw).hexdigest()[:16]


# ------------------------------------------------------------------------------------------------ languages
# The upstream seeds and the public release use "du" for Dutch; stereoprobe uses ISO 639-1 "nl".
LANGUAGE_ALIASES: Mapping[str, str] = {"du": "nl"}


def normalize_language(code: Any) -> str:
    """Canonical language code: stripped, lower-case unless it carries a region subtag (``pt-BR`` stays),
    upstream's ``du`` -> ``nl``. The one rule used by the taxonomy, the task and the stories readers."""
    c = str(code).strip()
    c = c.lower() if "-" not in c else c
    return LANGUAGE_ALIASES.get(c, c)
