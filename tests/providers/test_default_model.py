"""The provider on the bundled default model (SmolLM2-135M-Instruct): numerics, inspect runs, lm-eval agreement."""

from __future__ import annotations

import asyncio
import math

import pytest
import torch
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import perplexity
from inspect_ai.solver import generate
from tolerances import LOGPROB_ABS, LOGPROB_REL, sum_tolerance

pytestmark = pytest.mark.slow

SENTENCES = ["Alice is kind.", "Mohammed is a nurse.", "Wei Chen is very intelligent and hard-working.",
             "Olga is lazy.", "Alice is a doctor from a small village near the sea.", "Mohammed is kind.",
             "Wei Chen is kind.", "Olga is a nurse.", "The weather was cold, so we stayed inside and read.", "Hi"]


@pytest.fixture(scope="module")
def reference():
    """An independent copy of the default model and tokenizer, loaded directly with transformers."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from stereoprobe.providers.default_model import default_model_dir

    folder = default_model_dir()
    return AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval(), AutoTokenizer.from_pretrained(folder)


@torch.inference_mode()
def unbatched_logprobs(reference, ids: list[int]) -> list[float]:
    """log P(x_t | x_<t), t ≥ 1, from one unpadded forward pass of the reference model (float64 softmax)."""
    model, _ = reference
    logits = model(torch.tensor([ids])).logits[0, :-1].double()
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()


def _score_all(model, texts, config):
    async def run():
        return await asyncio.gather(*[model.generate(t, config=config) for t in texts])

    return asyncio.run(run())


def test_prompt_logprobs_equal_unbatched_transformers(reference):
    _, tok = reference
    model = get_model("transformers/default")
    outputs = _score_all(model, SENTENCES, GenerateConfig(prompt_logprobs=1))
    for text, out in zip(SENTENCES, outputs):
        ids = tok(text).input_ids  # SmolLM2 adds no BOS: the first word has no entry, as on vLLM
        entries = out.choices[0].prompt_logprobs.content
        assert [e.token for e in entries] == [tok.decode([i]) for i in ids[1:]]
        assert [e.logprob for e in entries] == pytest.approx(unbatched_logprobs(reference, ids), abs=LOGPROB_ABS, rel=LOGPROB_REL)


def test_score_first_token_and_batch_size_invariance(reference):
    _, tok = reference
    model = get_model("transformers/default", score_first_token=True)
    api = model.api
    texts = [f"{n} is {d}." for n in ("Alice", "Wei Chen", "Olga") for d in ("kind", "a nurse", "very lazy")] + SENTENCES
    results = {}
    for bs, share in ((1, False), (5, True), (64, False), (64, True)):
        api.batch_size, api.prefix_sharing = bs, share
        results[bs, share] = api.score_texts(texts)
    api.batch_size, api.prefix_sharing = 64, True
    for text, a in zip(texts, results[1, False]):
        ids = [tok.bos_token_id] + tok(text).input_ids  # BOS (id 1) prepended: every word is scored
        assert a.targets == ids[1:]
        assert a.logprobs == pytest.approx(unbatched_logprobs(reference, ids), abs=LOGPROB_ABS, rel=LOGPROB_REL)
    for key, got in results.items():
        for a, b in zip(results[1, False], got):
            assert b.logprobs == pytest.approx(a.logprobs, abs=LOGPROB_ABS, rel=LOGPROB_REL), key


def test_perplexity_scorer_through_inspect_eval(reference, tmp_path):
    _, tok = reference
    texts = SENTENCES[:5]
    task = Task(dataset=[Sample(id=f"s{i}", input=t) for i, t in enumerate(texts)],
                solver=generate(), scorer=perplexity(), config=GenerateConfig(prompt_logprobs=1))
    [log] = eval(task, model="transformers/default", log_dir=str(tmp_path), display="none", log_format="json")
    assert log.status == "success"
    expected_nll, total_lp, total_n, per_seq = {}, 0.0, 0, []
    for i, t in enumerate(texts):
        lps = unbatched_logprobs(reference, tok(t).input_ids)
        expected_nll[f"s{i}"] = -sum(lps) / len(lps)
        total_lp += sum(lps)
        total_n += len(lps)
        per_seq.append(-sum(lps) / len(lps))
    for sample in log.samples:
        score = sample.scores["perplexity"]
        assert score.value == pytest.approx(expected_nll[sample.id], abs=LOGPROB_ABS, rel=LOGPROB_REL)  # mean NLL per token
        assert sample.output.completion == ""
    metrics = log.results.scores[0].metrics
    assert metrics["perplexity_per_token"].value == pytest.approx(math.exp(-total_lp / total_n), rel=LOGPROB_ABS)
    assert metrics["perplexity_per_seq"].value == pytest.approx(math.exp(sum(per_seq) / len(per_seq)), rel=LOGPROB_ABS)
    # exp(mean NLL): an error of d nats per token in the mean is a relative error of ~d in the perplexity


def test_chat_generation_through_inspect_eval(tmp_path):
    task = Task(dataset=[Sample(id=i, input=q) for i, q in enumerate(["What is the capital of France?", "Say hello.",
                                                                      "Name a fruit."])],
                solver=generate(), config=GenerateConfig(max_tokens=12, temperature=0))
    [log] = eval(task, model="transformers/default", log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    for sample in log.samples:
        assert sample.output.completion.strip()
        assert 0 < sample.output.usage.output_tokens <= 12
        assert sample.output.usage.input_tokens > 5  # the chat template is applied
    france = next(s for s in log.samples if s.id == 0)
    assert "Paris" in france.output.completion
    # greedy decoding is deterministic and does not depend on the batch it ran in
    alone = asyncio.run(get_model("transformers/default").generate(
        "Name a fruit.", config=GenerateConfig(max_tokens=12, temperature=0)))
    assert alone.completion == next(s for s in log.samples if s.id == 2).output.completion


def test_output_logprobs_and_stop_sequences(reference):
    model = get_model("transformers/default")
    out = asyncio.run(model.generate("Count from 1 to 10, separated by commas.",
                                     config=GenerateConfig(max_tokens=30, temperature=0, logprobs=True,
                                                           top_logprobs=3, stop_seqs=["5"])))
    choice = out.choices[0]
    assert "5" not in choice.message.text and choice.stop_reason == "stop"
    for entry in choice.logprobs.content:
        tops = [t.logprob for t in entry.top_logprobs]
        assert len(tops) == 3 and entry.logprob == pytest.approx(tops[0], abs=LOGPROB_ABS, rel=LOGPROB_REL)  # greedy: the top token
    sampled = asyncio.run(model.generate("Tell me a word.", config=GenerateConfig(
        max_tokens=8, temperature=1.0, seed=11, num_choices=3)))
    again = asyncio.run(model.generate("Tell me a word.", config=GenerateConfig(
        max_tokens=8, temperature=1.0, seed=11, num_choices=3)))
    assert len(sampled.choices) == 3
    assert [c.message.text for c in sampled.choices] == [c.message.text for c in again.choices]


def test_agrees_with_lm_eval_loglikelihood_rolling(reference):
    """lm-eval HFLM prepends BOS (id 1) in loglikelihood_rolling: compare with score_first_token=true."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    ref_model, tok = reference
    assert tok.bos_token_id == 1
    lm = HFLM(pretrained=ref_model, tokenizer=tok, batch_size=4, device="cpu")
    requests = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(t,), idx=i)
                for i, t in enumerate(SENTENCES)]
    theirs = lm.loglikelihood_rolling(requests, disable_tqdm=True)
    ours = get_model("transformers/default", score_first_token=True).api.score_texts(SENTENCES)
    for text, t, o in zip(SENTENCES, theirs, ours):
        n = len(o.logprobs)
        assert n == len(tok(text).input_ids)
        assert abs(o.total - t) <= sum_tolerance(n), text  # a sum of n per-token values


def test_inspect_gets_the_model_info_without_a_second_provider(tmp_path, monkeypatch):
    """inspect looks the model up at the first model event (its context window); the provider registers it,
    so an ``inspect eval`` builds the provider once (it built a second one, with a second scorer, on the event
    loop before); information the user registered for the model is kept."""
    from inspect_ai.model import ModelInfo, get_model_info, set_model_info

    from stereoprobe.providers.transformers_api import TransformersAPI

    built: list[str] = []
    init = TransformersAPI.__init__

    def counting(self, model_name, *a, **k):
        built.append(model_name)
        init(self, model_name, *a, **k)

    monkeypatch.setattr(TransformersAPI, "__init__", counting)
    task = Task(dataset=[Sample(input="Alice is kind.")], solver=generate(), scorer=perplexity(),
                config=GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0))
    # a model argument of its own: a provider another test of this process built (inspect's model cache) is not
    # reused, so this eval builds one, and only one
    [log] = eval(task, model="transformers/default", model_args={"gen_batch_size": 3}, log_dir=str(tmp_path),
                 display="none")
    assert log.status == "success" and built == ["default"]
    info = get_model_info("transformers/default")
    assert info is not None and info.context_length == 8192 and built == ["default"]  # config.json: 8192
    set_model_info("transformers/default", ModelInfo(context_length=77))
    get_model("transformers/default", memoize=False)
    assert get_model_info("transformers/default").context_length == 77
    set_model_info("transformers/default", ModelInfo(model="transformers/default", context_length=8192))  # as built
