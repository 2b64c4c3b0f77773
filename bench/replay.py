"""The provider-direct peer of a task run: the requests a task sent, replayed straight to the provider.

:class:`Recorder` wraps a ``transformers`` provider's ``generate`` while ``inspect eval`` runs a task and keeps
each request (messages, config; a grouped request's stashed items resolved, since the provider drops them once
answered). :meth:`Recorder.replay` then sends the same requests to the same provider object, all at once as
inspect's concurrent samples do (so the worker merges them the same way), without inspect's sample, scoring
and log work. The wall time of the replay is the provider-direct time of the task's requests; the task's wall
over it is the task/direct ratio (used by ``bench/dbb.py --direct``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig

from stereoprobe.likelihood import TEXTS_KEY, TEXTS_REF_KEY


class Recorder:
    """Records the requests ``api.generate`` receives (install before the eval, :meth:`stop` after)."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.requests: list[tuple[list[ChatMessage], GenerateConfig]] = []
        self.outputs: list[Any] = []  # the replay's answers, in request order
        self._inner = api.generate

        async def recording(input: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> Any:
            self.requests.append((self._resolved(input), config))
            return await self._inner(input, tools, tool_choice, config)

        api.generate = recording

    def _resolved(self, input: list[ChatMessage]) -> list[ChatMessage]:
        """The messages, a stash reference replaced by the stashed items (the provider pops them when done)."""
        meta = (input[-1].metadata or {}) if input else {}
        ref = meta.get(TEXTS_REF_KEY)
        if ref is None:
            return list(input)
        items = self.api._stashed[str(ref)]
        return [*input[:-1], ChatMessageUser(content=input[-1].text, metadata={TEXTS_KEY: items})]

    def stop(self) -> None:
        self.api.generate = self._inner

    def replay(self) -> float:
        """Seconds to send every recorded request to the provider again, concurrently (one event loop); the
        answers are kept in :attr:`outputs`. The provider's worker thread runs them, as it ran the task's."""

        async def all_at_once() -> None:
            self.outputs = list(await asyncio.gather(*(self._inner(msgs, [], "none", cfg)
                                                       for msgs, cfg in self.requests)))

        t0 = time.perf_counter()
        asyncio.run(all_at_once())
        return time.perf_counter() - t0
