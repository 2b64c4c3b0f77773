"""stereoprobe's inspect model providers.

``transformers/<model>`` (``transformers/default`` = the bundled SmolLM2-135M-Instruct): an in-process
transformers model with chat generation and prompt log-probabilities (causal, masked and encoder-decoder
models). Heavy imports (torch, transformers) happen only when the provider is used.

Importing this package does not import inspect_ai: ``stereoprobe.providers.scoring`` (pure torch) runs where
inspect is not installed, e.g. on a GPU machine for ``bench/gpu_throughput.py``. The inspect registration
(:mod:`.registration`) loads when ``transformers_provider`` is first asked for, as inspect's entry point
(``stereoprobe._registry``) does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["transformers_provider"]


def __getattr__(name: str) -> Any:
    if name == "transformers_provider":
        from stereoprobe.providers.registration import transformers_provider

        return transformers_provider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
