"""The one fake inspect model of the tests: hand-computable prompt log-probs, answer distributions, token logprobs.

- **Prompt log-probs** (``generate(prompt_logprobs=...)``, GlobalBias and DBB-SG): each whitespace-separated
  word after the first is one "token" with log-probability :func:`word_logprob`, a fixed function of the
  word, so tests compute expected totals independently (:func:`expected_sum`). A prompt containing
  ``NOLOGPROBS`` gets no prompt log-probs, and ``no_prompt_logprobs=True`` gives none at all (a chat API);
  ``broken_after=n``: the calls after the first ``n`` (the capability probe) get no log-probabilities of any
  kind (a server that passes the probe and then breaks).
- **Two-option answers** (DBB multiple choice): ``p_a(context)`` is the probability of answering option A,
  recognised by ``is_a(option_text)``, in prompts of the form ``Context: ...`` / ``a) ...`` / ``b) ...``;
  with ``logprobs`` requested the answer token's top log-probs are ``log p`` and ``log(1 - p)``, otherwise
  the answer is sampled (``seed``); ``always_first`` answers "a)" whatever is shown; ``invalid_rate`` is the
  share of sampled answers that pick neither option.

Every output carries ``usage``, so inspect never counts tokens with tiktoken (which downloads a file).
"""

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
    """Prompt log-probability of one whitespace token: ``-(1 + (sum of code points) % 7) / 2``."""
    return -(1 + sum(map(ord, word)) % 7) / 2


def expected_sum(text: str) -> tuple[float, int]:
    """(sum of the prompt log-probs, number of scored tokens) of ``text``: every word after the first."""
    words = text.split()[1:]
    return sum(word_logprob(w) for w in words), len(words)


class FakeModel(ModelAPI):
    """A deterministic stand-in model (see the module docstring)."""

    def __init__(self, model_name: str = "fake", base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), p_a: Callable[[str], float] | None = None,
                 is_a: Callable[[str], bool] | None = None, always_first: bool = False, no_logprobs: bool = False,
                 seed: int = 0, invalid_rate: float = 0.0, no_prompt_logprobs: bool = False,
                 broken_after: int | None = None) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.p_a, self.is_a, self.always_first, self.no_logprobs = p_a, is_a, always_first, no_logprobs
        self.rng = random.Random(seed)
        self.invalid_rate = invalid_rate
        self.no_prompt_logprobs = no_prompt_logprobs
        self.broken_after = broken_after
        self.calls = 0

    async def tokenize(self, text: str) -> list[int]:
        return [int(hashlib.md5(w.encode()).hexdigest()[:8], 16) for w in text.split()]

    def _p_first(self, text: str) -> float:
        if self.always_first:
            return 1.0
        m, c = _CHOICES.search(text), _CONTEXT.search(text)
        assert m and c and self.p_a and self.is_a, text
        pa = self.p_a(c.group("ctx"))
        return pa if self.is_a(m.group("first")) else 1.0 - pa

    def _reply(self, content: str, usage: ModelUsage, stop: str = "stop", **choice) -> ModelOutput:
        msg = ChatMessageAssistant(content=content, model=self.model_name, source="generate")
        return ModelOutput(model=self.model_name, usage=usage,
                           choices=[ChatCompletionChoice(message=msg, stop_reason=stop, **choice)])

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[override]  # noqa: A002
        self.calls += 1
        text = input[-1].text
        usage = ModelUsage(input_tokens=len(text.split()), output_tokens=1, total_tokens=len(text.split()) + 1)
        if self.broken_after is not None and self.calls > self.broken_after:
            return self._reply("a", usage, "max_tokens")  # no log-probabilities of any kind
        if config.prompt_logprobs:
            plp = None if "NOLOGPROBS" in text or self.no_prompt_logprobs else Logprobs(
                content=[Logprob(token=w, logprob=word_logprob(w)) for w in text.split()[1:]])
            lps = None  # a request asking both kinds (the capability probe) gets the answer token's too
            if config.logprobs and not self.no_logprobs:
                lps = Logprobs(content=[Logprob(token="x", logprob=-1.0, top_logprobs=[TopLogprob(token="x",
                                                                                                  logprob=-1.0)])])
            return self._reply("", usage, "max_tokens", prompt_logprobs=plp, logprobs=lps)
        p1 = self._p_first(text)
        if config.logprobs and not self.no_logprobs:
            eps = 1e-12
            top = [TopLogprob(token="a", logprob=math.log(max(p1, eps))),
                   TopLogprob(token="b", logprob=math.log(max(1 - p1, eps)))]
            top.sort(key=lambda t: -t.logprob)
            lp = Logprob(token=top[0].token, logprob=top[0].logprob, top_logprobs=top)
            return self._reply(top[0].token, usage, "max_tokens", logprobs=Logprobs(content=[lp]))
        m = _CHOICES.search(text)
        if self.rng.random() < self.invalid_rate:
            return self._reply("Sorry, I cannot pick one.", usage)
        first = self.rng.random() < p1
        return self._reply(f"a) {m.group('first')}" if first else f"b) {m.group('second')}", usage)


@modelapi(name="stereoprobe-fake")
def _fake() -> type[FakeModel]:
    return FakeModel


def fake_model(**kwargs) -> Model:
    """A fresh :class:`FakeModel` (``fake_model(p_a=..., is_a=..., seed=1)``; no arguments for prompt log-probs)."""
    return get_model("stereoprobe-fake/model", memoize=False, **kwargs)
