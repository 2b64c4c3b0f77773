"""Scorer of grouped likelihood samples: per-text summed log-probabilities, stored compactly (contract:
:mod:`stereoprobe.likelihood`).

``Score.value`` = ``{texts, unscored, mean_perplexity}`` of the sample; ``Score.metadata`` = aligned lists
``ids, sum_logprob, n_tokens, n_bytes`` and ``errors`` (position -> reason). Metrics are over texts, not
samples: ``mean_perplexity`` (mean over scored texts of ``exp(-sum_logprob / n_tokens)``), ``unscored``
and ``texts`` (counts).
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from stereoprobe.likelihood import (
    STATE_KEY,
    VALUE_MEAN_PPL,
    VALUE_TEXTS,
    VALUE_UNSCORED,
    encode_results,
    read_results,
)
from stereoprobe.metric_values import live_figure


def _values(scores: list[SampleScore]) -> list[dict]:
    return [s.score.value for s in scores if isinstance(s.score.value, dict)]


@metric
def mean_perplexity() -> Metric:
    """Mean over scored texts (all samples) of exp(-sum_logprob / n_tokens)."""

    def compute(scores: list[SampleScore]) -> float:
        total, n = 0.0, 0.0
        for v in _values(scores):
            k = v.get(VALUE_TEXTS, 0.0) - v.get(VALUE_UNSCORED, 0.0)
            if k > 0:
                total += v[VALUE_MEAN_PPL] * k
                n += k
        return total / n if n else float("nan")

    return live_figure("mean_perplexity", compute)


@metric
def unscored() -> Metric:
    """Number of texts without a usable log-probability (failures are recorded per text in the score)."""

    def compute(scores: list[SampleScore]) -> float:
        return float(sum(v.get(VALUE_UNSCORED, 0.0) for v in _values(scores)))

    return live_figure("unscored", compute)


@metric
def texts() -> Metric:
    """Number of texts in the scored samples."""

    def compute(scores: list[SampleScore]) -> float:
        return float(sum(v.get(VALUE_TEXTS, 0.0) for v in _values(scores)))

    return live_figure("texts", compute)


@scorer(metrics=[mean_perplexity(), unscored(), texts()])
def text_logprobs() -> Scorer:
    """Per-text results of the ``score_texts`` solver, in the compact score format."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = (state.output.metadata or {}).get(STATE_KEY) if state.output else None
        if meta is None:
            raise RuntimeError("text_logprobs: the sample has no per-text results; use the score_texts solver")
        results = read_results({"metadata": meta})
        value, metadata = encode_results(results)
        bad = int(value[VALUE_UNSCORED])
        return Score(value=value, metadata=metadata,
                     explanation=f"{len(results) - bad} of {len(results)} texts scored"
                     + (f"; unscored: {next(iter(metadata['errors'].values()))}" if bad else ""))

    return score
