"""A tiny fake inspect ModelAPI for the DBB tests: known answer distributions, token logprobs, prompt logprobs."""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Callable

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    Model,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
    modelapi,
)

_CHOICES = re.compile(r"^a\) (?P<first>.*)\nb\) (?P<second>.*)$", re.MULTILINE)
_CONTEXT = re.compile(r"^Context: (?P<ctx>.*)$", re.MULTILINE)


def word_logprob(word: str) -> float:
    """Prompt-logprob of a whitespace token in the fake: −0.1 × its length (hand-computable)."""
    return -0.1 * len(word)


class FakeDBBModel(ModelAPI):
    """``p_a(context, option_a_shown_first) -> probability of answering the option A`` where option A is
    recognised through ``is_a(option_text)``; ``always_first`` answers "a)" whatever is shown."""

    def __init__(self, model_name: str = "fake-dbb", base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), p_a: Callable[[str], float] | None = None, is_a: Callable[[str], bool] | None = None,
                 always_first: bool = False, no_logprobs: bool = False, seed: int = 0,
                 invalid_rate: float = 0.0) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.p_a, self.is_a, self.always_first, self.no_logprobs = p_a, is_a, always_first, no_logprobs
        self.rng = random.Random(seed)
        self.invalid_rate = invalid_rate
        self.calls = 0

    async def tokenize(self, text: str) -> list[int]:
        return [int(hashlib.md5(w.encode()).hexdigest()[:8], 16) for w in text.split()]

    def _p_first(self, text: str) -> float:
        if self.always_first:
            return 1.0
        m, c = _CHOICES.search(text), _CONTEXT.search(text)
        assert m and c, text
        pa = self.p_a(c.group("ctx"))
        return pa if self.is_a(m.group("first")) else 1.0 - pa

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[override]
        self.calls += 1
        text = input[-1].text
        usage = ModelUsage(input_tokens=len(text.split()), output_tokens=1, total_tokens=len(text.split()) + 1)
        if config.prompt_logprobs:
            words = text.split()
            lps = [Logprob(token=w, logprob=word_logprob(w)) for w in words[1:]]
            choice = ChatCompletionChoice(message=ChatMessageAssistant(content=""), stop_reason="max_tokens",
                                          prompt_logprobs=Logprobs(content=lps))
            return ModelOutput(model="fake-dbb", choices=[choice], usage=usage)
        p1 = self._p_first(text)
        if config.logprobs and not self.no_logprobs:
            eps = 1e-12
            top = [TopLogprob(token="a", logprob=math.log(max(p1, eps))),
                   TopLogprob(token="b", logprob=math.log(max(1 - p1, eps)))]
            top.sort(key=lambda t: -t.logprob)
            lp = Logprob(token=top[0].token, logprob=top[0].logprob, top_logprobs=top)
            choice = ChatCompletionChoice(message=ChatMessageAssistant(content=top[0].token),
                                          stop_reason="max_tokens", logprobs=Logprobs(content=[lp]))
            return ModelOutput(model="fake-dbb", choices=[choice], usage=usage)
        m = _CHOICES.search(text)
        if self.rng.random() < self.invalid_rate:
            return ModelOutput(model="fake-dbb", choices=[ChatCompletionChoice(
                message=ChatMessageAssistant(content="Sorry, I cannot pick one."), stop_reason="stop")], usage=usage)
        first = self.rng.random() < p1
        answer = f"a) {m.group('first')}" if first else f"b) {m.group('second')}"
        return ModelOutput(
            model="fake-dbb", choices=[ChatCompletionChoice(message=ChatMessageAssistant(content=answer),
                                                            stop_reason="stop")], usage=usage)


@modelapi(name="fakedbb")
def _fakedbb():
    return FakeDBBModel


def fake_model(**kwargs) -> Model:
    return get_model("fakedbb/model", memoize=False, **kwargs)
