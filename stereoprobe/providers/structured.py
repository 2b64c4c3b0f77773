"""Grammar-constrained decoding for the ``transformers`` provider: ``GenerateConfig.response_schema`` is
enforced with xgrammar (``pip install 'stereoprobe[structured]'``). A transformers logits processor masks, at
every step, the tokens that cannot continue a JSON document valid under the schema (compact JSON, strict)."""

from __future__ import annotations

import threading
from typing import Any

import torch

from stereoprobe.errors import reason


def require_xgrammar() -> Any:
    """The ``xgrammar`` module; a RuntimeError naming the extra to install when it is missing."""
    try:
        import xgrammar
    except ImportError as ex:
        raise RuntimeError(
            "transformers provider: GenerateConfig.response_schema needs xgrammar for grammar-constrained "
            "decoding; install it with pip install 'stereoprobe[structured]' (or pip install xgrammar), "
            f"or leave response_schema unset ({reason(ex)})"
        ) from ex
    return xgrammar


_COMPILERS: dict[tuple[int, int, tuple[int, ...]], tuple[Any, Any, dict[str, Any]]] = {}
_COMPILERS_LOCK = threading.Lock()


def compiled_grammar(tokenizer: Any, vocab_size: int, stop_ids: list[int], schema: str) -> Any:
    """The xgrammar grammar of JSON valid under ``schema`` (a JSON string), compiled once per tokenizer
    (vocabulary size, stop tokens) and schema."""
    xgr = require_xgrammar()
    key = (id(tokenizer), vocab_size, tuple(stop_ids))
    with _COMPILERS_LOCK:
        if key not in _COMPILERS:
            info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=stop_ids)
            # the tokenizer is kept in the entry so that its id is not reused by another one
            _COMPILERS[key] = (tokenizer, xgr.GrammarCompiler(info), {})
        _, compiler, grammars = _COMPILERS[key]
        if schema not in grammars:
            grammars[schema] = compiler.compile_json_schema(schema, any_whitespace=False, strict_mode=True)
        return grammars[schema]


class SchemaLogitsProcessor:
    """Masks the logits of tokens that the grammar does not allow next (one matcher per generated row).

    Used once per ``generate()`` call. The first call sees the prompt; each later call first advances every
    row's matcher by the token sampled last. A row whose matcher has terminated (EOS accepted) or rejected its
    token (the row stopped another way, e.g. a stop string, and is now padded) is left unmasked: transformers
    replaces its tokens by padding anyway.
    """

    def __init__(self, grammar: Any) -> None:
        self.xgr = require_xgrammar()
        self.grammar = grammar
        self.vocab_size = int(grammar.tokenizer_info.vocab_size)
        self.matchers: list[Any] = []
        self.live: list[bool] = []
        self.bitmask: torch.Tensor | None = None
        self.started = False

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        xgr = self.xgr
        rows = input_ids.shape[0]
        if not self.matchers:
            self.matchers = [xgr.GrammarMatcher(self.grammar) for _ in range(rows)]
            self.live = [True] * rows
            self.bitmask = xgr.allocate_token_bitmask(rows, self.vocab_size)
        if self.started:
            last = input_ids[:, -1].tolist()
            for i, m in enumerate(self.matchers):
                if self.live[i] and not m.is_terminated() and not m.accept_token(int(last[i])):
                    self.live[i] = False
        self.started = True
        masked = [i for i, m in enumerate(self.matchers) if self.live[i] and not m.is_terminated()]
        if not masked:
            return scores
        assert self.bitmask is not None
        for i in masked:
            self.matchers[i].fill_next_token_bitmask(self.bitmask, i)
        target = scores if scores.device.type in {"cpu", "cuda"} else scores.cpu()
        xgr.apply_token_bitmask_inplace(target, self.bitmask.to(target.device), vocab_size=self.vocab_size,
                                        indices=masked)
        return target if target is scores else target.to(scores.device)
