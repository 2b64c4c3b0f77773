"""lm-evaluation-harness task YAMLs shipped with stereoprobe.

Run them with ``lm-eval run --include_path "$(stereoprobe lm-eval-path)" --tasks <task> ...``; the folder
holds one sub-folder per probe.
"""

from __future__ import annotations

from pathlib import Path


def include_path() -> Path:
    """The folder to pass to lm-eval's ``--include_path``."""
    return Path(__file__).resolve().parent
