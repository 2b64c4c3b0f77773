"""Generation settings of the GlobalBias profile requests (paper section 6; upstream notebooks 9a-9c).

The reference generated the profiles with temperature 1 and, per model family:

- OpenAI (``gpt-4o``, ``gpt-3.5-turbo-0125``): JSON mode (``response_format={"type": "json_object"}``) and
  ``seed=42``, no ``max_tokens`` (the API default);
- Anthropic (``claude-3-opus-20240229``): ``max_tokens=4096`` and the assistant turn prefilled with "{",
  which the reference prepends to the returned text;
- Llama 3 70B Instruct (Replicate): ``max_tokens=5000``.

:func:`generation_plan` turns these (``datasets/globalbias/profiles_prompt.yaml``, key ``reference_settings``)
into the settings of one request for an inspect model: ``settings="reference"`` (default) applies the model's
family row (OpenAI = the ``openai`` provider, Anthropic = the ``anthropic`` provider, every other provider =
the Llama row); ``settings="plain"`` sends only temperature and ``max_tokens`` to every model. JSON mode goes
through inspect's ``extra_body`` to the Chat Completions API; models that inspect serves through OpenAI's
Responses API (o-series, gpt-5) would drop it, so they get none and the plan records ``json_object: false``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stereoprobe.globalbias.profiles_parse import prompt_spec

SETTINGS = ("reference", "plain")


@dataclass(frozen=True)
class GenerationPlan:
    """The settings of one profile request: ``config`` (``GenerateConfig`` fields passed to ``generate``) and
    the assistant ``prefill`` (None: none); ``family``: the reference row applied."""

    family: str
    config: dict[str, Any] = field(default_factory=dict)
    prefill: str | None = None
    json_object: bool = False

    def record(self) -> dict[str, Any]:
        """What the sample's metadata stores (every setting sent, so a log says how it was generated)."""
        cfg = {k: v for k, v in self.config.items() if k != "extra_body"}
        return {"family": self.family, "config": cfg, "prefill": self.prefill, "json_object": self.json_object}


def family(model: str) -> str:
    """The reference row of an inspect model name: ``openai``, ``anthropic`` or ``other``."""
    provider = str(model).split("/", 1)[0].lower()
    return provider if provider in ("openai", "anthropic") else "other"


def _responses_api(model: str) -> bool:
    name = str(model).split("/", 1)[-1].lower()
    return name.startswith(("o1", "o3", "o4", "gpt-5", "codex")) or "codex" in name


def generation_plan(model: str, settings: str = "reference", max_tokens: int | None = None,
                    temperature: float = 1.0) -> GenerationPlan:
    """The settings of a profile request to ``model`` (an inspect model name, ``provider/name``).

    ``max_tokens`` given: sent to every model (overrides the reference row); None: the reference row's value
    (``settings="plain"``: 5000, the task's former uniform value).
    """
    if settings not in SETTINGS:
        raise ValueError(f"unknown settings {settings!r}; use {' or '.join(SETTINGS)}")
    fam = family(model)
    if settings == "plain":
        return GenerationPlan("plain", {"temperature": temperature,
                                        "max_tokens": 5000 if max_tokens is None else max_tokens})
    row = dict(prompt_spec()["reference_settings"][fam])
    config: dict[str, Any] = {"temperature": temperature}
    tokens = row.get("max_tokens") if max_tokens is None else max_tokens
    if tokens is not None:
        config["max_tokens"] = int(tokens)
    if row.get("seed") is not None:
        config["seed"] = int(row["seed"])
    json_object = bool(row.get("json_object")) and not _responses_api(model)
    if json_object:
        config["extra_body"] = {"response_format": {"type": "json_object"}}
    return GenerationPlan(fam, config, row.get("prefill"), json_object)
