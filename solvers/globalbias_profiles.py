"""Solver of the GlobalBias profile task: one request per batch of names with the reference's settings for the
model's family (:mod:`stereoprobe.globalbias.profiles_generation`)."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.globalbias.profiles_generation import generation_plan


@solver
def profile_generate(settings: str = "reference", max_tokens: int | None = None, temperature: float = 1.0) -> Solver:
    """Generate the profiles: the family's reference settings (JSON mode and seed 42 for OpenAI models, the
    assistant turn prefilled with "{" for Anthropic models, re-prepended to the answer as the reference does),
    recorded in ``state.metadata["generation"]``."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        plan = generation_plan(str(state.model), settings, max_tokens, temperature)
        state.metadata["generation"] = plan.record()
        if plan.prefill:
            state.messages.append(ChatMessageAssistant(content=plan.prefill))
        state = await generate(state, **plan.config)
        if plan.prefill and state.output.choices:
            text = state.output.completion or ""
            if not text.lstrip().startswith(plan.prefill):
                state.output.completion = plan.prefill + text
        return state

    return solve
