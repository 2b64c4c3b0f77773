"""stereoprobe's inspect model providers.

``transformers/<model>`` (``transformers/default`` = the bundled SmolLM2-135M-Instruct): an in-process
transformers model with chat generation and prompt log-probabilities (causal, masked and encoder-decoder
models). Heavy imports (torch, transformers) happen only when the provider is used.
"""

from inspect_ai.model import modelapi


@modelapi(name="transformers")
def transformers_provider() -> type:
    from stereoprobe.providers.transformers_api import TransformersAPI

    return TransformersAPI
