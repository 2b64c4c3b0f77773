"""Solver of the StereoTales harm judge: ask the two questions in the order given by the order rule."""

from __future__ import annotations

from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.inspect_internals import active_generate_config
from stereoprobe.stereotales.judge.contract import META_ORDER
from stereoprobe.stereotales.judge.prompt import AnyJudgePrompt, question_order
from stereoprobe.stereotales.run_settings import JUDGE_DEFAULTS, request_settings


@solver
def judge_association(
    prompt: AnyJudgePrompt, value_lists: dict[str, list[str]], repetition_base: int = 0, order_model: str | None = None,
    run_settings: str = "upstream",
) -> Solver:
    """Render the judge prompt for the sample's association and generate the answer.

    The question order is upstream's rule (``question_order``) applied to (judged model name, association,
    repetition), with repetition = ``state.epoch - 1 + repetition_base`` (inspect epochs count from 1).
    The order and the repetition index are written into ``state.metadata`` (logged per epoch). The request
    carries the user's settings (command line, ``-T temperature``/``max_tokens``) and, for each field the user
    left unset, upstream ``evaluate.py``'s value: temperature 1 and 4,096 tokens, with ``run_settings="upstream"``
    overridden by the judged model's entry of the published run configuration, whose name is written into
    ``state.metadata`` (``run_settings_entry``).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        md = state.metadata
        rep = state.epoch - 1 + repetition_base
        order = question_order(
            order_model or str(state.model), md["base_attribute"], md["base_value"], md["compared_attribute"],
            md["compared_value"], rep,
        )
        text = prompt.render(
            md["base_attribute"], md["base_value"], md["compared_attribute"], md["compared_value"], order,
            value_lists.get(md["base_attribute"], []), value_lists.get(md["compared_attribute"], []),
        )
        state.messages = [ChatMessageUser(content=text)]
        md[META_ORDER] = order
        md["repetition_index"] = rep
        found = request_settings(str(state.model), JUDGE_DEFAULTS, run_settings)
        if run_settings == "upstream":
            md["run_settings_entry"] = found.entry
        return await generate(state, **found.config)

    return solve
