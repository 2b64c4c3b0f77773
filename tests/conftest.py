"""Shared test fixtures.

- Tests run offline: no model hub, no dataset hub (tiktoken is never needed: mock outputs carry ``usage``).
- ``refdata``: local copies of the upstream repositories (one sub-folder per source key of
  ``stereoprobe/upstream_sources.yaml``, e.g. ``GlobalBias/``, ``Hidden-Bias-Benchmark/``), the layout that
  ``$STEREOPROBE_UPSTREAM_DIR`` has for :func:`stereoprobe.upstream.fetch`. Found in
  ``$STEREOPROBE_UPSTREAM_DIR``, else in a ``shared/refdata`` folder beside the repository (development
  machines); tests using it skip when neither exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("INSPECT_LOG_LEVEL", "warning")

REPO_ROOT = Path(__file__).resolve().parents[1]
REFDATA = Path(os.environ.get("STEREOPROBE_UPSTREAM_DIR") or REPO_ROOT.parent / "shared" / "refdata")


@pytest.fixture(scope="session")
def refdata() -> Path:
    """Folder holding local copies of the upstream repositories; skip if absent."""
    if not REFDATA.is_dir():
        pytest.skip("no upstream copies: set STEREOPROBE_UPSTREAM_DIR to a folder of upstream repositories")
    return REFDATA
