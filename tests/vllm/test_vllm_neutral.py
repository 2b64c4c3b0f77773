"""vLLM routes send neutral sampling values for stereoprobe's tasks (issue 27.2): a vLLM server would otherwise
take every unset value from the model folder's generation_config.json, and inspect never sends top_k, min_p or
repetition_penalty. Checked on the request bodies the fake vLLM server receives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig

pytest.importorskip("openai", reason="inspect's vllm-completions provider needs the openai client (pip install openai)")

from fake_server import FakeVLLM  # noqa: E402
from test_vllm_completions import server, tiny_llama  # noqa: E402,F401  (the module's fixtures)

import stereoprobe._registry  # noqa: E402,F401  (registers the tasks and the hook, as inspect's entry point does)
from stereoprobe.providers.vllm_neutral import (  # noqa: E402
    NEUTRAL_EXTRA_BODY,
    is_stereoprobe_task,
    neutral_vllm_config,
)


@pytest.mark.parametrize("model, config, top_p, temperature, extra", [
    ("vllm/Qwen/Qwen2.5-7B-Instruct", GenerateConfig(), 1.0, 1.0, NEUTRAL_EXTRA_BODY),
    ("vllm-completions/m", GenerateConfig(temperature=0.8, top_p=0.9, top_k=50), 0.9, 0.8,
     {**NEUTRAL_EXTRA_BODY, "top_k": 50}),
    ("vllm/m", GenerateConfig(top_k=0, extra_body={"repetition_penalty": 1.2}), 1.0, 1.0,
     {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.2}),
    ("vllm-completions/m", GenerateConfig(), 1.0, None, NEUTRAL_EXTRA_BODY),  # inspect sends its own 0 there
])
def test_neutral_values_complete_the_request(model: str, config: GenerateConfig, top_p: float,
                                             temperature: float | None, extra: dict[str, Any]) -> None:
    assert neutral_vllm_config(model, config)
    assert (config.top_p, config.temperature, config.extra_body) == (top_p, temperature, extra)


@pytest.mark.parametrize("model", ["openai/gpt-4o", "transformers/default", "anthropic/claude-sonnet-4-5"])
def test_other_providers_untouched(model: str) -> None:
    config = GenerateConfig(temperature=0.5)
    assert not neutral_vllm_config(model, config)
    assert config == GenerateConfig(temperature=0.5)


def test_only_stereoprobe_tasks() -> None:
    assert is_stereoprobe_task("stereoprobe/dbb") and is_stereoprobe_task("stereoprobe/globalbias")
    assert not is_stereoprobe_task("inspect_evals/gsm8k") and not is_stereoprobe_task(None)


def _bodies(srv: FakeVLLM, task: Any, folder: Path, log_dir: Path, **task_args: Any) -> list[dict[str, Any]]:
    from inspect_ai import eval as inspect_eval

    srv.requests.clear()
    [log] = inspect_eval(task, model=f"vllm-completions/{folder}", model_base_url=srv.base_url, task_args=task_args,
                         display="none", log_dir=str(log_dir), limit=1)
    assert log.status == "success", log.error
    assert srv.requests
    return list(srv.requests)


def test_dbb_requests_carry_neutral_values(server: FakeVLLM, tiny_llama: Path, tmp_path: Path) -> None:  # noqa: F811
    import inspect as pyinspect

    from stereoprobe.tasks.dbb import dbb

    # our own prompt wording where the task offers it (the default reads upstream's file; these tests are offline)
    own = {"prompt": "stereoprobe"} if "prompt" in pyinspect.signature(dbb).parameters else {}
    logprob = _bodies(server, "stereoprobe/dbb", tiny_llama, tmp_path / "l", source="bundled", mode="logprob",
                      system_message=False, **own)
    sampled = _bodies(server, "stereoprobe/dbb", tiny_llama, tmp_path / "s", source="bundled", mode="sampled",
                      system_message=False, top_k=50, max_tokens=4, **own)
    for body in logprob:
        assert (body["top_k"], body["min_p"], body["repetition_penalty"], body["top_p"]) == (-1, 0.0, 1.0, 1.0)
    for body in sampled:  # the paper's settings, and the asked-for top-k that inspect alone would drop
        assert (body["temperature"], body["top_p"], body["frequency_penalty"]) == (0.8, 1.0, 0.6)
        assert (body["top_k"], body["min_p"], body["repetition_penalty"]) == (50, 0.0, 1.0)
    assert len(sampled) == 10  # one request per epoch, 10 epochs


def test_other_tasks_requests_untouched(server: FakeVLLM, tiny_llama: Path, tmp_path: Path) -> None:  # noqa: F811
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    task = Task(dataset=[Sample(input="Hello", target="")], solver=generate(), config=GenerateConfig(max_tokens=1))
    [body] = _bodies(server, task, tiny_llama, tmp_path)
    assert not {"top_k", "min_p", "repetition_penalty", "top_p"} & set(body)
