"""The transformers provider samples with the request's settings and neutral values for everything else, never
with the model folder's ``generation_config.json`` nor transformers' own defaults (top-k 50), and records what
ran in every output's metadata (issue 27.2)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.providers.sampling import EFFECTIVE_SETTINGS_KEY

PROMPT = "Tell me a story."
# what Qwen2.5-Instruct's folder sets (top_k 20, repetition_penalty 1.05) and more, each of which changes outputs
TUNED = {"do_sample": True, "temperature": 0.1, "top_k": 1, "top_p": 0.5, "repetition_penalty": 1.05, "min_p": 0.3,
         "typical_p": 0.5, "no_repeat_ngram_size": 2, "min_new_tokens": 4}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny random Llama over the bundled model's tokenizer (49,152 tokens, so a top-k of 50 truncates its
    nearly flat distributions), saved twice: as is, and with a generation_config.json that sets :data:`TUNED`."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from stereoprobe.providers.default_model import default_model_dir

    root = tmp_path_factory.mktemp("effective_settings")
    plain = root / "plain"
    plain.mkdir()
    for f in default_model_dir().iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "chat_template")):
            shutil.copy(f, plain / f.name)
    tok = AutoTokenizer.from_pretrained(str(plain))
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=1, intermediate_size=32, max_position_embeddings=512,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(plain)
    tuned = root / "tuned"
    shutil.copytree(plain, tuned)
    config = json.loads((tuned / "generation_config.json").read_text())
    (tuned / "generation_config.json").write_text(json.dumps({**config, **TUNED}))
    return {"plain": plain, "tuned": tuned}


def _model(folder: Path, **args):
    return get_model(f"transformers/{folder}", device="cpu", memoize=False, gen_batch_size=1, **args)


def _generate(model, config: GenerateConfig):
    return asyncio.run(model.generate([ChatMessageUser(content=PROMPT)], config=config))


@torch.inference_mode()
def _hand_sampled(folder: Path, seed: int, steps: int, temperature: float = 1.0) -> str:
    """Ancestral sampling from the full softmax by hand (no top-k/top-p/penalty), with the RNG calls
    transformers makes (one ``torch.multinomial`` per step after ``torch.manual_seed``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    ref = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32).eval()
    ids = list(tok.apply_chat_template([{"role": "user", "content": PROMPT}], add_generation_prompt=True,
                                       tokenize=True, return_dict=True)["input_ids"])
    torch.manual_seed(seed)
    out: list[int] = []
    for _ in range(steps):
        logits = ref(torch.tensor([ids + out])).logits[0, -1].float()
        token = int(torch.multinomial(torch.softmax(logits / temperature, dim=-1), 1))
        if token == tok.eos_token_id:
            break
        out.append(token)
    return tok.decode(out, skip_special_tokens=True)


def test_folder_generation_config_never_applies(folders):
    plain, tuned = _model(folders["plain"]), _model(folders["tuned"])
    seeds = range(1, 7)
    config = GenerateConfig(temperature=1.0, max_tokens=6)
    got = {name: [_generate(m, config.merge(GenerateConfig(seed=s))).completion for s in seeds]
           for name, m in {"plain": plain, "tuned": tuned}.items()}
    assert got["tuned"] == got["plain"]
    assert len(set(got["tuned"])) == 6  # top_k 1 from the folder would give one story
    # the full distribution: transformers' default top-k 50 would draw other tokens from the same RNG state
    assert got["plain"][:3] == [_hand_sampled(folders["plain"], s, 6) for s in (1, 2, 3)]
    greedy = GenerateConfig(temperature=0.0, max_tokens=6)
    assert _generate(tuned, greedy).completion == _generate(plain, greedy).completion  # no repetition penalty


def test_effective_settings_recorded(folders):
    model = _model(folders["tuned"])
    out = _generate(model, GenerateConfig(temperature=0.8, max_tokens=5, seed=3, frequency_penalty=0.6))
    record = out.metadata[EFFECTIVE_SETTINGS_KEY]
    assert record == {
        "do_sample": True, "temperature": 0.8, "top_p": 1.0, "top_k": None, "min_p": 0.0, "typical_p": 1.0,
        "epsilon_cutoff": 0.0, "eta_cutoff": 0.0, "top_h": None, "repetition_penalty": 1.0,
        "encoder_repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "num_beams": 1, "max_new_tokens": 5,
        "num_return_sequences": 1, "frequency_penalty": 0.6, "presence_penalty": 0.0, "logit_bias": {}, "stop": [],
        "seed": 3, "num_choices": 1, "reasoning": None, "response_schema": False,
    }
    json.dumps(record)  # a log can hold it
    greedy = _generate(model, GenerateConfig(temperature=0, max_tokens=4, seed=9)).metadata[EFFECTIVE_SETTINGS_KEY]
    assert greedy["do_sample"] is False and greedy["seed"] is None and greedy["max_new_tokens"] == 4
    assert all(greedy[k] is None for k in ("temperature", "top_p", "top_k", "min_p", "typical_p"))
    assert greedy["repetition_penalty"] == 1.0 and greedy["no_repeat_ngram_size"] == 0
    # no temperature: greedy, whatever the folder's do_sample says
    assert _generate(model, GenerateConfig(max_tokens=2)).metadata[EFFECTIVE_SETTINGS_KEY]["do_sample"] is False


def test_request_and_model_arg_settings_are_what_runs(folders):
    model = _model(folders["plain"], repetition_penalty=1.2, top_k=7)
    out = _generate(model, GenerateConfig(temperature=0.5, top_p=0.9, max_tokens=3, seed=1, num_choices=2))
    record = out.metadata[EFFECTIVE_SETTINGS_KEY]
    assert (record["top_k"], record["top_p"], record["temperature"]) == (7, 0.9, 0.5)
    assert (record["repetition_penalty"], record["num_return_sequences"], record["num_choices"]) == (1.2, 2, 2)
    request_k = _generate(model, GenerateConfig(temperature=0.5, top_k=3, max_tokens=3, seed=1))
    assert request_k.metadata[EFFECTIVE_SETTINGS_KEY]["top_k"] == 3  # the request wins over -M top_k


@pytest.mark.parametrize("model_arg, request_top_k", [("none", None), (None, 0), (7, 0), ("0", None)])
def test_no_top_k_can_be_asked_for(folders, model_arg, request_top_k):
    args = {} if model_arg is None else {"top_k": model_arg}
    model = _model(folders["plain"], **args)
    config = GenerateConfig(temperature=1.0, max_tokens=6, seed=2, top_k=request_top_k)
    out = _generate(model, config)
    assert out.metadata[EFFECTIVE_SETTINGS_KEY]["top_k"] is None
    assert out.completion == _hand_sampled(folders["plain"], 2, 6)


def test_record_reaches_the_log(folders, tmp_path):
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.event import ModelEvent
    from inspect_ai.solver import generate

    task = Task(dataset=[Sample(input=PROMPT, target="")], solver=generate(),
                config=GenerateConfig(temperature=0.7, max_tokens=3, seed=5))
    log = eval(task, model=f"transformers/{folders['tuned']}", model_args={"device": "cpu"}, log_dir=str(tmp_path),
               display="none")[0]
    assert log.status == "success"
    events = [e for e in log.samples[0].events if isinstance(e, ModelEvent)]
    record = events[0].output.metadata[EFFECTIVE_SETTINGS_KEY]
    assert (record["temperature"], record["top_k"], record["top_p"], record["seed"]) == (0.7, None, 1.0, 5)
    assert log.samples[0].output.metadata[EFFECTIVE_SETTINGS_KEY] == record


@torch.inference_mode()
def test_encoder_decoder_generation_is_plain_greedy(tiny_models):
    """Encoder-decoder rows are padded on the right and decoded after the decoder start token: the provider's
    greedy text equals a hand loop of argmax steps."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    folder = tiny_models["t5"]
    tok = AutoTokenizer.from_pretrained(folder)
    ref = AutoModelForSeq2SeqLM.from_pretrained(folder, dtype=torch.float32).eval()
    model = get_model(f"transformers/{folder}", device="cpu", memoize=False)
    prompts = ["alice is kind", "bob was very lazy and rude"]
    outs = asyncio.run(_both(model, prompts))
    for prompt, out in zip(prompts, outs):
        enc = torch.tensor([tok(prompt).input_ids])
        dec = [ref.config.decoder_start_token_id]
        for _ in range(5):
            dec.append(int(ref(input_ids=enc, decoder_input_ids=torch.tensor([dec])).logits[0, -1].argmax()))
        gen = dec[1:]
        cut = next((j for j, t in enumerate(gen) if t == ref.config.eos_token_id), len(gen))
        assert out.completion == tok.decode(gen[:cut], skip_special_tokens=True)
        assert out.metadata[EFFECTIVE_SETTINGS_KEY]["do_sample"] is False


async def _both(model, prompts: list[str]):
    import asyncio as aio

    config = GenerateConfig(temperature=0, max_tokens=5)
    return await aio.gather(*(model.generate([ChatMessageUser(content=p)], config=config) for p in prompts))
