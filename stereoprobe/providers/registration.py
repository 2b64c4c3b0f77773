"""Registers the ``transformers`` model provider with inspect (imported by inspect's entry point). The hook that
sends neutral sampling values to vLLM (:mod:`.vllm_neutral`) is registered only when a vLLM model runs."""

from inspect_ai.model import modelapi


@modelapi(name="transformers")
def transformers_provider() -> type:
    """The ``transformers/<model>`` provider class (imported only when the provider is used)."""
    from stereoprobe.providers.transformers_api import TransformersAPI

    return TransformersAPI
