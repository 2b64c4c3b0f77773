"""Solver of the StereoTales task: the subject model writes one story per sample and epoch.

As the published pipeline (Giskard-AI/stereotales-pipeline ``scripts/01_generate_stories.py`` through flare),
the story prompt is the only message (no system prompt); generation settings are the task's (temperature 1,
4,096 tokens) and the command line's, plus, with ``run_settings="upstream"``, the evaluated model's entry of
the published run configuration (``stereoprobe.stereotales.run_settings``), where the command line leaves the
setting at its default. The entry matched is written into the sample's metadata (``run_settings_entry``).
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.inspect_internals import active_generate_config
from stereoprobe.stereotales.run_settings import STORY_DEFAULTS, request_settings


@solver
def story_generation(run_settings: str = "upstream") -> Solver:
    """Generate the story for the sample's prompt (one user message)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if run_settings != "upstream":
            return await generate(state)
        found = request_settings(str(state.model), STORY_DEFAULTS, active_generate_config())
        state.metadata["run_settings_entry"] = found.entry
        return await generate(state, **found.config)

    return solve
