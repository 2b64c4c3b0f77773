"""The grouped one-token route follows the loaded model, not the provider class: an encoder-decoder model (no
causal scorer) answers DBB's ``-T mode=logprob`` through one request per question and option order."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from stereoprobe.dbb import contract as C
from stereoprobe.tasks.dbb import dbb

BUNDLED = {"source": "bundled", "faithful": False, "prompt": "stereoprobe", "mode": "logprob",
           "categories": "ses", "limit_templates": 1}


def _results(log: Any) -> dict[str, Any]:
    return {qid: r for s in log.samples for qid, r in s.metadata[C.META_MCQ_RESULTS].items()}


@pytest.mark.slow
def test_seq2seq_model_runs_dbb_logprob_mode(tiny_models, tmp_path):
    model = get_model(f"transformers/{tiny_models['t5']}", device="cpu", dtype="float32")
    assert model.api.kind == "seq2seq" and model.api.scorer is None
    assert model.api.answers_prompt_batches is False  # the instance's route, whatever the class offers
    [log] = inspect_eval(dbb(**BUNDLED), model=model, limit=1, display="none", log_dir=str(tmp_path / "t5"),
                         log_realtime=False)
    assert log.status == "success", log.error
    results = _results(log)
    assert results  # every question of the template answered in both option orders, none failed
    assert all(r["error"] is None and len(r["a"]) == 2 for r in results.values())
    # one request per question and option order (the single-request route), each the one-token request
    calls = [e for s in log.samples for e in s.events if e.event == "model"]
    assert len(calls) == 2 * len(results)
    assert all((c.config.max_tokens, c.config.logprobs, c.config.top_logprobs) == (1, True, 20) for c in calls)
    # the old class-wide flag sent the same model down the grouped route, where every question failed
    model.api.answers_prompt_batches = True
    try:
        [bad] = inspect_eval(dbb(**BUNDLED), model=model, limit=1, display="none", log_dir=str(tmp_path / "bad"),
                             log_realtime=False)
    finally:
        model.api.answers_prompt_batches = False
    assert all(r["error"] for r in _results(bad).values())
