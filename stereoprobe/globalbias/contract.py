"""The contract between GlobalBias' stages: task and scorer names, score and metadata keys, table columns.

Imported by the tasks, solvers and scorers that write the logs and by the readers and reports that read them.
"""

from __future__ import annotations

from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.likelihood_scores import N_BYTES, N_TOKENS, SCORER, SUM_LOGPROB

# stereoprobe.params imports inspect_ai (seconds): imported when first needed, so that the descriptor
# (probe.py) and `stereoprobe --help` stay fast (issue 35.10); the score keys come from the inspect-free part of
# the likelihood contract (stereoprobe.likelihood_scores)

TASK_LIKELIHOOD = "globalbias"
TASK_PROFILES = "globalbias_profiles"
RUN_INFO_PROFILES = "globalbias-profiles"  # run_info.json's probe name of a `stereoprobe profiles` output folder

# likelihood task: one sample per name group x template (default) or per sentence (``-T unit=sentence``)
UNITS = ("group", "sentence")
TEMPLATES = (1, 2, 3)  # the sentence templates (-T templates)
GROUP_SCORER = SCORER  # compact per-sentence results (stereoprobe.likelihood's SCORER)
SENTENCE_SCORER = "sentence_logprob"  # one sentence per sample
SCORE_KEYS = (SUM_LOGPROB, N_TOKENS, N_BYTES)  # the value of SENTENCE_SCORER

# metadata of one sentence (per-sentence samples; per-text items of grouped samples carry TEXT_KEYS)
SENTENCE_METADATA = ("group", "ethnicity", "gender", "name", "name_index", "descriptor", "descriptor_index",
                     "dataset", "axis", "target", "template", "encoder_input")
GROUP_METADATA = ("group", "ethnicity", "gender", "template", "descriptors", "n_texts", "texts")
DESCRIPTOR_FIELDS = ("descriptor", "dataset", "axis", "target")  # metadata["descriptors"][str(index)]
TEXT_KEYS = ("id", "text", "name", "name_index", "descriptor_index")  # + "encoder_text", "mlm_max_length"

# profiles task
PROFILE_SCORER = "profile_parser"
PROFILE_VALUE_KEYS = ("parsed", "n_profiles", "n_missing", "n_unknown", "n_requested")
PROFILE_METADATA_KEYS = ("profiles", "missing", "unknown", "malformed_items")

# the long sentence table of the readers
SENTENCE_COLUMNS = ["model", "group", "ethnicity", "gender", "name", "descriptor", "axis", "target", "template"]
PERPLEXITY = "ppl"  # the sentence table's perplexity column (its alternative: "apx")

# output tables of ``stereoprobe globalbias`` and ``stereoprobe profiles``
TABLES = ("headline", "bias_scores", "associations", "associations_strict", "min_groups", "validation",
          "validation_detail", "incomplete_units")
PROFILE_TABLES = ("parse_outcomes", "classification", "predictions", "feature_ablation", "top_words",
                  "religion_consistency")


def check_task_args(source: object = "upstream", faithful: object = True, encoder_decoder: object = False,
                    unit: object = "group", templates: object = None, mlm_max_length: object = None
                    ) -> dict[str, Any]:
    """The task parameters (``-T``) shared by the GlobalBias tasks, checked with :mod:`stereoprobe.params`
    (an :class:`~stereoprobe.errors.InputError` naming the parameter) and returned typed: ``templates`` as a
    list of template numbers (``-T templates=1,3`` arrives as texts) or None. ``faithful`` and
    ``encoder_decoder`` must be real booleans (``-T faithful=true``; not 1 or "yes")."""
    from stereoprobe import params as P

    if not isinstance(source, str) or not source.strip():
        raise InputError(P.message("source", source, "'upstream', 'bundled' or the path of a local copy"))
    return {
        "source": source,
        "faithful": P.boolean(faithful, "faithful", strict=True),
        "encoder_decoder": P.boolean(encoder_decoder, "encoder_decoder", strict=True),
        "unit": P.choice(unit, "unit", UNITS),
        "templates": P.choices(templates, "templates", TEMPLATES),
        "mlm_max_length": P.integer(mlm_max_length, "mlm_max_length", 3, optional=True),
    }

