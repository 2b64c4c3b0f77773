"""Token counts for the planner: the model's own tokenizer when it is local (``transformers/...``, ``hf/...``,
a folder), else ``len(text) / chars_per_token`` (``datasets/plan.yaml``; 4 characters per token, the usual
rule of thumb for English BPE vocabularies)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Counter = Callable[[str], int]


def _local_tokenizer(model: str) -> Any | None:
    provider, _, name = model.partition("/")
    if provider not in ("transformers", "hf", "hf-ppl", "vllm", "vllm-completions"):
        return None
    try:
        from transformers import AutoTokenizer

        if provider == "transformers" and name in ("default", ""):
            from stereoprobe.providers.default_model import default_model_dir

            return AutoTokenizer.from_pretrained(str(default_model_dir()))
        if Path(name).is_dir():
            return AutoTokenizer.from_pretrained(name)
        return AutoTokenizer.from_pretrained(name, local_files_only=True)  # only a cached tokenizer, no download
    except Exception:  # noqa: BLE001 - no local tokenizer: fall back to the documented approximation
        return None


def counter_for(model: str | None, chars_per_token: float) -> tuple[Counter, str]:
    """A function text -> tokens, and how it counts (``"tokenizer <name>"`` or ``"chars/4"``)."""
    tok = _local_tokenizer(model) if model else None
    if tok is not None:
        return (lambda text: len(tok(text, add_special_tokens=False)["input_ids"])), f"tokenizer of {model}"
    return (lambda text: int(round(len(text) / chars_per_token))), f"approximation characters / {chars_per_token:g}"


def count_texts(texts: Sequence[str], count: Counter, sample: int, seed: int = 0) -> int:
    """Total tokens of ``texts``: exact up to ``sample`` texts, else a seeded random sample scaled up."""
    n = len(texts)
    if n <= sample:
        return sum(count(t) for t in texts)
    idx = random.Random(seed).sample(range(n), sample)
    return int(round(sum(count(texts[i]) for i in idx) * n / sample))
