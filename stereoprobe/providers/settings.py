"""Which ``GenerateConfig`` fields the ``transformers`` provider honours: no field is dropped silently.

Every field of inspect's ``GenerateConfig`` is in exactly one of three sets:

- :data:`HARNESS`: acted on by inspect itself before or around the provider call (retries, time limits,
  concurrency, the system message, which inspect inserts into the conversation, the response cache, fallback
  models, tool-output truncation) or a hint with no effect on the output (``cache_prompt``, ``batch``:
  requests are batched in process anyway);
- :data:`HONOURED`: implemented by the provider (sampling, stops, seeds, choices, log-probabilities,
  structured output, OpenAI's frequency/presence penalties and logit bias);
- everything else (``best_of`` above 1, ``extra_body``/``extra_headers`` of HTTP APIs, reasoning settings,
  output modalities, and any field a later inspect adds): an error naming the field when it is set.

A field at its default (``None``) is never an error, so inspect's defaults pass.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import GenerateConfig

HARNESS = frozenset({
    "max_retries", "timeout", "attempt_timeout", "stream_idle_timeout", "max_connections", "adaptive_connections",
    "system_message", "fallback_models", "fail_on_refusal", "max_tool_output", "cache", "cache_prompt", "batch",
    "internal_tools", "parallel_tool_calls",
})
HONOURED = frozenset({
    "max_tokens", "temperature", "top_p", "top_k", "stop_seqs", "seed", "num_choices", "logprobs", "top_logprobs",
    "prompt_logprobs", "response_schema", "frequency_penalty", "presence_penalty", "logit_bias",
})


def _is_default(name: str, value: Any) -> bool:
    if value is None:
        return True
    if name == "best_of":
        return int(value) == 1  # one candidate is what the provider does
    return False


def unsupported_fields(config: GenerateConfig) -> list[str]:
    """Names of the fields of ``config`` that are set and that the provider cannot honour (sorted)."""
    return sorted(name for name in type(config).model_fields
                  if name not in HARNESS and name not in HONOURED and not _is_default(name, getattr(config, name)))


def check_config(config: GenerateConfig, model_name: str) -> None:
    """Raise ``ValueError`` naming every set field the ``transformers`` provider cannot honour."""
    bad = unsupported_fields(config)
    if bad:
        values = ", ".join(f"{name}={getattr(config, name)!r}" for name in bad)
        raise ValueError(f"transformers provider ({model_name}): GenerateConfig field(s) not supported by local "
                         f"transformers models: {values}; unset them for this model")


def check_scoring_input(input: list[Any], config: GenerateConfig, model_name: str) -> None:
    """Raise ``ValueError`` when a prompt-log-probability request carries a system message (inspect inserts
    ``--system-message`` / ``GenerateConfig.system_message`` into the conversation): scoring reads the raw text
    of the last user message only, so the system message would be dropped silently."""
    from inspect_ai.model import ChatMessageSystem

    if config.system_message is not None or any(isinstance(m, ChatMessageSystem) for m in input):
        raise ValueError(f"transformers provider ({model_name}): likelihood scoring (prompt_logprobs) scores the raw "
                         "text of the last user message, so a system message (--system-message) would be ignored; "
                         "unset it for likelihood tasks")
