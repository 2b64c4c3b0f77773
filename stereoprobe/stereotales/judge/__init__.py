"""StereoTales harm judge and human alignment (Le Jeune et al., 2026, "StereoTales", arXiv 2605.10442).

Stages, one module each:

- :mod:`.contract` — names shared by the judge task (writer) and the report (reader);
- :mod:`.associations` — association files, stable association ids;
- :mod:`.prompt`, :mod:`.parsing` — the judge prompt, the question-order rule, the answer parser
  (used by ``solvers/stereotales_judge.py`` and ``scorers/stereotales_judge.py``);
- :mod:`.ratings` — judge logs -> one row per answer, per-model summaries;
- :mod:`.human` — rater sheets out, human ratings in, human labels;
- :mod:`.alignment`, :mod:`.reliability`, :mod:`.languages` — the statistics (pure functions);
- :mod:`.report` (+ :mod:`.sections`) — the tables and the report sections;
- :mod:`.api` — the Python API of ``stereoprobe judge-report``: :func:`analyze` (read + compute, a
  :class:`JudgeOptions` in, a :class:`JudgeResult` out) and :func:`write`, exported here like every probe
  package's pair; :mod:`.probe` — the descriptor (its ``harm_labels`` feed StereoTales' leaderboard figures).

The names below are re-exported for convenience (``from stereoprobe.stereotales.judge import association_id``).
"""

from __future__ import annotations

from stereoprobe.stereotales.judge.associations import (
    AssociationFileError,
    association_id,
    association_key,
    attribute_display_name,
    deduplicate_associations,
    load_association_rows,
    load_associations,
    same_model,
)
from stereoprobe.stereotales.judge.contract import KEY_COLUMNS
from stereoprobe.stereotales.judge.parsing import JudgeAnswer, median_is_harmful, parse_judge_answer
from stereoprobe.stereotales.judge.prompt import (
    JudgePrompt,
    attribute_value_lists,
    load_judge_prompt,
    question_order,
    taxonomy_values,
)

__all__ = [
    "KEY_COLUMNS", "AssociationFileError", "JudgeAnswer", "JudgePrompt", "association_id", "association_key",
    "attribute_display_name", "attribute_value_lists", "deduplicate_associations", "load_association_rows",
    "load_associations", "load_judge_prompt", "median_is_harmful", "parse_judge_answer", "question_order",
    "same_model", "taxonomy_values",
]

# The Python API (:mod:`.api`), imported on first use: the solvers and scorers import this package cheaply.
_API = ("JudgeResult", "JudgeOptions", "analyze", "write")
__all__ += list(_API)


def __getattr__(name: str) -> object:
    if name in _API:
        import importlib

        return getattr(importlib.import_module("stereoprobe.stereotales.judge.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
