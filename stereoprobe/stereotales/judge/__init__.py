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

# The names below, each imported from its module on first use (PEP 562): the descriptor (.probe) is found by
# importing this package, and pandas (.associations) would cost `stereoprobe --help` a second (issue 35.10).
_EXPORTS = {
    "associations": ("AssociationFileError", "association_id", "association_key", "attribute_display_name",
                     "deduplicate_associations", "load_association_rows", "load_associations", "same_model"),
    "contract": ("KEY_COLUMNS",),
    "parsing": ("JudgeAnswer", "median_is_harmful", "parse_judge_answer"),
    "prompt": ("JudgePrompt", "attribute_value_lists", "load_judge_prompt", "question_order", "taxonomy_values"),
    "api": ("JudgeResult", "JudgeOptions", "analyze", "write"),  # the Python API
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "KEY_COLUMNS", "AssociationFileError", "JudgeAnswer", "JudgePrompt", "association_id", "association_key",
    "attribute_display_name", "attribute_value_lists", "deduplicate_associations", "load_association_rows",
    "load_associations", "load_judge_prompt", "median_is_harmful", "parse_judge_answer", "question_order",
    "same_model", "taxonomy_values",
]

__all__ += list(_EXPORTS["api"])


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
