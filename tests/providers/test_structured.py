"""``GenerateConfig.response_schema`` on the transformers provider: grammar-constrained decoding (xgrammar).

The conftest tiny Llama has a word-piece vocabulary without ``{`` or ``"``, so it cannot write JSON at all;
these tests build their own tiny random Llama over a byte-level BPE tokenizer (every byte is a token).
"""

from __future__ import annotations

import asyncio
import json

import jsonschema
import pytest
import torch
from inspect_ai.model import GenerateConfig, ResponseSchema, get_model
from inspect_ai.util import JSONSchema

pytest.importorskip("xgrammar")

CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant: {% endif %}")

SCHEMAS = {
    "refusal": {
        "type": "object",
        "properties": {"label": {"type": "string", "enum": ["refusal", "complied"]}},
        "required": ["label"],
        "additionalProperties": False,
    },
    "profile": {
        "type": "object",
        "properties": {
            "gender": {"type": "string", "enum": ["woman", "man", "non-binary"]},
            "employed": {"type": "boolean"},
        },
        "required": ["gender", "employed"],
        "additionalProperties": False,
    },
    "traits": {
        "type": "object",
        "properties": {
            "traits": {"type": "array", "items": {"type": "string", "enum": ["kind", "lazy", "clever"]},
                       "maxItems": 2},
            "age": {"type": "integer", "minimum": 0, "maximum": 99},
        },
        "required": ["traits", "age"],
        "additionalProperties": False,
    },
}
PROMPTS = ["Alice is a nurse.", "Bob was lazy.", "Wei is a clever doctor from the city.", "Olga"]


@pytest.fixture(scope="module")
def byte_llama(tmp_path_factory):
    """A tiny random Llama (fixed seed) with a byte-level BPE tokenizer and a plain chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("byte_llama")
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    core.train_from_iterator(PROMPTS + [json.dumps(s) for s in SCHEMAS.values()] * 3, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(3)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                         max_position_embeddings=512, bos_token_id=1, eos_token_id=2,
                                         pad_token_id=0))
    model.eval()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _config(name: str | None, **kwargs) -> GenerateConfig:
    schema = None
    if name is not None:
        schema = ResponseSchema(name=name, json_schema=JSONSchema.model_validate(SCHEMAS[name]))
    return GenerateConfig(response_schema=schema, **kwargs)


def _run(model, jobs):
    async def go():
        return await asyncio.gather(*[model.generate(prompt, config=config) for prompt, config in jobs])

    return asyncio.run(go())


def _assert_valid(text: str, name: str) -> dict:
    value = json.loads(text)
    jsonschema.validate(value, SCHEMAS[name])
    for other, schema in SCHEMAS.items():  # the answer follows its own schema, not another request's
        if other != name:
            assert not jsonschema.Draft202012Validator(schema).is_valid(value), (name, other, text)
    return value


def test_schemas_in_one_batch_give_valid_json(byte_llama):
    model = get_model(f"transformers/{byte_llama}", device="cpu", gen_batch_size=3)
    names = list(SCHEMAS)
    jobs = [(p, _config(names[k % 3], temperature=0.0, max_tokens=80)) for k, p in enumerate(PROMPTS * 2)]
    outputs = _run(model, jobs)
    for (_, config), out in zip(jobs, outputs):
        assert out.choices[0].stop_reason == "stop", out.completion
        _assert_valid(out.completion, config.response_schema.name)
    # greedy: one schema's answer does not depend on the other schemas' requests queued beside it
    alone = _run(model, [(PROMPTS[0], _config("refusal", temperature=0.0, max_tokens=80))])
    assert alone[0].completion == outputs[0].completion


def test_sampling_and_choices_with_schema(byte_llama):
    model = get_model(f"transformers/{byte_llama}", device="cpu")
    config = _config("traits", temperature=1.5, top_p=0.95, num_choices=3, seed=7, max_tokens=80)
    outputs = _run(model, [(p, config) for p in PROMPTS[:2]])
    texts = []
    for out in outputs:
        assert len(out.choices) == 3
        for choice in out.choices:
            _assert_valid(choice.message.text, "traits")
            texts.append(choice.message.text)
    assert len(set(texts)) > 1  # still sampling, not collapsed to one answer


def test_max_tokens_is_a_hard_cap(byte_llama):
    model = get_model(f"transformers/{byte_llama}", device="cpu")
    out = _run(model, [(PROMPTS[0], _config("profile", temperature=0.0, max_tokens=3))])[0]
    assert out.usage.output_tokens == 3 and out.choices[0].stop_reason == "max_tokens"
    assert out.completion.startswith("{")


def test_without_schema_unchanged(byte_llama):
    """No schema: the provider's greedy output is plain transformers greedy decoding, batched or not."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = get_model(f"transformers/{byte_llama}", device="cpu", gen_batch_size=4)
    outputs = _run(model, [(p, GenerateConfig(temperature=0.0, max_tokens=12)) for p in PROMPTS])
    ref = AutoModelForCausalLM.from_pretrained(byte_llama, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(byte_llama)
    for prompt, out in zip(PROMPTS, outputs):
        ids = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                      tokenize=True, return_dict=True, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            gen = ref.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=12,
                               do_sample=False, pad_token_id=0)[0, ids.shape[1]:].tolist()
        if 2 in gen:
            gen = gen[: gen.index(2)]
        assert out.completion == tok.decode(gen, skip_special_tokens=True)
        assert out.usage.output_tokens == len(gen)
    # and the random model does not write schema-valid JSON by itself: the grammar is what makes it
    constrained = _run(model, [(p, _config("refusal", temperature=0.0, max_tokens=40)) for p in PROMPTS])
    assert [o.completion for o in constrained] != [o.completion for o in outputs]


def test_schema_is_part_of_the_batch_key(byte_llama):
    from inspect_ai.model import ChatMessageUser

    api = get_model(f"transformers/{byte_llama}", device="cpu").api
    msg = [ChatMessageUser(content="hi")]
    keys = {name: api.generate_request(msg, _config(name, temperature=0.0)).key for name in [*SCHEMAS, None]}
    assert len(set(keys.values())) == len(keys)
    again = api.generate_request(msg, _config("profile", temperature=0.0)).key
    assert again == keys["profile"]


def test_missing_xgrammar_gives_a_clear_error(byte_llama, monkeypatch):
    import sys

    model = get_model(f"transformers/{byte_llama}", device="cpu")
    monkeypatch.setitem(sys.modules, "xgrammar", None)  # import xgrammar now raises ImportError
    with pytest.raises(RuntimeError, match=r"stereoprobe\[structured\]"):
        _run(model, [(PROMPTS[0], _config("refusal", max_tokens=5))])
    # without a schema nothing needs xgrammar
    assert _run(model, [(PROMPTS[0], GenerateConfig(temperature=0.0, max_tokens=3))])[0].usage.output_tokens <= 3


@pytest.mark.slow
def test_default_model_refusal_schema_gives_valid_json():
    """The bundled SmolLM2-135M rarely writes valid JSON unaided; with the StereoTales refusal schema it must."""
    from stereoprobe.stereotales.taxonomy import load_taxonomy

    tax = load_taxonomy()
    schema = tax.refusal_json_schema()
    stories = ["Alice was a nurse in a small village. Every morning she walked to the clinic.",
               "I'm sorry, but I can't write a story that relies on stereotypes about people.",
               "Wei Chen opened a bakery in the city and his neighbours loved his bread."]
    prompts = [tax.refusal_prompt(s, language=tax.base_language, scenario=tax.scenarios[0].key) for s in stories]
    config = GenerateConfig(temperature=0.0, max_tokens=60, response_schema=ResponseSchema(
        name="refusal_detection", json_schema=JSONSchema.model_validate(schema)))
    outputs = _run(get_model("transformers/default"), [(p, config) for p in prompts])
    for out in outputs:
        value = json.loads(out.completion)
        jsonschema.validate(value, schema)
        assert list(value) == ["reason", "label"]  # generated in the schema's property order
