"""OpenAI's frequency and presence penalties and logit bias as a transformers logits processor.

OpenAI's definition (API reference, "Parameter details: frequency and presence penalties"), applied to the
logits of the next token before sampling::

    mu[j] = mu[j] - c[j] * frequency_penalty - float(c[j] > 0) * presence_penalty + logit_bias[j]

where ``c[j]`` is how often token ``j`` was sampled *so far in the generated continuation* (prompt tokens do
not count, unlike transformers' ``repetition_penalty``, which divides/multiplies the logits of every token of
the prompt and the continuation). vLLM's ``frequency_penalty``/``presence_penalty`` follow the same definition.

transformers runs a caller's logits processors after its own (``repetition_penalty``) and before the sampling
warpers (temperature, top-k, top-p), so the penalties act on the raw logits as OpenAI's do.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch


class OpenAIPenaltiesProcessor:
    """Subtract ``frequency_penalty * count + presence_penalty * [count > 0]`` from the logits of tokens already
    generated, and add ``logit_bias``; counts cover the tokens after the first ``prompt_length`` positions of
    ``input_ids`` (the generated continuation; for encoder-decoder models, after the decoder start token)."""

    def __init__(self, prompt_length: int, frequency_penalty: float = 0.0, presence_penalty: float = 0.0,
                 logit_bias: Mapping[int, float] | None = None) -> None:
        if prompt_length < 0:
            raise ValueError(f"prompt_length must be >= 0, got {prompt_length}")
        self.prompt_length = prompt_length
        self.frequency_penalty = float(frequency_penalty)
        self.presence_penalty = float(presence_penalty)
        self.logit_bias = {int(k): float(v) for k, v in (logit_bias or {}).items()}

    @property
    def active(self) -> bool:
        return bool(self.frequency_penalty or self.presence_penalty or self.logit_bias)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        scores = scores.clone()
        generated = input_ids[:, self.prompt_length :]
        if generated.shape[1] and (self.frequency_penalty or self.presence_penalty):
            counts = torch.zeros(scores.shape, dtype=scores.dtype, device=scores.device)
            counts.scatter_add_(1, generated.clamp(max=scores.shape[1] - 1),
                                torch.ones(generated.shape, dtype=scores.dtype, device=scores.device))
            scores -= self.frequency_penalty * counts + self.presence_penalty * (counts > 0).to(scores.dtype)
        if self.logit_bias:
            ids = torch.tensor(list(self.logit_bias), dtype=torch.long, device=scores.device)
            bias = torch.tensor(list(self.logit_bias.values()), dtype=scores.dtype, device=scores.device)
            scores[:, ids] += bias
        return scores
