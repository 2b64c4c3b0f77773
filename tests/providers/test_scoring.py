"""Batched scoring (causal, masked PLL, encoder-decoder) against hand-written unbatched loops on tiny models."""

from __future__ import annotations

import asyncio
import random

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.providers.planning import BatchPolicy, _chunk_prefix, plan_chunks
from stereoprobe.providers.scoring import CausalScorer
from tolerances import LOGPROB_ABS, LOGPROB_REL

TEXTS = ["alice is kind.", "alice is very clever and kind.", "alice is a nurse.", "bob is rude.",
         "bob is not lazy, bob is clever.", "wei is a doctor from the city.", "olga", "the nurse was kind",
         "my name is olga, i was a doctor.", "alice is"]


def _generate(model, text: str, config: GenerateConfig, **meta):
    message = ChatMessageUser(content=text, metadata=meta or None)
    return asyncio.run(model.generate([message], config=config))


def _all(model, texts, config, metas=None):
    async def run():
        metas_ = metas or [None] * len(texts)
        return await asyncio.gather(*[model.generate([ChatMessageUser(content=t, metadata=m)], config=config)
                                      for t, m in zip(texts, metas_)])
    return asyncio.run(run())


def _lps(output) -> list[float]:
    return [lp.logprob for lp in output.choices[0].prompt_logprobs.content]


@torch.inference_mode()
def test_causal_prompt_logprobs_match_unbatched_loop(tiny_models):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = tiny_models["llama"]
    tok = AutoTokenizer.from_pretrained(folder)
    ref_model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    model = get_model(f"transformers/{folder}", device="cpu", batch_size=3)
    outputs = _all(model, TEXTS, GenerateConfig(prompt_logprobs=1))
    for text, out in zip(TEXTS, outputs):
        ids = tok(text).input_ids  # [CLS] ... [SEP]: the tokenizer's own special tokens, as vLLM
        expected = []
        for t in range(1, len(ids)):  # one forward per prefix: the most literal definition
            logits = ref_model(torch.tensor([ids[:t]])).logits[0, -1]
            expected.append(torch.log_softmax(logits.double(), -1)[ids[t]].item())
        got = _lps(out)
        assert [lp.token for lp in out.choices[0].prompt_logprobs.content] == [tok.decode([i]) for i in ids[1:]]
        assert got == pytest.approx(expected, abs=LOGPROB_ABS, rel=LOGPROB_REL)
        assert out.completion == ""
        assert out.usage is not None and out.usage.output_tokens == 0


def _random_seqs(n: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    prefixes = [[2] + [rng.randrange(5, 30) for _ in range(rng.randrange(1, 6))] for _ in range(4)]
    seqs = []
    for _ in range(n):
        p = rng.choice(prefixes) if rng.random() < 0.8 else [2]
        seqs.append(p + [rng.randrange(5, 30) for _ in range(rng.randrange(1, 8))])
    return seqs


@torch.inference_mode()
def test_batch_size_and_prefix_sharing_invariance(tiny_models):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_models["llama"], dtype=torch.float32).eval()
    scorer = CausalScorer(model, pad_id=0)
    seqs = _random_seqs(60, seed=7)
    reference = scorer.score(seqs, BatchPolicy(1), prefix_sharing=False)
    for bs in (2, 7, 64):
        for share in (False, True):
            got = scorer.score(seqs, BatchPolicy(bs), prefix_sharing=share)
            for r, g in zip(reference, got):
                assert g.targets == r.targets
                assert g.logprobs == pytest.approx(r.logprobs, abs=LOGPROB_ABS, rel=LOGPROB_REL)
    # a plan with shared prefixes really is exercised
    assert any(c.shared for c in plan_chunks(seqs, 64, True))
    # one batch holding two prefix groups of different prefix lengths (attention mask + explicit positions)
    firsts = sorted({tuple(s[:2]) for s in seqs if len(s) > 3})
    groups = [[s for s in seqs if tuple(s[:2]) == f] for f in firsts]
    groups = [g for g in groups if len(g) > 1]
    lens = [_chunk_prefix(g, list(range(len(g)))) for g in groups]
    assert len(set(lens)) > 1
    batch = [s for g in groups for s in g]
    prefix_lens = [L for g, L in zip(groups, lens) for _ in g]
    dev, finish = scorer._score_chunk(batch, prefix_lens, top_k=3)
    forced = finish(dev.tolist())
    alone = scorer.score(batch, BatchPolicy(1), prefix_sharing=False, top_k=3)
    for f, a in zip(forced, alone):
        assert f.targets == a.targets
        assert f.logprobs == pytest.approx(a.logprobs, abs=LOGPROB_ABS, rel=LOGPROB_REL)
        assert [t[0][0] for t in f.top] == [t[0][0] for t in a.top]


def test_plan_chunks_covers_every_sequence_once():
    seqs = _random_seqs(200, seed=3)
    for share in (False, True):
        plan = plan_chunks(seqs, 16, share)
        seen = sorted(i for c in plan for i in c.indices)
        assert seen == list(range(len(seqs)))
        for c in plan:
            assert len(c.indices) <= 16
            for i, p in zip(c.indices, c.prefix_lens):
                assert len(seqs[i]) > p
                if p:  # the prefix really is shared with another sequence
                    assert p >= 2 and sum(list(s[:p]) == list(seqs[i][:p]) for s in seqs) >= 2


@torch.inference_mode()
def test_masked_lm_pseudo_log_likelihood_matches_hand_loop(tiny_models):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    folder = tiny_models["bert"]
    tok = AutoTokenizer.from_pretrained(folder)
    ref_model = AutoModelForMaskedLM.from_pretrained(folder, dtype=torch.float32).eval()
    model = get_model(f"transformers/{folder}", device="cpu", batch_size=5)
    outputs = _all(model, TEXTS, GenerateConfig(prompt_logprobs=1))
    for text, out in zip(TEXTS, outputs):
        ids = tok(text).input_ids
        expected = []
        for t in range(1, len(ids) - 1):  # every word piece between [CLS] and [SEP], masked alone
            masked = list(ids)
            masked[t] = tok.mask_token_id
            logits = ref_model(torch.tensor([masked])).logits[0, t]
            expected.append(torch.log_softmax(logits.double(), -1)[ids[t]].item())
        assert _lps(out) == pytest.approx(expected, abs=LOGPROB_ABS, rel=LOGPROB_REL)


@torch.inference_mode()
def test_masked_lm_truncation_option(tiny_models):
    model = get_model(f"transformers/{tiny_models['bert']}", device="cpu", mlm_max_length=5)
    out = _generate(model, "my name is olga, i was a doctor.", GenerateConfig(prompt_logprobs=1))
    assert len(out.choices[0].prompt_logprobs.content) == 4  # [CLS] + 4 scored pieces


@torch.inference_mode()
def test_encoder_decoder_scoring_matches_hand_loop(tiny_models):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = tiny_models["t5"]
    tok = AutoTokenizer.from_pretrained(folder)
    ref_model = AutoModelForSeq2SeqLM.from_pretrained(folder, dtype=torch.float32).eval()
    model = get_model(f"transformers/{folder}", device="cpu", batch_size=4)
    encoders = ["my name is alice, i", "bob", "", "wei", "olga", "alice", "bob", "wei", "the", "a"]
    outputs = _all(model, TEXTS, GenerateConfig(prompt_logprobs=1), [{"encoder_text": e} for e in encoders])
    for text, enc_text, out in zip(TEXTS, encoders, outputs):
        enc = tok(enc_text).input_ids
        dec = tok(text).input_ids
        expected = []
        prefix = [ref_model.config.decoder_start_token_id]
        for t in range(len(dec)):  # decoder token t given decoder tokens < t and the encoder input
            logits = ref_model(input_ids=torch.tensor([enc]), decoder_input_ids=torch.tensor([prefix])).logits[0, -1]
            expected.append(torch.log_softmax(logits.double(), -1)[dec[t]].item())
            prefix.append(dec[t])
        assert _lps(out) == pytest.approx(expected, abs=LOGPROB_ABS, rel=LOGPROB_REL)


def test_score_first_token_prepends_bos(tiny_models):
    folder = tiny_models["llama"]
    plain = get_model(f"transformers/{folder}", device="cpu")
    with_bos = get_model(f"transformers/{folder}", device="cpu", score_first_token=True)
    # the tiny tokenizer already starts with [CLS] = BOS (id 2): nothing to prepend, same entries
    assert _lps(_generate(plain, "alice is kind.", GenerateConfig(prompt_logprobs=1))) == pytest.approx(
        _lps(_generate(with_bos, "alice is kind.", GenerateConfig(prompt_logprobs=1))), abs=LOGPROB_ABS, rel=LOGPROB_REL)
    # pre-tokenized input without BOS: score_first_token adds one entry, for the first token
    ids = [10, 14, 11, 25]
    a = _generate(plain, "", GenerateConfig(prompt_logprobs=1), prompt_token_ids=ids)
    b = _generate(with_bos, "", GenerateConfig(prompt_logprobs=1), prompt_token_ids=ids)
    assert len(_lps(a)) == 3 and len(_lps(b)) == 4
    assert _lps(b)[1:] != pytest.approx(_lps(a), abs=1e-3)  # conditioned on BOS now


def test_top_prompt_logprobs(tiny_models):
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu")
    out = _generate(model, "alice is kind.", GenerateConfig(prompt_logprobs=3))
    for entry in out.choices[0].prompt_logprobs.content:
        tops = [t.logprob for t in entry.top_logprobs]
        assert len(tops) == 3 and tops == sorted(tops, reverse=True)
        assert entry.logprob <= tops[0] + 1e-6


def test_tokenize_has_no_special_tokens(tiny_models):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_models["llama"])
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu")
    assert asyncio.run(model.api.tokenize("alice is kind.")) == tok("alice is kind.", add_special_tokens=False).input_ids


# ---- clear errors -------------------------------------------------------------------------------------------
def test_unknown_model_error(tmp_path):
    with pytest.raises(ValueError, match="cannot load model .*neither a local model folder"):
        get_model(f"transformers/{tmp_path / 'no-such-model'}", device="cpu")


def test_unknown_model_arg_error(tiny_models):
    with pytest.raises(ValueError, match="unknown model args \\['colour'\\]"):
        get_model(f"transformers/{tiny_models['llama']}", device="cpu", colour="red")


def test_no_chat_template_error(tiny_models):
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu")
    with pytest.raises(ValueError, match="has no chat template"):
        _generate(model, "hello", GenerateConfig(max_tokens=3))


def test_masked_model_cannot_chat(tiny_models):
    model = get_model(f"transformers/{tiny_models['bert']}", device="cpu")
    with pytest.raises(ValueError, match="masked language model and cannot generate"):
        _generate(model, "hello", GenerateConfig(max_tokens=3))


def test_text_longer_than_context_error(tiny_models):
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu")  # 24 positions
    with pytest.raises(ValueError, match="longer than the context window .*24 tokens"):
        _generate(model, " ".join(["alice"] * 30), GenerateConfig(prompt_logprobs=1))


def test_chat_template_option_generates(tiny_models, tmp_path):
    template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu", chat_template=template)
    out = _generate(model, "alice is", GenerateConfig(max_tokens=4, temperature=0))
    assert out.usage.output_tokens <= 4 and out.usage.input_tokens > 0
    assert out.choices[0].stop_reason in {"stop", "max_tokens"}


def test_encoder_decoder_generates(tiny_models):
    model = get_model(f"transformers/{tiny_models['t5']}", device="cpu")
    out = _generate(model, "my name is alice", GenerateConfig(max_tokens=5, temperature=0))
    assert out.usage.output_tokens <= 5 and out.usage.input_tokens == 6  # 5 word pieces + [SEP]
    assert out.choices[0].stop_reason in {"stop", "max_tokens"}


def test_prompt_logprobs_with_generation(tiny_models):
    template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu", chat_template=template)
    scored = _generate(model, "alice is kind.", GenerateConfig(prompt_logprobs=1))
    both = _generate(model, "alice is kind.", GenerateConfig(prompt_logprobs=1, max_tokens=3, temperature=0,
                                                             num_choices=2))
    assert _lps(both) == pytest.approx(_lps(scored), abs=LOGPROB_ABS, rel=LOGPROB_REL)  # raw text, not the chat-templated prompt
    assert len(both.choices) == 2 and both.choices[0].message.text == both.choices[1].message.text


def test_roles_on_one_model_share_its_weights(tiny_models):
    """inspect builds one API per (model, config): a model bound to several roles loads its weights once,
    and a chat-template override does not leak into the other instances' shared tokenizer."""
    path = f"transformers/{tiny_models['llama']}"
    subject = get_model(path, device="cpu", config=GenerateConfig(temperature=1.0), memoize=False)
    judge = get_model(path, device="cpu", config=GenerateConfig(temperature=0.0), memoize=False)
    assert subject.api is not judge.api
    assert subject.api.model is judge.api.model
    templated = get_model(path, device="cpu", chat_template="{{ messages[0]['content'] }}", memoize=False)
    assert templated.api.model is subject.api.model
    assert templated.api.tokenizer is not subject.api.tokenizer
    assert subject.api.tokenizer.chat_template != templated.api.tokenizer.chat_template
    other_dtype = get_model(path, device="cpu", dtype="float64", memoize=False)
    assert other_dtype.api.model is not subject.api.model
