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

    task = globalbias(groups=["ARAB_F"], descriptors=["a nurse", "short"])
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
