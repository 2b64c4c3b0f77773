"""The reference's generation settings per model family (upstream notebooks 9a-9c) and the profile solver."""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelName, ModelOutput
from inspect_ai.solver import TaskState

from stereoprobe.globalbias.profiles_generation import generation_plan
from stereoprobe.solvers.globalbias_profiles import profile_generate


def test_openai_json_mode_and_seed_42_no_max_tokens():
    plan = generation_plan("openai/gpt-4o")
    assert plan.config == {"temperature": 1.0, "seed": 42,
                           "extra_body": {"response_format": {"type": "json_object"}}}
    assert plan.prefill is None and plan.json_object and plan.family == "openai"


def test_openai_responses_api_model_gets_no_json_mode_and_says_so():
    plan = generation_plan("openai/o3-mini")
    assert "extra_body" not in plan.config and plan.record()["json_object"] is False
    assert plan.config["seed"] == 42


def test_anthropic_prefill_and_4096_tokens_llama_5000():
    claude = generation_plan("anthropic/claude-3-opus-20240229")
    assert claude.config == {"temperature": 1.0, "max_tokens": 4096} and claude.prefill == "{"
    other = generation_plan("together/meta-llama/Meta-Llama-3-70B-Instruct")
    assert other.config == {"temperature": 1.0, "max_tokens": 5000} and other.prefill is None


def test_explicit_max_tokens_and_plain_settings():
    assert generation_plan("openai/gpt-4o", max_tokens=300).config["max_tokens"] == 300
    plain = generation_plan("anthropic/claude-3-opus-20240229", settings="plain", temperature=0.5)
    assert plain.config == {"temperature": 0.5, "max_tokens": 5000} and plain.prefill is None
    with pytest.raises(ValueError, match="settings"):
        generation_plan("openai/gpt-4o", settings="fast")


def _run(model: str, answer: str) -> tuple[TaskState, dict]:
    seen: dict = {}

    async def fake_generate(state: TaskState, **kwargs):
        seen.update(kwargs, messages=list(state.messages))
        state.output = ModelOutput.from_content(model, answer)
        state.messages.append(state.output.message)
        return state

    state = TaskState(ModelName(model), "s", 1, "prompt", [ChatMessageUser(content="prompt")])
    return asyncio.run(profile_generate()(state, fake_generate)), seen


def test_solver_prefills_claude_and_prepends_the_brace():
    state, seen = _run("anthropic/claude-3-opus-20240229", '"characters": []}')
    last = seen["messages"][-1]
    assert isinstance(last, ChatMessageAssistant) and last.text == "{"
    assert seen["max_tokens"] == 4096
    assert state.output.completion == '{"characters": []}'
    assert state.metadata["generation"]["prefill"] == "{"


def test_solver_sends_openai_json_mode():
    state, seen = _run("openai/gpt-4o", '{"characters": []}')
    assert seen["seed"] == 42 and seen["extra_body"] == {"response_format": {"type": "json_object"}}
    assert isinstance(seen["messages"][-1], ChatMessageUser)
    assert state.output.completion == '{"characters": []}'
    assert state.metadata["generation"] == {"family": "openai", "config": {"temperature": 1.0, "seed": 42},
                                            "prefill": None, "json_object": True}
