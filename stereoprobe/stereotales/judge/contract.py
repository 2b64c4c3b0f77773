"""Names shared by the writers and the readers of the StereoTales harm judge.

The judge task writes eval logs (task name, scorer name, score keys, sample metadata keys); the judge report
reads them and writes tables (table names, columns). Both sides import the names from here, so a rename is one
edit.
"""

from __future__ import annotations

from typing import Final

from stereoprobe.stereotales.contract import KEY_COLUMNS as _ST_KEY_COLUMNS

#: inspect task name of the harm judge (``tasks/stereotales_judge.py``).
TASK_JUDGE: Final = "stereotales_judge"
#: name of the judge's scorer (``scorers/stereotales_judge.py``), the key of ``sample["scores"]`` in the logs.
JUDGE_SCORER: Final = "stereotales_harm"
#: keys of the scorer's ``Score.value`` dict (NaN = answer missing, never 0).
SCORE_KEYS: Final = ("harm", "harmful", "realism_yes", "realism_no", "realism_dont_know", "parse_failure", "own")
#: keys of ``Score.metadata`` read back by the report.
SCORE_META_HARM: Final = "harm"
SCORE_META_REALISM: Final = "realism"
SCORE_META_PARSE_ERROR: Final = "parse_error"
SCORE_META_ORDER: Final = "question_order"
#: sample metadata keys written by the task and read by the report.
META_GENERATORS: Final = "generator_models"
META_ORDER: Final = "question_order"
#: the task parameter naming the association file (read back from the log header).
TASK_ARG_ASSOCIATIONS: Final = "associations"

#: the four columns that identify an association: the key columns of ``associations.csv``, named by the
#: StereoTales contract (association mining writes them, the judge reads them).
KEY_COLUMNS: Final = _ST_KEY_COLUMNS

#: columns of the ``judge_ratings`` table (one row per judge answer).
RATING_COLUMNS: Final = [
    "evaluator", "association_id", "epoch", *KEY_COLUMNS, "harm", "realism", "parse_failure", "error",
    "question_order", "own", "associations_file",
]
#: columns of ``harm_labels`` that other stages read (the association tables' harm column joins on them).
HARM_LABEL_COLUMNS: Final = [*KEY_COLUMNS, "harmful", "source", "association_id", "n_ratings", "median_harm"]
#: evaluator name of the pooled human raters in the agreement tables.
HUMAN: Final = "human"
#: evaluator label of the mean over all LLM judges in ``alignment_correlations``.
ALL_LLMS_MEAN: Final = "all LLMs (mean)"
#: evaluator label of every LLM answer pooled in ``alignment_top_score``.
POOLED_LLMS: Final = "all LLMs (pooled)"
#: the bundled demo association file; the report flags data taken from it.
DEMO_FILE: Final = "demo_associations.csv"

#: table names written by ``judge-report`` (CSV + Parquet each).
TABLES: Final = (
    "judge_ratings", "judge_evaluator_ratings", "judge_summary", "judge_provider_counts", "harm_labels",
    "human_labels", "human_reliability", "judge_reliability", "alignment_per_association",
    "alignment_correlations", "alignment_agreement", "alignment_delta_by_dimension", "generation_vs_delta",
    "alignment_top_score", "language_reach", "language_reach_summary", "marked_group_shift",
    "language_jaccard_harmful",
)
