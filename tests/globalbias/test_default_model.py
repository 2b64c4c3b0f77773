"""End to end on the bundled default model: the task's stored log-probabilities equal an independent
teacher-forced computation with transformers (first token unscored, as lmppl and vLLM)."""

from __future__ import annotations

import pytest
from tolerances import sum_tolerance

pytestmark = pytest.mark.slow


def test_task_logprobs_match_transformers(tmp_path):
    import torch
    from inspect_ai import eval as inspect_eval
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from stereoprobe.providers.default_model import default_model_dir
    from stereoprobe.tasks.globalbias import globalbias

    task = globalbias(source="bundled", groups=["ARAB_F"], descriptors=["a nurse", "short"], unit="sentence")
    [log] = inspect_eval(task, model="transformers/default", log_dir=str(tmp_path), display="none",
                         max_samples=64, max_connections=64)
    assert log.status == "success" and len(log.samples) == 3 * 2 * 3
    path = default_model_dir()
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    for s in log.samples[:6]:
        ids = tok(s.input, add_special_tokens=False, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(model(ids).logits[0, :-1].float(), -1)
        ref = logp.gather(1, ids[0, 1:, None]).sum().item()
        v = s.scores["sentence_logprob"].value
        assert v["n_tokens"] == ids.shape[1] - 1
        assert v["sum_logprob"] == pytest.approx(ref, abs=sum_tolerance(v["n_tokens"]))  # per-token bound x tokens


def test_grouped_batch_requests_equal_per_sentence_requests(tmp_path):
    """The provider's batch path (one request per name group x template) gives the per-sentence numbers
    (tolerance 1e-5 nats per token: the same forward passes, batched differently), and a text item's context
    is summed out exactly as one request per text does."""
    import asyncio

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from stereoprobe.likelihood import SCORER, read_results
    from stereoprobe.solvers.likelihood import score_items
    from stereoprobe.tasks.globalbias import globalbias

    sel = {"source": "bundled", "groups": ["ARAB", "ENGLISH"], "descriptors": ["a nurse", "short", "an engineer"]}
    model = get_model("transformers/default", memoize=False)
    assert model.api.scores_text_batches
    [lg] = inspect_eval(globalbias(**sel), model=model, log_dir=str(tmp_path / "g"), display="none")
    [ls] = inspect_eval(globalbias(**sel, unit="sentence"), model=model, log_dir=str(tmp_path / "s"),
                        display="none", max_samples=64)
    per = {s.id: s.scores["sentence_logprob"].value for s in ls.samples}
    grouped = [r for s in lg.samples for r in read_results(s.scores[SCORER])]
    assert len(grouped) == len(per) == 12 * 3 * 3
    for r in grouped:
        v = per[r.id]
        assert r.n_tokens == v["n_tokens"] and r.n_bytes == v["n_bytes"]
        assert abs(r.sum_logprob - v["sum_logprob"]) <= 1e-5 * r.n_tokens

    items = [{"id": "x", "text": "My name is Amira, I am a nurse.", "context": "My name is Amira,"},
             {"id": "y", "text": "Amira is short.", "context": "Amira"}]
    batch = asyncio.run(score_items(items, model))
    model.api.scores_text_batches = False  # the one-request-per-text path on the same provider
    try:
        single = asyncio.run(score_items(items, model))
    finally:
        del model.api.scores_text_batches
    for b, s1 in zip(batch, single):
        assert b.ok and s1.ok and b.n_tokens == s1.n_tokens
        assert abs(b.sum_logprob - s1.sum_logprob) <= 1e-5 * b.n_tokens
