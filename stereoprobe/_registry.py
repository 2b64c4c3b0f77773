"""inspect_ai entry point: importing this module registers stereoprobe's model providers and tasks.

Referenced from ``[project.entry-points.inspect_ai]`` in pyproject.toml, so ``--model transformers/...``
resolves on the inspect CLI and tasks are listed as ``stereoprobe/<task>``. Keep imports light: providers
import torch/transformers lazily inside their factory functions.
"""

# ruff: noqa: F401
from stereoprobe.providers import transformers_provider
from stereoprobe.tasks.globalbias import globalbias
from stereoprobe.tasks.stereotales import stereotales
from stereoprobe.tasks.stereotales_judge import stereotales_judge
from stereoprobe.tasks.dbb import dbb, dbb_sg
from stereoprobe.tasks.globalbias_profiles import globalbias_profiles
from stereoprobe.tasks.dbb_build import dbb_build_concepts, dbb_build_questions
