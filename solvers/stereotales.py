"""Solver of the StereoTales task: the subject model writes one story per sample and epoch.

As the published pipeline (Giskard-AI/stereotales-pipeline ``scripts/01_generate_stories.py`` through flare),
the story prompt is the only message (no system prompt). Each request carries the user's settings (the command
line's ``--max-tokens``, ``--temperature``, ...) and, for each field the user left unset, the paper's value:
temperature 1 and 4,096 tokens, with ``run_settings="upstream"`` overridden by the evaluated model's entry of the
published run configuration (``stereoprobe.stereotales.run_settings``; the rule:
:mod:`stereoprobe.user_settings`). The entry matched is written into the sample's metadata
(``run_settings_entry``).
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.inspect_internals import active_generate_config
from stereoprobe.stereotales.run_settings import STORY_DEFAULTS, request_settings


@solver
def story_generation(run_settings: str = "upstream") -> Solver:
    """Generate the story for the sample's prompt (one user message)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        found = request_settings(str(state.model), STORY_DEFAULTS, run_settings)
        if run_settings == "upstream":
            state.metadata["run_settings_entry"] = found.entry
        return await generate(state, **found.config)

    return solve
