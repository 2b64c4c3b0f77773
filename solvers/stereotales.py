"""Solver of the StereoTales task: the subject model writes one story per sample and epoch.

As the published pipeline (Giskard-AI/stereotales-pipeline ``scripts/01_generate_stories.py`` through flare),
the story prompt is the only message (no system prompt); generation settings come from the task's config
(temperature 1.0, a generous token budget) and the command line.
"""

from __future__ import annotations

from inspect_ai.solver import Solver, generate, solver


@solver
def story_generation() -> Solver:
    """Generate the story for the sample's prompt (one user message)."""
    return generate()
