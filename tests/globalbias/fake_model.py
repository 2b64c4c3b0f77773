"""A deterministic stand-in for a prompt-log-prob model: mockllm outputs carrying ``prompt_logprobs``.

Each whitespace-separated word after the first is one "token" with log-probability
``-(1 + (sum of code points of the word) % 7) / 2``, a fixed function of the text, so the expected
sentence totals are computed independently in the tests.
"""

from __future__ import annotations

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    get_model,
)


def word_logprob(word: str) -> float:
    return -(1 + sum(map(ord, word)) % 7) / 2


def expected_sum(text: str) -> tuple[float, int]:
    words = text.split()[1:]
    return sum(word_logprob(w) for w in words), len(words)


def fake_output(input, tools, tool_choice, config) -> ModelOutput:  # noqa: A002
    text = input[-1].text
    if "NOLOGPROBS" in text:
        plp = None
    else:
        plp = Logprobs(content=[Logprob(token=w, logprob=word_logprob(w)) for w in text.split()[1:]])
    return ModelOutput(
        model="fake",
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content="", model="fake", source="generate"), prompt_logprobs=plp
            )
        ],
        usage=ModelUsage(input_tokens=len(text.split()), output_tokens=0, total_tokens=len(text.split())),
    )


def fake_model():
    return get_model("mockllm/model", custom_outputs=fake_output)
