"""The contract between GlobalBias' stages: task and scorer names, score and metadata keys, table columns.

Imported by the tasks, solvers and scorers that write the logs and by the readers and reports that read them.
"""

from __future__ import annotations

from stereoprobe import likelihood

TASK = "globalbias"
PROFILES_TASK = "globalbias_profiles"

# likelihood task: one sample per name group x template (default) or per sentence (``-T unit=sentence``)
UNITS = ("group", "sentence")
GROUP_SCORER = likelihood.SCORER  # compact per-sentence results (stereoprobe.likelihood)
SENTENCE_SCORER = "sentence_logprob"  # one sentence per sample
SCORE_KEYS = ("sum_logprob", "n_tokens", "n_bytes")  # value of SENTENCE_SCORER

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

# output tables of ``stereoprobe globalbias`` and ``stereoprobe profiles``
TABLES = ("bias_scores", "associations", "associations_strict", "min_groups", "validation", "validation_detail",
          "completeness")
PROFILE_TABLES = ("classification", "feature_ablation", "top_words", "parse_summary")


def check_task_args(source: object = "upstream", faithful: object = True, encoder_decoder: object = False,
                    unit: object = "group", templates: object = None, mlm_max_length: object = None) -> None:
    """``ValueError`` naming the task parameter (``-T``) whose value is invalid."""
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"source must be 'upstream', 'bundled' or the path of a local copy, got {source!r}")
    for key, v in (("faithful", faithful), ("encoder_decoder", encoder_decoder)):
        if not isinstance(v, bool):
            raise ValueError(f"{key} must be true or false, got {v!r}")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if templates is not None:
        items = templates if isinstance(templates, (list, tuple)) else [templates]
        if not items or any(isinstance(t, bool) or not isinstance(t, int) or t not in (1, 2, 3) for t in items):
            raise ValueError(f"templates must be template numbers among 1, 2, 3, got {templates!r}")
    if mlm_max_length is not None and (isinstance(mlm_max_length, bool) or not isinstance(mlm_max_length, int)
                                       or mlm_max_length < 3):
        raise ValueError(f"mlm_max_length must be an integer >= 3 or none, got {mlm_max_length!r}")
