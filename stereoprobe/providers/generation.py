"""Batched chat generation for the ``transformers`` provider (greedy or sampled, stop strings, logprobs,
OpenAI's frequency/presence penalties and logit bias (:mod:`.penalties`), transformers' repetition penalty,
grammar-constrained JSON through :mod:`.structured`); every sampling setting is the request's or neutral, and
each output records them (:mod:`.sampling`)."""

from __future__ import annotations

from typing import Any

import torch
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)

from stereoprobe.providers.args import WorkerRequest
from stereoprobe.providers.generation_batching import fast_generate
from stereoprobe.providers.penalties import OpenAIPenaltiesProcessor
from stereoprobe.providers.protocol import TransformersProvider
from stereoprobe.providers.sampling import EFFECTIVE_SETTINGS_KEY, is_sampling, request_config, settings_record


@torch.inference_mode()
def run_generate(self: TransformersProvider, reqs: list[WorkerRequest]) -> list[ModelOutput]:
    """Generate chat completions for requests sharing one batch key (``self``: the provider instance)."""
    s = reqs[0].payload
    sampling = is_sampling(s["temperature"])
    config, kwargs = generation_call(self, reqs, sampling)
    record = settings_record(config, s)
    # one token / continuous batching; a failed continuous-batching call notes its fallback in ``record``
    fast = fast_generate(self, reqs, config, {EFFECTIVE_SETTINGS_KEY: record}, record)
    if fast is not None:
        return fast
    ids, attention, start = padded_prompts(self, [r.payload["ids"] for r in reqs])
    out = self.model.generate(input_ids=ids.to(self.device), attention_mask=attention.to(self.device), **kwargs)
    sequences = out.sequences.cpu()
    per = s["n"] if sampling else 1  # greedy decoding runs one row per request, copied to every choice
    eos_ids = set(self.stop_ids())
    outputs = []
    for b, req in enumerate(reqs):
        rows = [b * per + (c if sampling else 0) for c in range(s["n"])]
        choices = [decoded_choice(self, sequences[row, start:].tolist(), out.logits, row, eos_ids, s) for row in rows]
        n_in, out_tokens = len(req.payload["ids"]), sum(n for _, n in choices)
        usage = ModelUsage(input_tokens=n_in, output_tokens=out_tokens, total_tokens=n_in + out_tokens)
        outputs.append(ModelOutput(model=self.model_name, choices=[c for c, _ in choices], usage=usage,
                                   metadata={EFFECTIVE_SETTINGS_KEY: dict(record)}))
    return outputs


def generation_call(self: TransformersProvider, reqs: list[WorkerRequest], sampling: bool
                    ) -> tuple[Any, dict[str, Any]]:
    """The resolved ``GenerationConfig`` and the other ``generate()`` arguments of a batch: every sampling setting
    explicit (the request's or neutral, :mod:`.sampling`), stop strings, the seed (set here), and the logits
    processors (OpenAI penalties and logit bias, then the JSON-schema mask)."""
    s = reqs[0].payload
    config = self.model._prepare_generation_config(request_config(s, sampling, self.pad_id))[0]
    # max_new_tokens bounds the output; the global default max_length (20) that preparing merged in would only
    # make generate() warn "Both max_new_tokens and max_length(=20) seem to have been set" on every call
    config.max_length = None
    kwargs: dict[str, Any] = {"generation_config": config}
    if s["stop"]:
        config.stop_strings = list(s["stop"])
        kwargs["tokenizer"] = self.tokenizer
    if s["seed"] is not None:
        torch.manual_seed(int(s["seed"]))
    processors: list[Any] = []
    prompt_length = max(len(r.payload["ids"]) for r in reqs) if self.kind == "causal" else 1
    penalties = OpenAIPenaltiesProcessor(prompt_length, s["frequency_penalty"], s["presence_penalty"],
                                         dict(s["logit_bias"]))
    if penalties.active:  # OpenAI's definitions: generated tokens only, before temperature/top-k/top-p
        processors.append(penalties)
    if s["schema"] is not None:  # last: the grammar mask has the final word
        processors.append(self.schema_processor(s["schema"]))
    if processors:
        kwargs["logits_processor"] = processors
    return config, kwargs


def padded_prompts(self: TransformersProvider, prompts: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Input ids, attention mask and where the generated tokens start in the output rows: causal models pad on
    the left (every prompt ends where generation starts), encoder-decoder models on the right (the decoder output
    begins with the decoder start token)."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    left = self.kind == "causal"
    for b, p in enumerate(prompts):
        span = slice(width - len(p), width) if left else slice(0, len(p))
        ids[b, span] = torch.tensor(p)
        attention[b, span] = 1
    return ids, attention, width if left else 1


def decoded_choice(self: TransformersProvider, gen: list[int], logits: Any, row: int, eos_ids: set[int],
                   s: dict[str, Any]) -> tuple[ChatCompletionChoice, int]:
    """One choice from its generated row: cut at the first end-of-sequence token, decoded, cut at the first stop
    string, with the tokens' log-probabilities when asked; and its number of generated tokens."""
    cut = next((j for j, t in enumerate(gen) if t in eos_ids), len(gen))
    stop_reason = "stop" if cut < len(gen) else "max_tokens"
    gen = gen[:cut]
    text = self.tokenizer.decode(gen, skip_special_tokens=True)
    for stop in s["stop"]:
        at = text.find(stop)
        if at >= 0:
            text, stop_reason = text[:at], "stop"
    logprobs = token_logprobs(self, gen, logits, row, s["top_logprobs"]) if s["logprobs"] else None
    message = ChatMessageAssistant(content=text, model=self.model_name, source="generate")
    return ChatCompletionChoice(message=message, stop_reason=stop_reason, logprobs=logprobs), len(gen)


def token_logprobs(self: TransformersProvider, gen: list[int], logits: Any, row: int, top_logprobs: int
                   ) -> Logprobs:
    """Log-probabilities of the generated tokens of output row ``row`` (``logits[j]``: the scores of step ``j``),
    with the ``top_logprobs`` most likely tokens of each step."""
    content = []
    for j, t in enumerate(gen):
        lp = torch.log_softmax(logits[j][row].float(), dim=-1)
        top = None
        if top_logprobs:
            v, i = lp.topk(top_logprobs)
            top = [TopLogprob(token=self.token_text(int(a)), logprob=float(x)) for a, x in zip(i, v)]
        content.append(Logprob(token=self.token_text(t), logprob=float(lp[t]), top_logprobs=top))
    return Logprobs(content=content)
