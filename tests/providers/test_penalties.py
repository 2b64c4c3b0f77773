"""OpenAI's frequency/presence penalties and logit bias in the transformers provider, -M repetition_penalty and
top_k, and GenerateConfig fields the provider cannot honour (an error naming them, never a silent drop)."""

from __future__ import annotations

import asyncio

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.providers.penalties import OpenAIPenaltiesProcessor
from stereoprobe.providers.settings import HARNESS, HONOURED, unsupported_fields

TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


def _generate(model, text: str, config: GenerateConfig):
    return asyncio.run(model.generate([ChatMessageUser(content=text)], config=config))


def test_processor_matches_hand_computation():
    # two rows, prompt of 3 tokens, then the generated tokens [4, 4, 1] and [2, 0, 2]
    input_ids = torch.tensor([[9, 9, 4, 4, 4, 1], [1, 2, 3, 2, 0, 2]])
    scores = torch.tensor([[0.5, 1.0, -2.0, 3.0, 0.25, 7.0, 0.0, 1.5, -1.0, 2.0],
                           [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]])
    proc = OpenAIPenaltiesProcessor(prompt_length=3, frequency_penalty=0.5, presence_penalty=1.25,
                                    logit_bias={7: -3.0, 0: 2.0})
    got = proc(input_ids, scores)
    # by hand: mu[j] - c[j] * 0.5 - [c[j] > 0] * 1.25 + bias[j]; the prompt's tokens (9, 9, 4 / 1, 2, 3) do not count
    expected = [[0.5 + 2.0, 1.0 - 0.5 - 1.25, -2.0, 3.0, 0.25 - 1.0 - 1.25, 7.0, 0.0, 1.5 - 3.0, -1.0, 2.0],
                [1.0 - 0.5 - 1.25 + 2.0, 2.0, 3.0 - 1.0 - 1.25, 4.0, 5.0, 6.0, 7.0, 8.0 - 3.0, 9.0, 10.0]]
    for row, want in zip(got.tolist(), expected):
        assert row == pytest.approx(want, abs=1e-6)
    assert scores[0, 0].item() == 0.5  # the input scores are not modified in place
    # nothing generated yet: only the bias applies
    first = OpenAIPenaltiesProcessor(6, 0.5, 1.25, {7: -3.0})(input_ids, scores)
    assert first[:, 7].tolist() == pytest.approx([-1.5, 5.0]) and torch.equal(first[:, :7], scores[:, :7])


def test_every_generate_config_field_is_classified():
    fields = set(GenerateConfig.model_fields)
    assert not HARNESS & HONOURED and (HARNESS | HONOURED) <= fields
    assert unsupported_fields(GenerateConfig()) == []  # inspect's defaults never raise
    assert unsupported_fields(GenerateConfig(best_of=1, frequency_penalty=0.5, logit_bias={1: 2.0})) == []
    assert unsupported_fields(GenerateConfig(best_of=3, reasoning_effort="low")) == ["best_of", "reasoning_effort"]


@pytest.mark.parametrize("config, field", [(GenerateConfig(reasoning_effort="low", max_tokens=3), "reasoning_effort"),
                                           (GenerateConfig(best_of=2, max_tokens=3), "best_of"),
                                           (GenerateConfig(extra_body={"x": 1}, prompt_logprobs=1), "extra_body")])
def test_unsupported_field_is_an_error_naming_it(tiny_models, config, field):
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu", chat_template=TEMPLATE)
    with pytest.raises(ValueError, match=f"not supported .*{field}="):
        _generate(model, "alice is", config)


@torch.inference_mode()
def _hand_greedy(model, ids: list[int], steps: int, freq: float, pres: float, rep: float = 1.0) -> list[int]:
    """Greedy decoding by the formulas: OpenAI penalties over generated tokens, transformers' repetition
    penalty (logit / rep if > 0 else logit * rep) over prompt and generated tokens."""
    out: list[int] = []
    for _ in range(steps):
        logits = model(torch.tensor([ids + out])).logits[0, -1].double()
        if rep != 1.0:
            for t in set(ids + out):
                logits[t] = logits[t] / rep if logits[t] > 0 else logits[t] * rep
        for t in set(out):
            logits[t] -= freq * out.count(t) + pres
        out.append(int(logits.argmax()))
    return out


def test_penalties_change_greedy_generation_as_defined(tiny_models):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tiny_models["llama"]
    tok = AutoTokenizer.from_pretrained(folder)
    ref = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    model = get_model(f"transformers/{folder}", device="cpu", chat_template=TEMPLATE, memoize=False)
    prompt = model.api.tokenizer.apply_chat_template([{"role": "user", "content": "alice is"}], add_generation_prompt=True,
                                     tokenize=True, return_dict=True)["input_ids"]
    eos = {tok.eos_token_id, ref.generation_config.eos_token_id}
    plain_ids = _hand_greedy(ref, list(prompt), 8, 0.0, 0.0)
    assert len(set(plain_ids)) < len(plain_ids)  # the random model repeats itself without penalties
    for freq, pres in ((0.0, 50.0), (0.7, 0.3)):
        want = _hand_greedy(ref, list(prompt), 8, freq, pres)
        cut = next((k for k, t in enumerate(want) if t in eos), len(want))
        out = _generate(model, "alice is", GenerateConfig(max_tokens=8, temperature=0, frequency_penalty=freq,
                                                          presence_penalty=pres))
        assert out.completion == tok.decode(want[:cut], skip_special_tokens=True)
    no_repeat = _hand_greedy(ref, list(prompt), 8, 0.0, 50.0)
    assert len(set(no_repeat)) == len(no_repeat)


def test_repetition_penalty_and_top_k_model_args(tiny_models):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tiny_models["llama"]
    tok = AutoTokenizer.from_pretrained(folder)
    ref = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    model = get_model(f"transformers/{folder}", device="cpu", chat_template=TEMPLATE, repetition_penalty=1.2,
                      top_k=1, memoize=False)
    prompt = model.api.tokenizer.apply_chat_template([{"role": "user", "content": "bob is"}],
                                                     add_generation_prompt=True, tokenize=True,
                                                     return_dict=True)["input_ids"]
    want = _hand_greedy(ref, list(prompt), 6, 0.0, 0.0, rep=1.2)
    cut = next((k for k, t in enumerate(want) if t in {tok.eos_token_id, ref.generation_config.eos_token_id}),
               len(want))
    assert model.api.repetition_penalty == 1.2 and model.api.default_top_k == 1
    out = _generate(model, "bob is", GenerateConfig(max_tokens=6, temperature=0))
    assert out.completion == tok.decode(want[:cut], skip_special_tokens=True)
    # -M top_k=1 turns sampling greedy: two seeds give the greedy text
    sampled = [_generate(model, "bob is", GenerateConfig(max_tokens=6, temperature=1.0, seed=s)).completion
               for s in (1, 2)]
    assert sampled == [out.completion] * 2
    with pytest.raises(ValueError, match="repetition_penalty must be a finite number > 0"):
        get_model(f"transformers/{folder}", device="cpu", repetition_penalty=0, memoize=False)


@pytest.mark.parametrize("config", [GenerateConfig(prompt_logprobs=1, system_message="You are a persona."),
                                    GenerateConfig(prompt_logprobs=1)])
def test_system_message_in_likelihood_scoring_is_an_error(tiny_models, config):
    """Likelihood scoring reads the last user message's raw text: a system message (inspect inserts
    --system-message into the conversation) would be ignored, so it is refused, naming it."""
    from inspect_ai.model import ChatMessageSystem

    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu")
    messages = [ChatMessageUser(content="alice is")]
    if config.system_message is None:
        messages.insert(0, ChatMessageSystem(content="You are a persona."))
    with pytest.raises(ValueError, match="system message"):
        asyncio.run(model.generate(messages, config=config))
    # without it the same request scores
    out = asyncio.run(model.generate([ChatMessageUser(content="alice is")], config=GenerateConfig(prompt_logprobs=1)))
    assert out.choices[0].prompt_logprobs is not None
