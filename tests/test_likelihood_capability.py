"""A likelihood task on a model without prompt log-probabilities is refused before it is paid for: by
``stereoprobe plan`` from the provider's name, at task start by one probe request, and when a whole group
comes back without them (the fake model of tests/fake_model.py plays the chat API)."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai import eval as inspect_eval

from stereoprobe.likelihood import LogprobsUnavailable, logprob_requirement, require_logprobs
from stereoprobe.solvers.likelihood import PROBE_TEXT, score_items
from fake_model import expected_sum, fake_model

SELECTION = {"source": "bundled", "groups": ["ARAB"], "templates": [1]}


@pytest.mark.parametrize("unit", ["group", "sentence"])
def test_run_on_a_model_without_prompt_logprobs_stops_after_one_probe_request(unit, tmp_path):
    from stereoprobe.tasks.globalbias import globalbias

    model = fake_model(no_prompt_logprobs=True)
    [log] = inspect_eval(globalbias(**SELECTION, unit=unit), model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "error"
    assert "returns no prompt log-probabilities" in log.error.message
    assert "transformers/" in log.error.message and "vllm-completions/" in log.error.message
    assert model.api.calls == 1  # the probe request only: no sample's texts were sent


def test_a_group_returned_without_any_prompt_logprobs_stops_the_run():
    model = fake_model()  # the probe passes; every text of the group comes back without log-probabilities
    items = [{"id": str(k), "text": f"Ann NOLOGPROBS {k}."} for k in range(3)]
    with pytest.raises(LogprobsUnavailable, match=r"none for the 3 texts of a group"):
        asyncio.run(score_items(items, model))
    assert model.api.calls == 1 + 3  # the probe, then the group


def test_one_unscored_text_is_a_per_text_error_and_the_probe_runs_once():
    model = fake_model()
    items = [{"id": "a", "text": "Ann is tall."}, {"id": "b", "text": "Ann NOLOGPROBS here."}]
    first = asyncio.run(score_items(items, model))
    second = asyncio.run(score_items(items, model))
    assert [r.ok for r in first] == [True, False] and first == second
    assert (first[0].sum_logprob, first[0].n_tokens) == expected_sum("Ann is tall.")
    assert model.api.calls == 1 + 2 + 2  # one probe for the model, then its texts
    assert len(PROBE_TEXT.split()) >= 3  # the probe scores at least two tokens


@pytest.mark.parametrize("model, ok", [
    ("openai/gpt-4o", False), ("anthropic/claude-sonnet-4-5", False), ("google/gemini-2.5-pro", False),
    ("transformers/default", True), ("vllm-completions/meta-llama/Meta-Llama-3-8B", True),
    ("openai-api/local/llama", True), ("vllm/meta-llama/Meta-Llama-3-8B", True),
])
def test_prompt_logprob_providers(model, ok):
    if ok:
        require_logprobs(model, "prompt", "task globalbias")
    else:
        with pytest.raises(LogprobsUnavailable, match=r"^\S+ returns no prompt log-probabilities, which task globalbias"):
            require_logprobs(model, "prompt", "task globalbias")


def test_requirement_read_from_the_task_config():
    from inspect_ai.model import GenerateConfig

    assert logprob_requirement(GenerateConfig(prompt_logprobs=1)) == "prompt"
    assert logprob_requirement(GenerateConfig(logprobs=True, top_logprobs=20)) == "token"
    assert logprob_requirement(GenerateConfig(temperature=0.8)) is None
    require_logprobs("openai/gpt-4o", "token", "task dbb")  # OpenAI's chat API returns the answer token's
    with pytest.raises(LogprobsUnavailable, match="no token log-probabilities"):
        require_logprobs("anthropic/claude-sonnet-4-5", "token", "task dbb")
