"""Cross-request and generation batching of the transformers provider, on CPU float32 with a tiny Llama.

Concurrent requests are held back until all of them are queued (the worker's ``_take`` waits on the queue's
condition for a count, never on time), so each test knows they were batched together; results are compared
with each request run alone and with plain transformers loops."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.likelihood import RESULTS_KEY, SUM_LOGPROB, TEXTS_KEY
from stereoprobe.providers import generation_batching
from stereoprobe.providers.generation_batching import CONTINUOUS_FALLBACK
from stereoprobe.providers.sampling import EFFECTIVE_SETTINGS_KEY

TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
PROMPTS = ["alice is", "the doctor from the village was", "bob", "my name is wei and i was very", "olga is a nurse",
           "a city", "the nurse was kind and", "i"]
ONE_TOKEN = GenerateConfig(max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=5)
SCORE = GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0)


def _hold_until_queued(api: Any, n: int) -> list[int]:
    """The worker takes nothing until ``n`` requests are queued; returns the list of taken batch sizes."""
    taken: list[int] = []
    take = api._take

    def held() -> list[Any]:  # called with api._cv held: wait() releases it until _submit notifies
        while len(api._queue) < n and not taken:
            api._cv.wait()
        batch = take()
        taken.append(len(batch))
        return batch

    api._take = held
    return taken


def _run(model: Any, calls: list[tuple[list[ChatMessageUser], GenerateConfig]]) -> list[Any]:
    async def go() -> list[Any]:
        return list(await asyncio.gather(*(model.generate(m, config=c) for m, c in calls)))

    return asyncio.run(go())


def _model(tiny_models: dict[str, Any], **args: Any) -> Any:
    return get_model(f"transformers/{tiny_models['llama']}", device="cpu", chat_template=TEMPLATE, memoize=False,
                     **args)


@pytest.mark.parametrize("fixed", [{}, {"batch_invariant": "true", "microbatch_tokens": 40}])
def test_one_token_requests_batched_together_equal_plain_generate(tiny_models, fixed, monkeypatch):
    model = _model(tiny_models, **fixed)
    api = model.api
    routed: list[int] = []
    one_token = generation_batching._one_token_outputs
    monkeypatch.setattr(generation_batching, "_one_token_outputs",
                        lambda api, reqs, meta: (routed.append(len(reqs)), one_token(api, reqs, meta))[1])
    taken = _hold_until_queued(api, len(PROMPTS))
    forwards: list[tuple[int, ...]] = []
    api.scorer.body.register_forward_hook(lambda m, a, kw, out: forwards.append(tuple(kw["input_ids"].shape)),
                                          with_kwargs=True)
    outs = _run(model, [([ChatMessageUser(content=p)], ONE_TOKEN) for p in PROMPTS])
    assert taken[0] == len(PROMPTS) and routed == [len(PROMPTS)]  # one worker batch, the one-token route ...
    widths = {w for _, w in forwards}
    assert len(forwards) < len(PROMPTS) and len(widths) == len(forwards) or fixed  # ... one forward per width
    # each request alone: the same bits
    for p, out in zip(PROMPTS, outs):
        [alone] = _run(model, [([ChatMessageUser(content=p)], ONE_TOKEN)])
        assert alone.choices[0].logprobs == out.choices[0].logprobs
        assert alone.choices[0].message.text == out.choices[0].message.text
    # a plain transformers loop: one prompt at a time, greedy generate with its logits
    tok, lm = api.tokenizer, api.model
    for p, out in zip(PROMPTS, outs):
        ids = tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True, tokenize=True,
                                      return_dict=True)["input_ids"]
        with torch.inference_mode():
            ref = lm.generate(torch.tensor([ids]), max_new_tokens=1, do_sample=False, output_logits=True,
                              return_dict_in_generate=True, pad_token_id=api.pad_id)
        token = int(ref.sequences[0, -1])
        lp = torch.log_softmax(ref.logits[0][0].float(), dim=-1)
        [entry] = out.choices[0].logprobs.content
        assert entry.token == api.token_text(token) and abs(entry.logprob - float(lp[token])) <= 1e-5
        top = lp.topk(5)
        assert [t.token for t in entry.top_logprobs] == [api.token_text(int(i)) for i in top.indices]
        assert max(abs(t.logprob - float(v)) for t, v in zip(entry.top_logprobs, top.values)) <= 1e-5


def test_small_likelihood_requests_share_forward_passes(tiny_models):
    """DBB-shaped grouped requests of two texts, all queued at once: one worker round, fewer forwards than
    requests, and every sum bit-identical to the request scored alone."""
    model = _model(tiny_models, batch_size=64)
    api = model.api
    groups = [[{"id": f"{g}:a", "text": f"{PROMPTS[g]} a nurse."}, {"id": f"{g}:b", "text": f"{PROMPTS[g]} a doctor."}]
              for g in range(len(PROMPTS))]
    calls = [([ChatMessageUser(content="t", metadata={TEXTS_KEY: items})], SCORE) for items in groups]
    taken = _hold_until_queued(api, len(calls))
    forwards: list[int] = []
    api.scorer.body.register_forward_hook(lambda m, a, kw, out: forwards.append(1), with_kwargs=True)
    together = [o.metadata[RESULTS_KEY][SUM_LOGPROB] for o in _run(model, calls)]
    assert taken[0] == len(calls) and len(forwards) < len(calls)
    for call, sums in zip(calls, together):
        [alone] = _run(model, [call])
        assert alone.metadata[RESULTS_KEY][SUM_LOGPROB] == sums


@pytest.mark.slow
def test_continuous_batching_equals_a_plain_greedy_loop(tiny_models, monkeypatch):
    model = _model(tiny_models, continuous_batching="true")
    api = model.api
    assert hasattr(api.model, "generate_batch")
    taken = _hold_until_queued(api, len(PROMPTS))
    batches: list[int] = []
    generate_batch = api.model.generate_batch
    monkeypatch.setattr(api.model, "generate_batch",
                        lambda inputs, **kw: (batches.append(len(inputs)), generate_batch(inputs, **kw))[1])
    config = GenerateConfig(max_tokens=6, temperature=0.0)
    outs = _run(model, [([ChatMessageUser(content=p)], config) for p in PROMPTS])
    assert taken[0] == len(PROMPTS) and batches == [len(PROMPTS)]
    tok, lm = api.tokenizer, api.model
    for p, out in zip(PROMPTS, outs):
        ids = tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True, tokenize=True,
                                      return_dict=True)["input_ids"]
        with torch.inference_mode():
            ref = lm.generate(torch.tensor([ids]), max_new_tokens=6, do_sample=False, pad_token_id=api.pad_id,
                              eos_token_id=api.stop_ids())
        gen = ref[0, len(ids):].tolist()
        cut = next((j for j, t in enumerate(gen) if t in api.stop_ids()), len(gen))
        assert out.choices[0].message.text == tok.decode(gen[:cut], skip_special_tokens=True)
        assert out.usage.output_tokens == cut


def test_continuous_batching_failure_falls_back_to_padded_generation(tiny_models, monkeypatch, caplog):
    model = _model(tiny_models, continuous_batching="true")
    api = model.api

    def broken(inputs, **kw):
        raise RuntimeError("no paged attention for this model")

    monkeypatch.setattr(api.model, "generate_batch", broken)
    config = GenerateConfig(max_tokens=4, temperature=0.0)
    [out] = _run(model, [([ChatMessageUser(content=PROMPTS[1])], config)])
    # the fallback is this call's only: the shared provider keeps its setting, the output records why
    assert api.continuous_batching is True and "continuous batching failed" in caplog.text
    assert "no paged attention" in caplog.text
    record = out.metadata[EFFECTIVE_SETTINGS_KEY]
    assert record[CONTINUOUS_FALLBACK] == "RuntimeError: no paged attention for this model"
    plain = _model(tiny_models, continuous_batching="false")
    [ref] = _run(plain, [([ChatMessageUser(content=PROMPTS[1])], config)])
    assert out.choices[0].message.text == ref.choices[0].message.text
    assert CONTINUOUS_FALLBACK not in ref.metadata[EFFECTIVE_SETTINGS_KEY]
    calls: list[int] = []  # the next call tries continuous batching again

    def counted(inputs, **kw):
        calls.append(len(inputs))
        raise RuntimeError("still none")

    monkeypatch.setattr(api.model, "generate_batch", counted)
    [again] = _run(model, [([ChatMessageUser(content=PROMPTS[1])], config)])
    assert calls == [1] and again.metadata[EFFECTIVE_SETTINGS_KEY][CONTINUOUS_FALLBACK] == "RuntimeError: still none"
