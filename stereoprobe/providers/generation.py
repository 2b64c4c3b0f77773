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

from stereoprobe.providers.penalties import OpenAIPenaltiesProcessor
from stereoprobe.providers.sampling import EFFECTIVE_SETTINGS_KEY, is_sampling, request_config, settings_record


@torch.inference_mode()
def run_generate(self: Any, reqs: list[Any]) -> list[ModelOutput]:
    """Generate chat completions for requests sharing one batch key (``self``: the provider instance)."""
    s = reqs[0].payload
    tok = self.tokenizer
    n = s["n"]
    sampling = is_sampling(s["temperature"])
    # every sampling setting explicit (the request's or neutral), resolved as generate() resolves it
    config = self.model._prepare_generation_config(request_config(s, sampling, self.pad_id))[0]
    kwargs: dict[str, Any] = {"generation_config": config}
    if s["stop"]:
        config.stop_strings = list(s["stop"])
        kwargs["tokenizer"] = tok
    if s["seed"] is not None:
        torch.manual_seed(int(s["seed"]))
    record = settings_record(config, s)
    processors: list[Any] = []
    prompt_length = max(len(r.payload["ids"]) for r in reqs) if self.kind == "causal" else 1
    penalties = OpenAIPenaltiesProcessor(prompt_length, s["frequency_penalty"], s["presence_penalty"],
                                         dict(s["logit_bias"]))
    if penalties.active:  # OpenAI's definitions: generated tokens only, before temperature/top-k/top-p
        processors.append(penalties)
    if s["schema"] is not None:  # last: the grammar mask has the final word
        processors.append(self._schema_processor(s["schema"]))
    if processors:
        kwargs["logits_processor"] = processors

    prompts = [r.payload["ids"] for r in reqs]
    width = max(len(p) for p in prompts)
    if self.kind == "causal":  # left padding so every prompt ends where generation starts
        ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        att = torch.zeros_like(ids)
        for b, p in enumerate(prompts):
            ids[b, width - len(p):] = torch.tensor(p)
            att[b, width - len(p):] = 1
        start = width
    else:
        ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        att = torch.zeros_like(ids)
        for b, p in enumerate(prompts):
            ids[b, : len(p)] = torch.tensor(p)
            att[b, : len(p)] = 1
        start = 1  # decoder output begins with the decoder start token
    out = self.model.generate(input_ids=ids.to(self.device), attention_mask=att.to(self.device), **kwargs)
    sequences = out.sequences.cpu()
    per = n if sampling else 1
    eos = self.model.generation_config.eos_token_id
    eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if tok.eos_token_id is not None:
        eos_ids.add(tok.eos_token_id)

    outputs = []
    for b, req in enumerate(reqs):
        choices = []
        out_tokens = 0
        for c in range(n):
            row = b * per + (c if sampling else 0)
            gen = sequences[row, start:].tolist()
            stop_reason = "max_tokens"
            cut = len(gen)
            for j, t in enumerate(gen):
                if t in eos_ids:
                    cut, stop_reason = j, "stop"
                    break
            gen = gen[:cut]
            text = tok.decode(gen, skip_special_tokens=True)
            for stop in s["stop"]:
                at = text.find(stop)
                if at >= 0:
                    text, stop_reason = text[:at], "stop"
            out_tokens += len(gen)
            logprobs = None
            if s["logprobs"]:
                content = []
                for j, t in enumerate(gen):
                    lp = torch.log_softmax(out.logits[j][row].float(), dim=-1)
                    top = None
                    if s["top_logprobs"]:
                        v, i = lp.topk(s["top_logprobs"])
                        top = [TopLogprob(token=self._token_text(int(a)), logprob=float(x)) for a, x in zip(i, v)]
                    content.append(Logprob(token=self._token_text(t), logprob=float(lp[t]), top_logprobs=top))
                logprobs = Logprobs(content=content)
            choices.append(
                ChatCompletionChoice(
                    message=ChatMessageAssistant(content=text, model=self.model_name, source="generate"),
                    stop_reason=stop_reason,
                    logprobs=logprobs,
                )
            )
        n_in = len(req.payload["ids"])
        usage = ModelUsage(input_tokens=n_in, output_tokens=out_tokens, total_tokens=n_in + out_tokens)
        outputs.append(ModelOutput(model=self.model_name, choices=choices, usage=usage,
                                   metadata={EFFECTIVE_SETTINGS_KEY: dict(record)}))
    return outputs
