"""Shared test fixtures.

- Tests run offline: no model hub, no dataset hub (tiktoken is never needed: mock outputs carry ``usage``).
- ``refdata``: the upstream reference copies in ``../shared/refdata``; tests using it skip when it is absent.
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
REFDATA = REPO_ROOT.parent / "shared" / "refdata"
SPEC = REPO_ROOT.parent / "shared" / "spec"


@pytest.fixture(scope="session")
def refdata() -> Path:
    """Folder holding upstream reference copies (one sub-folder per upstream repository); skip if absent."""
    if not REFDATA.is_dir():
        pytest.skip("../shared/refdata is absent (reference data is only on development machines)")
    return REFDATA
