"""Tiny, randomly initialised models built offline (fixed seeds) and saved as local model folders."""

from __future__ import annotations

from pathlib import Path

import pytest

WORDS = ["the", "a", "doctor", "nurse", "is", "was", "kind", "lazy", "rude", "clever", "alice", "bob", "wei",
         "olga", "from", "village", "city", "and", "very", "not", ".", ",", "##s", "##ly", "my", "name", "i"]


def build_tokenizer(folder: Path):
    """A word-piece BertTokenizerFast over a small vocabulary written to ``folder/vocab.txt``."""
    from transformers import BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    lines = (folder / "vocab.txt").read_text().splitlines()
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(lines)}, do_lower_case=True,
                            bos_token="[CLS]", eos_token="[SEP]")
    assert len(tok) == len(vocab)
    return tok


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    """Folders with a tiny BERT (masked), T5 (encoder-decoder) and Llama (causal), each with the tokenizer."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, LlamaConfig, LlamaForCausalLM, T5Config, T5ForConditionalGeneration

    root = tmp_path_factory.mktemp("tiny_models")
    tok = build_tokenizer(root / "vocab")
    vocab_size = len(tok)
    folders = {}
    torch.manual_seed(0)
    bert = BertForMaskedLM(BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2,
                                      num_attention_heads=2, intermediate_size=64, max_position_embeddings=64))
    torch.manual_seed(1)
    t5 = T5ForConditionalGeneration(T5Config(vocab_size=vocab_size, d_model=32, d_kv=16, d_ff=64, num_layers=2,
                                             num_heads=2, pad_token_id=0, eos_token_id=3, decoder_start_token_id=0))
    torch.manual_seed(2)
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                         max_position_embeddings=24, bos_token_id=2, eos_token_id=3, pad_token_id=0))
    for name, model in {"bert": bert, "t5": t5, "llama": llama}.items():
        folder = root / name
        model.eval()
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
        folders[name] = folder
    return folders
