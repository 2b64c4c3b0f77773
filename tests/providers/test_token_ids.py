"""The backend's ids (:func:`stereoprobe.providers.token_ids.encode_ids`) equal the tokenizer's ``__call__`` ids:
on the GlobalBias sentences (bundled and, where present, upstream's 30,000), the DBB-SG prompts and option
sentences, hand-written edge cases, with and without special tokens; tokenizers the direct route must not take
(truncation or padding left on the backend, ``split_special_tokens``, a class overriding ``__call__``) go through ``__call__``."""

from __future__ import annotations

import pytest

from stereoprobe.providers.token_ids import direct_backend, encode_ids

EDGES = ["", " ", "Hi", "  two  spaces ", "tab\there", "line\nbreak", "<|im_start|>user\nhello<|im_end|>",
         "<|endoftext|>", "Zoë and Đorđe café — naïve “quotes”", "日本語のテキスト", "emoji 🙂👍🏽", "a" * 300,
         "Mohammed is kind.", "[CLS] alice [SEP]"]


def _reference(tok, texts: list[str], special: bool) -> list[list[int]]:
    """The ids as the provider took them before: the tokenizer's own ``__call__``."""
    return [list(ids) for ids in tok(texts, add_special_tokens=special).input_ids]


@pytest.fixture(scope="module")
def smollm():
    from transformers import AutoTokenizer

    from stereoprobe.providers.default_model import default_model_dir

    return AutoTokenizer.from_pretrained(default_model_dir())


def _globalbias_texts(source: str) -> list[str]:
    from stereoprobe.tasks.globalbias import globalbias

    kwargs = {"descriptors": list(range(25))} if source != "bundled" else {}
    task = globalbias(source=source, **kwargs)
    return [it["text"] for s in task.dataset for it in s.metadata["texts"]]


def _dbb_sg_texts() -> list[str]:
    from stereoprobe.tasks.dbb import dbb_sg

    task = dbb_sg(source="bundled", prompt="stereoprobe", unit="template")
    out: list[str] = []
    for s in task.dataset:
        for q in s.metadata["sg_questions"]:
            out.append(q["prompt"])
            out += [q["prompt"] + " " + opt for pair in q["options"] for opt in pair]
    return out


@pytest.mark.parametrize("special", [True, False])
def test_default_tokenizer_takes_the_direct_route_with_the_same_ids(smollm, special):
    assert direct_backend(smollm) is not None
    texts = EDGES + _globalbias_texts("bundled") + _dbb_sg_texts()
    assert len(texts) > 1000
    assert encode_ids(smollm, texts, special) == _reference(smollm, texts, special)


@pytest.mark.refdata
def test_upstream_globalbias_sentences_same_ids(smollm, refdata):
    texts = _globalbias_texts(str(refdata / "GlobalBias"))
    assert len(texts) == 30_000
    for special in (True, False):
        assert encode_ids(smollm, texts, special) == _reference(smollm, texts, special)


def _wordpiece(tiny_models):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_models["llama"])


def test_special_tokens_added_where_the_tokenizer_adds_them(tiny_models):
    """A word-piece tokenizer that wraps texts in [CLS] ... [SEP]: the direct route adds them too."""
    tok = _wordpiece(tiny_models)
    assert direct_backend(tok) is not None
    texts = EDGES + ["alice is a doctor", "bob was very rude ."]
    with_special = encode_ids(tok, texts, True)
    assert with_special == _reference(tok, texts, True)
    assert encode_ids(tok, texts, False) == _reference(tok, texts, False)
    assert all(ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id for ids in with_special)


def _count_calls(monkeypatch, tok) -> list[int]:
    calls: list[int] = []
    real = type(tok).__call__

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(tok), "__call__", counted)
    return calls


def test_backend_truncation_or_padding_goes_through_the_call(smollm, monkeypatch):
    """``__call__`` resets truncation or padding left on the backend (tokenizer.json may set them); the
    direct route would keep them, so it is not taken and the ids are still the untruncated ones."""
    import copy

    text = "Alice is a doctor from a small village near the sea."
    for setup in ("truncation", "padding"):
        tok = copy.deepcopy(smollm)
        if setup == "truncation":
            tok.backend_tokenizer.enable_truncation(max_length=3)
        else:
            tok.backend_tokenizer.enable_padding(length=64, pad_id=0)
        assert direct_backend(tok) is None
        got = encode_ids(tok, [text, "Hi"], True)
        assert got == _reference(copy.deepcopy(smollm), [text, "Hi"], True)
        assert len(got[0]) > 3 and len(got[1]) < 64


def test_split_special_tokens_goes_through_the_call(smollm):
    import copy

    tok = copy.deepcopy(smollm)
    tok.split_special_tokens = True
    assert direct_backend(tok) is None
    texts = ["<|im_start|>user\nhello<|im_end|>"]
    assert encode_ids(tok, texts, True) == _reference(tok, texts, True)
    assert encode_ids(tok, texts, True) != _reference(smollm, texts, True)  # the setting is honoured


def test_an_overridden_call_goes_through_the_call(tiny_models, monkeypatch):
    fast = _wordpiece(tiny_models)
    calls = _count_calls(monkeypatch, fast)
    assert direct_backend(fast) is None  # its class's __call__ is no longer the base class's
    encode_ids(fast, ["alice is kind"], True)
    assert calls == [1]


def test_empty_batch_keeps_the_call(smollm):
    """No texts: the tokenizer's own call decides (transformers 5 raises on an empty batch), as before."""
    with pytest.raises(IndexError):
        _reference(smollm, [], True)
    with pytest.raises(IndexError):
        encode_ids(smollm, [], True)
