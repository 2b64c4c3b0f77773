"""Token ids of a batch of texts, as the tokenizer's ``__call__`` gives them, without its per-text encodings.

``tokenizer(texts).input_ids`` on a fast (``tokenizers``-backed) tokenizer runs the Rust backend's
``encode_batch`` and then builds a Python dict per text (``_convert_encoding``: ids, attention mask, token type
ids) and a ``BatchEncoding`` over them. A grouped request of the ``transformers`` provider is tokenized on
inspect's event-loop thread (:mod:`.text_batches`), where that per-text work took a share of the main thread's
time during a run (issue 44): :func:`encode_ids` asks the backend for the ids alone (``encode_batch_fast``,
which also skips the character offsets).

The ids are the same, because the call is the one ``__call__`` makes
(``transformers/tokenization_utils_tokenizers.py`` ``TokenizersBackend._encode_plus``) when nothing asks for
truncation, padding or pairs: the backend's ``encode_batch(texts, add_special_tokens=...)``, after it has reset
any truncation or padding left on the backend and set ``encode_special_tokens`` to the tokenizer's
``split_special_tokens``. :func:`encode_ids` takes the direct route only where those resets would do nothing
(no truncation or padding on the backend, the flag already matching) and the tokenizer's class does not change
how it encodes (``__call__`` and ``_encode_plus`` not overridden, no source/target mode switch as seq2seq
tokenizers have); every other tokenizer, a slow one included, goes through ``__call__``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["direct_backend", "encode_ids"]


def direct_backend(tokenizer: Any) -> Any | None:
    """The ``tokenizers`` backend :func:`encode_ids` may call directly for ``tokenizer``, else None."""
    try:
        from transformers.tokenization_utils_base import PreTrainedTokenizerBase
        from transformers.tokenization_utils_tokenizers import TokenizersBackend
    except ImportError:  # another transformers layout: always the tokenizer's own call
        return None
    if not isinstance(tokenizer, TokenizersBackend) or hasattr(tokenizer, "_switch_to_input_mode"):
        return None
    cls = type(tokenizer)
    if cls.__call__ is not PreTrainedTokenizerBase.__call__ or cls._encode_plus is not TokenizersBackend._encode_plus:
        return None
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None or backend.truncation is not None or backend.padding is not None:
        return None
    if backend.encode_special_tokens != bool(tokenizer.split_special_tokens):
        return None
    return backend


def encode_ids(tokenizer: Any, texts: list[str], add_special_tokens: bool) -> list[list[int]]:
    """``[list(ids) for ids in tokenizer(texts, add_special_tokens=...).input_ids]``, computed by the fast
    backend alone where :func:`direct_backend` allows it."""
    backend = direct_backend(tokenizer) if texts else None
    if backend is None:
        return [list(ids) for ids in tokenizer(texts, add_special_tokens=add_special_tokens).input_ids]
    encode = getattr(backend, "encode_batch_fast", backend.encode_batch)
    return [enc.ids for enc in encode(texts, add_special_tokens=add_special_tokens)]
