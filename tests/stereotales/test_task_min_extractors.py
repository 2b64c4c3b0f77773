"""``-T min_extractors`` above the number of models bound to the ``extractor`` role stops the run with one line
naming the parameter (instead of every story silently failing extraction)."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from inspect_ai import eval

sys.path.insert(0, str(Path(__file__).parent))
from test_task import SPLIT, Mocks, _private_cache  # noqa: E402,F401  (the fixture keeps the cache private)

from stereoprobe.tasks.stereotales import stereotales as published_stereotales  # noqa: E402

# these tests exercise stereoprobe's own wording (no upstream files needed); the published defaults are
# checked by tests/conformance/test_stereotales.py
stereotales = partial(published_stereotales, seeds="bundled", role_prompts="bundled", run_settings="none",
                      role_settings="none")


def test_more_extractors_required_than_bound(tmp_path: Path) -> None:
    mocks = Mocks()
    n = len(mocks.extractors)
    task = stereotales(languages="en", attributes="gender", scenario_groups="hobbies", min_extractors=n + 1)
    [log] = eval(task, model=mocks.subject, model_roles=mocks.roles(), sample_id=SPLIT, log_dir=str(tmp_path),
                 display="none")
    assert log.status == "error"
    text = str(log.error.message if log.error else "")
    assert f"min_extractors must be at most the number of extractor models ({n}" in text
    assert all(mocks.n_calls(f"ext{i}") == 0 for i in range(n))  # stopped before asking any extractor
