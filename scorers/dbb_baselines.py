"""Scorer and metric of the generative term-based baselines of the DBB paper (``stereoprobe/dbb_baselines``).

Per reply the scorer records the chosen option (``choice``: its index, -1 when the reply is refused or does
not follow the format), ``valid`` ∈ {0, 1} and, for BBQ, ``correct``; the chosen option's role is in the score
metadata. The metric turns the replies into the paper's measures
(:mod:`stereoprobe.dbb.baseline_metrics`): one entry per measure, e.g. ``bbq_ambig_bias_score``,
``bbq_disambig_accuracy``, ``crows_pairs_pct_stereotype``, ``stereoset_intrasentence_icat`` and the refusal
rates. With several epochs every reply counts once.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from stereoprobe.dbb import baseline_metrics as BM
from stereoprobe.dbb.baselines import parse_answer

KEY_CHOICE, KEY_VALID, KEY_CORRECT = "choice", "valid", "correct"


def _answers(scores: list[SampleScore]) -> list[BM.Answer]:
    out = []
    for s in scores:
        md: dict[str, Any] = s.sample_metadata or {}
        v = s.score.value if isinstance(s.score.value, dict) else {}
        k = int(v.get(KEY_CHOICE, -1))
        roles = md.get("roles") or []
        chosen = roles[k] if 0 <= k < len(roles) else None
        out.append(BM.Answer(md.get("subset", ""), chosen, bool(v.get(KEY_CORRECT, 0))))
    return out


@metric
def dbb_baseline_scores(benchmark: str = "bbq") -> Metric:
    """The paper's measures of ``benchmark`` over all replies, named ``<benchmark>_<measure>``."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return {f"{benchmark}_{k}": v for k, v in BM.scores(benchmark, _answers(scores)).items()}

    return compute


@scorer(metrics=[])
def dbb_baseline_scorer(benchmark: str = "bbq") -> Scorer:
    """Parse the reply (:func:`stereoprobe.dbb.baselines.parse_answer`) against the sample's options."""

    async def score(state: TaskState, target: Target) -> Score:
        md = state.metadata
        options = md["options"]
        k = parse_answer(state.output.completion if state.output else "", options)
        choice = -1 if k is None else k
        correct = int(k is not None and md.get("label") is not None and k == int(md["label"]))
        role = md["roles"][k] if k is not None else None
        return Score(value={KEY_CHOICE: choice, KEY_VALID: int(k is not None), KEY_CORRECT: correct},
                     answer=None if k is None else "abc"[k], metadata={"role": role})

    return score
