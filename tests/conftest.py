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


@pytest.fixture(autouse=True)
def _no_active_model_from_an_earlier_test():
    """Each test starts with no active inspect model. ``inspect_ai.eval`` sets its model as the active one in
    the caller's context and leaves it there; in one worker process a later test that builds a task from
    Python would otherwise run as if under that earlier eval (the likelihood tasks' build-time capability
    check refuses a chat model it finds active)."""
    from inspect_ai.model._model import active_model_context_var

    token = active_model_context_var.set(None)
    yield
    try:
        active_model_context_var.reset(token)
    except ValueError:  # the test ran in another context (an async test): leave none active here either
        active_model_context_var.set(None)


@pytest.fixture(scope="session")
def refdata() -> Path:
    """Folder holding local copies of the upstream repositories; skip if absent."""
    if not REFDATA.is_dir():
        pytest.skip("no upstream copies: set STEREOPROBE_UPSTREAM_DIR to a folder of upstream repositories")
    return REFDATA
