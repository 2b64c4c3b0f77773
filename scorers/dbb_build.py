"""Scorer of the DBB dataset builder tasks: the status of every input, so nothing is dropped silently."""

from __future__ import annotations


from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState


@scorer(metrics={"ok": [mean()], "filtered": [mean()], "unparsed": [mean()], "refused": [mean()]})
def build_status() -> Scorer:
    """Share of inputs that gave a usable item (``ok``), were filtered out, whose reply did not parse, or
    whose reply was a refusal (the builder's refusal phrases)."""

    async def score(state: TaskState, target: Target) -> Score:
        st = state.metadata.get("status", "unknown")
        return Score(value={"ok": float(st == "ok"), "filtered": float(st == "filtered"),
                            "unparsed": float(st.startswith("unparsed")), "refused": float(st == "refused")},
                     answer=st)

    return score
