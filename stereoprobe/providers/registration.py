"""Registers the ``transformers`` model provider with inspect (imported by inspect's entry point), and the hook
that sends neutral sampling values to vLLM for stereoprobe's tasks (:mod:`.vllm_neutral`)."""

from inspect_ai.model import modelapi

from stereoprobe.providers import vllm_neutral  # noqa: F401  (registers its hook)


@modelapi(name="transformers")
def transformers_provider() -> type:
    """The ``transformers/<model>`` provider class (imported only when the provider is used)."""
    from stereoprobe.providers.transformers_api import TransformersAPI

    return TransformersAPI
