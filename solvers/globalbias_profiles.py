"""Solver of the GlobalBias profile task: one request per batch of names with the reference's settings for the
model's family (:mod:`stereoprobe.globalbias.profiles_generation`)."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.globalbias.profiles_generation import GenerationPlan, generation_plan
from stereoprobe.user_settings import request_config


@solver
def profile_generate(settings: str = "reference", max_tokens: int | None = None, temperature: float = 1.0) -> Solver:
    """Generate the profiles: the family's reference settings (JSON mode and seed 42 for OpenAI models, the
    assistant turn prefilled with "{" for Anthropic models, re-prepended to the answer as the reference does),
    recorded in ``state.metadata["generation"]``. Those are the paper's values: the user's settings (command
    line's ``--max-tokens``, ``--temperature``, ...) win, and the record holds what was sent
    (:mod:`stereoprobe.user_settings`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        paper = generation_plan(str(state.model), settings, max_tokens, temperature)
        sent = request_config(paper.config)
        json_object = paper.json_object and sent.get("extra_body") == paper.config.get("extra_body")
        plan = GenerationPlan(paper.family, sent, paper.prefill, json_object)
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
