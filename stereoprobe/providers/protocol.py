"""What the ``transformers`` provider's helper modules need from it: one typed interface.

:mod:`.text_batches`, :mod:`.generation_batching` and :mod:`.generation` are the provider's satellites: they
take the provider instance (:class:`stereoprobe.providers.transformers_api.TransformersAPI`) as
:class:`TransformersProvider`, a structural type listing exactly the attributes and methods they read, so a
change of the provider that breaks one of them shows in a type check instead of at run time.
"""

from __future__ import annotations

from typing import Any, Protocol

from inspect_ai.model import ChatMessage, GenerateConfig

from stereoprobe.providers.args import WorkerRequest
from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.scoring import CausalScorer, TokenScores

__all__ = ["TransformersProvider"]


class TransformersProvider(Protocol):
    """The provider as its satellites see it (attributes set in ``TransformersAPI.__init__``)."""

    model_name: str
    model: Any  # the loaded transformers model
    tokenizer: Any  # its (fast) tokenizer
    kind: str  # "causal", "masked" or "seq2seq"
    device: Any  # the torch device the model runs on
    pad_id: int
    prefix_token_id: int | None  # BOS (else EOS, CLS) for -M score_first_token
    score_first_token: bool
    prefix_sharing: bool
    continuous_batching: bool
    scorer: CausalScorer | None  # causal models only

    @property
    def policy(self) -> BatchPolicy:
        """The forward batches of a causal plan (``-M batch_size``, ``batch_tokens``, ``batch_invariant``)."""
        ...

    def check_length(self, n: int, text: str) -> None: ...

    def score_request(self, input: list[ChatMessage], config: GenerateConfig) -> WorkerRequest: ...

    def generate_request(self, input: list[ChatMessage], config: GenerateConfig) -> WorkerRequest: ...

    def score_ids(self, payloads: list[dict[str, Any]], top_k: int = 0,
                  groups: list[Any] | None = None) -> list[TokenScores]: ...

    def token_text(self, token_id: int) -> str: ...

    def stop_ids(self) -> list[int]: ...

    def schema_processor(self, schema: str) -> Any: ...
