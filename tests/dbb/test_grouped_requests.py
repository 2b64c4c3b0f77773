"""DBB logprob mode through grouped one-token requests (issue 36.2): one request per template on the bundled
default model (CPU, float32) gives the numbers of one request per question and option order, and
``stereoprobe dbb`` reads the new logs into the same tables as old-style logs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from stereoprobe.cli import main
from stereoprobe.dbb import contract as C
from stereoprobe.tasks.dbb import dbb

BUNDLED = {"source": "bundled", "faithful": False, "prompt": "stereoprobe", "mode": "logprob",
           "categories": "ses", "limit_templates": 2}


def _run(log_dir: Path, grouped: bool, **model_args: Any) -> Any:
    model = get_model("transformers/default", device="cpu", dtype="float32", batch_size=8, **model_args)
    eligible = model.api.answers_prompt_batches  # the instance's own route (a causal model: True)
    model.api.answers_prompt_batches = grouped  # False: one request per question and order (the old route)
    try:
        [log] = inspect_eval(dbb(**BUNDLED), model=model, display="none", log_dir=str(log_dir), log_realtime=False)
    finally:
        model.api.answers_prompt_batches = eligible  # back to the instance's value for other tests
    assert log.status == "success", log.error
    return log


def _results(log: Any) -> dict[str, Any]:
    return {qid: r for s in log.samples for qid, r in s.metadata[C.META_MCQ_RESULTS].items()}


def _model_calls(log: Any) -> int:
    return sum(1 for s in log.samples for e in s.events if e.event == "model")


@pytest.mark.slow
def test_grouped_requests_give_the_ungrouped_numbers_and_tables(tmp_path):
    old = _run(tmp_path / "old", grouped=False, prefix_sharing="false")
    new = _run(tmp_path / "new", grouped=True, prefix_sharing="false")
    n_questions = len(_results(old))
    assert n_questions > 4
    # one request per template instead of one per question and option order
    assert _model_calls(new) == len(new.samples) and _model_calls(old) == 2 * n_questions
    # without prefix sharing each prompt is computed as it is alone: bit-identical P(A), every question
    assert _results(new) == _results(old)
    assert all(r["error"] is None and len(r["a"]) == 2 for r in _results(new).values())
    # the post-processing reads both layouts into the same tables
    for name, log_dir in (("old", tmp_path / "old"), ("new", tmp_path / "new")):
        assert main(["dbb", str(log_dir), "--out", str(tmp_path / f"out_{name}"), "--n-boot", "50", "-q"]) == 0
    for table in ("instances.csv", "summary.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "out_old" / table),
                                      pd.read_csv(tmp_path / "out_new" / table))
    # with prefix sharing (the default): the shared prefix runs once; the same P(A) within float32 noise
    shared = _results(_run(tmp_path / "shared", grouped=True))
    for qid, r in _results(old).items():
        assert shared[qid]["a_first"] == r["a_first"] and shared[qid]["valid"] == r["valid"]
        # P(A) from two letter probabilities renormalised: 1e-5 absolute covers float32 reordering noise
        assert all(math.isclose(x, y, abs_tol=1e-5) for x, y in zip(shared[qid]["a"], r["a"]))
