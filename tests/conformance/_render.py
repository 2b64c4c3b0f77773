"""Render the requests a task sends, for the conformance tests (issue 27, section 1).

:func:`render` runs a task through inspect with :class:`CaptureModel`, a model that records every request it
receives and answers with a caller-given reply, and returns one :class:`Request` per model call: the sample
and epoch it belongs to, the model role, every message (role, text) before the trailing assistant prefill, the
prefill, and the generation settings the model received (``GenerateConfig`` fields that are set). The requests
are read from the log's model events and checked against what the model itself received, so a request the log
does not show as sent fails the rendering.

The expected side of a conformance test is rendered by the test itself from upstream's files (never with the
project's code); :func:`refdata_file` finds those files and skips the test when they are absent.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    Model,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)

Reply = Callable[[list[ChatMessage], GenerateConfig], ModelOutput]


def text_reply(text: str) -> Reply:
    """A reply function answering ``text`` to every request (with ``usage``, so no tokenizer is needed)."""

    def reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        out = ModelOutput.from_content("capture", text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return reply


class CaptureModel(ModelAPI):
    """Records ``(messages, config)`` of every request and answers with ``reply`` (default: "a)")."""

    def __init__(self, model_name: str = "capture", base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), reply: Reply | None = None,
                 received: list | None = None) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.reply = reply or text_reply("a)")
        self.received = received if received is not None else []

    async def tokenize(self, text: str) -> list[int]:
        """Whitespace words as tokens (likelihood solvers count a continuation's tokens this way)."""
        return [int(hashlib.md5(w.encode()).hexdigest()[:8], 16) for w in text.split()]

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[override]  # noqa: A002
        self.received.append(_key(input, config))
        return self.reply(list(input), config)


@modelapi(name="stereoprobe-capture")
def _capture() -> type[CaptureModel]:
    return CaptureModel


def prompt_logprobs_reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
    """A reply for likelihood requests: a prompt log-probability of -1 for every whitespace word after the
    first (what :meth:`CaptureModel.tokenize` counts)."""
    words = messages[-1].text.split()[1:]
    plp = Logprobs(content=[Logprob(token=w, logprob=-1.0) for w in words])
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content="", source="generate"),
                                  stop_reason="max_tokens", prompt_logprobs=plp)
    return ModelOutput(model="capture", choices=[choice],
                       usage=ModelUsage(input_tokens=len(words), output_tokens=1, total_tokens=len(words) + 1))


def capture_model(name: str = "model", reply: Reply | None = None, received: list | None = None,
                  provider: str | None = None) -> Model:
    """A fresh capturing model ``stereoprobe-capture/<name>``; ``provider``: the model is named
    ``<provider>/<name>`` instead (a task that picks settings by provider sees that provider), without
    registering anything under that provider's name (inspect's own provider stays as it is)."""
    if provider is None:
        return get_model(f"stereoprobe-capture/{name}", memoize=False, reply=reply, received=received)
    from inspect_ai._util.registry import RegistryInfo, set_registry_info

    cls = type(f"Capture_{provider}", (CaptureModel,), {})
    set_registry_info(cls, RegistryInfo(type="modelapi", name=provider))
    api = cls(model_name=name, reply=reply, received=received)
    return Model(api, GenerateConfig())


@dataclass(frozen=True)
class Request:
    """One request as the model received it."""

    sample_id: str | int
    epoch: int
    role: str | None  # the model role (None: the task's model)
    messages: tuple[tuple[str, str], ...]  # (role, text), the prefill excluded
    prefill: str | None  # text of a trailing assistant message, if any
    config: dict[str, Any] = field(default_factory=dict)  # GenerateConfig fields that are set


#: ``GenerateConfig`` fields that schedule requests and change nothing in them
SCHEDULING = ("max_connections", "max_retries", "timeout", "attempt_timeout")


def settings(config: GenerateConfig) -> dict[str, Any]:
    """The set fields of a ``GenerateConfig`` (what a provider can apply), scheduling fields left out."""
    return {k: v for k, v in config.model_dump(exclude_none=True).items() if k not in SCHEDULING}


def _split(messages: Sequence[ChatMessage]) -> tuple[tuple[tuple[str, str], ...], str | None]:
    msgs = [(m.role, m.text) for m in messages]
    if msgs and isinstance(messages[-1], ChatMessageAssistant):
        return tuple(msgs[:-1]), msgs[-1][1]
    return tuple(msgs), None


def _key(messages: Sequence[ChatMessage], config: GenerateConfig) -> str:
    return json.dumps([[(m.role, m.text) for m in messages], settings(config)], sort_keys=True, default=str)


def render(task: Task, model: Model | None = None, model_roles: dict[str, Model] | None = None,
           reply: Reply | None = None, **eval_args: Any) -> list[Request]:
    """Run ``task`` with capturing models and return every request, ordered by (sample id, epoch, call).

    ``model``/``model_roles``: models made with :func:`capture_model` sharing one ``received`` list (built
    here when ``model`` is None: ``stereoprobe-capture/model`` answering with ``reply``). ``eval_args`` go to
    ``inspect_ai.eval`` (``sample_id=``, ``limit=``, ``epochs=``...).
    """
    received: list = []
    if model is None:
        model = capture_model(reply=reply, received=received)
    else:
        received = model.api.received  # type: ignore[attr-defined]
    for m in (model_roles or {}).values():
        m.api.received = received  # type: ignore[attr-defined]
    eval_args.setdefault("display", "none")
    eval_args.setdefault("max_connections", 100)  # the capture model answers at once
    eval_args.setdefault("log_dir", tempfile.mkdtemp(prefix="stereoprobe-render-"))
    log = inspect_eval(task, model=model, model_roles=model_roles, **eval_args)[0]
    assert log.status == "success", log.error
    requests: list[Request] = []
    logged: list[str] = []
    for sample in log.samples or []:
        sample = resolve_sample_attachments(sample)  # long texts are stored as attachments in the log
        for event in sample.events:
            if isinstance(event, ModelEvent):
                msgs, prefill = _split(event.input)
                requests.append(Request(sample.id, sample.epoch, event.role, msgs, prefill, settings(event.config)))
                logged.append(_key(event.input, event.config))
    extra, missing = Counter(logged) - Counter(received), Counter(received) - Counter(logged)
    assert not extra and not missing, (f"the log's model events differ from what the model received: logged only "
                                       f"{list(extra)[:1]}, received only {list(missing)[:1]}")
    return sorted(requests, key=lambda r: (str(r.sample_id), r.epoch))


REPO_ROOT = Path(__file__).resolve().parents[2]


def refdata_file(refdata: Path, rel: str) -> Path:
    """``refdata/rel`` (an upstream copy); skip the test when it is absent."""
    path = refdata / rel
    if not path.is_file():
        pytest.skip(f"no upstream copy of {rel}")
    return path


def fidelity_rows() -> set[str]:
    """The row ids (``D7``, ``G16``, ...) of ``docs/fidelity.md``'s tables."""
    ids = set()
    for line in (REPO_ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 2 and line.startswith("| ") and cells[1][:1].isalpha() and cells[1][1:].isdigit():
            ids.add(cells[1])
    return ids


def assert_allowed(departures: dict[str, str]) -> None:
    """Every departure of a conformance test names an existing ``docs/fidelity.md`` row (``{row id: what}``)."""
    missing = sorted(set(departures) - fidelity_rows())
    assert not missing, f"departures name fidelity rows that docs/fidelity.md lacks: {missing}"
