"""The published runs' per-model generation settings (``configs/stereotales_run.json``), read at run time.

The StereoTales runs (Giskard-AI/stereotales-pipeline at the pinned commit, through Giskard-AI/flare) send every
story request with temperature 1 and 4,096 tokens, unless the run configuration's entry for the model says
otherwise: 8,192 tokens and reasoning effort "low" for GPT-5 and gpt-oss, 1,024-token thinking budgets for
Gemini, Claude and Qwen, and so on. The harm judge (``src/stereotales_pipeline/evaluate.py``) reads the same
entries (temperature and max tokens when set, else 1 and 4,096). The refusal detector and the extractors
(``scorers["biases/attribute_extraction"]``) have their own ``generation_kwargs`` on top of flare's scorer
defaults (temperature 0, 4,096 tokens).

These are the paper's values: a request carries them only for the fields the user left unset (the command
line's ``--max-tokens``, ``--temperature``, ... and a role spec's settings win; :mod:`stereoprobe.user_settings`).
This module reads the pinned file through :func:`stereoprobe.upstream.fetch` (checksummed; cache, download or
``$STEREOPROBE_UPSTREAM_DIR``), finds the entry of a model by its name and translates the entry into inspect
``GenerateConfig`` fields:

==========================================  ==============================================
entry field (LiteLLM)                       inspect ``GenerateConfig`` field
==========================================  ==============================================
``max_tokens``, ``temperature``             the same fields
``reasoning_effort``, ``extra_body.reasoning_effort``   ``reasoning_effort``
``thinking.budget_tokens``, ``extra_body.thinking_budget``  ``reasoning_tokens``
other ``extra_body`` keys                   ``extra_body`` (OpenAI-compatible servers)
``usage``, names, ``parallelism``, ``weight``, ``refusal_detector``  nothing (not generation settings)
==========================================  ==============================================

A model matches an entry when the last ``/``-separated part of its name equals the last part of the entry's
``litellm_model``, ignoring case and a trailing date (``anthropic/claude-haiku-4-5-20251001`` matches
``anthropic/claude-haiku-4-5``; ``hf/Qwen/Qwen3.5-27B`` matches ``dashscope/qwen3.5-27b``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from stereoprobe import upstream
from stereoprobe.user_settings import request_config

SOURCE_KEY = "stereotales-pipeline"
RUN_CONFIG = "configs/stereotales_run.json"
SCORER_KEY = "biases/attribute_extraction"  # the scorer entry of the refusal detector and the extractors

# flare's defaults where an entry says nothing: story requests (step_00_generate_samples.py GenerationParams),
# the judge (evaluate.py MAX_TOKENS and "temperature or 1"), the scorer roles (flare ScorerParams).
STORY_DEFAULTS: dict[str, Any] = {"temperature": 1.0, "max_tokens": 4096}
JUDGE_DEFAULTS: dict[str, Any] = {"temperature": 1.0, "max_tokens": 4096}
ROLE_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 4096}

_IGNORED = {"name", "litellm_model", "parallelism", "nb_try", "region", "weight", "refusal_detector", "usage", "n"}
_DATE_TAIL = re.compile(r"(-\d[\d-]*)?$")


class RunSettingsError(upstream.UpstreamDataError):
    """The run configuration holds a setting this module cannot translate (one line naming it)."""


@dataclass(frozen=True)
class ModelSettings:
    """The settings of one model: the matched entry (None: no entry) and its ``GenerateConfig`` fields."""

    entry: str | None
    config: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        return f"{self.entry}: {self.config}" if self.entry else "no entry (flare's defaults)"


def _model_id(name: str) -> str:
    return name.strip().rstrip("/").split("/")[-1].casefold()


def matches(model_name: str, litellm_model: str) -> bool:
    """Whether ``model_name`` (an inspect model name) is the model of entry ``litellm_model`` (see module doc)."""
    want, got = _model_id(litellm_model), _model_id(model_name)
    if not want or not got.startswith(want):
        return False
    return _DATE_TAIL.fullmatch(got[len(want):]) is not None


def translate(entry: dict[str, Any], where: str) -> dict[str, Any]:
    """The inspect ``GenerateConfig`` fields of one entry (or of one scorer's ``generation_kwargs``)."""
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key in _IGNORED:
            continue
        if key in ("max_tokens", "temperature", "reasoning_effort"):
            out[key] = value
        elif key == "thinking" and isinstance(value, dict):
            if "budget_tokens" in value:
                out["reasoning_tokens"] = int(value["budget_tokens"])
        elif key == "extra_body" and isinstance(value, dict):
            body = dict(value)
            if "reasoning_effort" in body:
                out["reasoning_effort"] = body.pop("reasoning_effort")
            if "thinking_budget" in body:
                out["reasoning_tokens"] = int(body.pop("thinking_budget"))
            if body:
                out["extra_body"] = body
        elif key == "generation_kwargs" and isinstance(value, dict):
            out.update(translate(value, f"{where}.generation_kwargs"))
        else:
            raise RunSettingsError(f"{where}: setting {key!r} has no inspect equivalent in stereoprobe's translation")
    return out


@cache
def run_config(local: str | None = None) -> dict[str, Any]:
    """The pinned ``configs/stereotales_run.json`` (verified), parsed."""
    path = upstream.fetch(SOURCE_KEY, RUN_CONFIG, local=local)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise RunSettingsError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(raw, dict) or not isinstance(raw.get("models"), list):
        raise RunSettingsError(f"{path}: expected an object with a 'models' list")
    return raw


def _find(model_name: str, entries: list[dict[str, Any]], where: str) -> ModelSettings:
    for i, entry in enumerate(entries):
        litellm = str(entry.get("litellm_model", ""))
        if litellm and matches(model_name, litellm):
            label = str(entry.get("name") or litellm)
            return ModelSettings(entry=f"{label} ({litellm})", config=translate(entry, f"{where}[{i}]"))
    return ModelSettings(entry=None)


def model_settings(model_name: str, defaults: dict[str, Any], local: str | None = None) -> ModelSettings:
    """A subject or judge model's settings: ``defaults`` overridden by its ``models`` entry, if any."""
    found = _find(model_name, run_config(local)["models"], f"{RUN_CONFIG}: models")
    return ModelSettings(entry=found.entry, config={**defaults, **found.config})


def role_settings(model_name: str, local: str | None = None) -> ModelSettings:
    """A refusal-detector or extractor model's settings: flare's scorer defaults overridden by its entry's
    ``generation_kwargs`` in ``scorers["biases/attribute_extraction"]``, if any."""
    scorers = run_config(local).get("scorers", {})
    entries = (scorers.get(SCORER_KEY) or {}).get("models", [])
    found = _find(model_name, entries, f"{RUN_CONFIG}: scorers.{SCORER_KEY}.models")
    return ModelSettings(entry=found.entry, config={**ROLE_DEFAULTS, **found.config})


def table_rows(local: str | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, litellm model, translated settings) of every subject entry, in file order (for documentation)."""
    return [(str(e.get("name")), str(e.get("litellm_model")), translate(e, RUN_CONFIG))
            for e in run_config(local)["models"]]


def request_settings(model_name: str, defaults: dict[str, Any], mode: str = "upstream") -> ModelSettings:
    """The settings to send with one request of ``model_name`` (a subject or judge model, the evaluated model):
    the user's settings (command line, ``-T``), and for each field the user left unset the paper's value:
    ``mode="upstream"`` the model's entry over ``defaults`` (:func:`model_settings`), ``"none"`` ``defaults``
    alone. The rule is :func:`stereoprobe.user_settings.request_config`'s. ``entry`` None: no entry used."""
    found = model_settings(model_name, defaults) if mode == "upstream" else ModelSettings(None, dict(defaults))
    return ModelSettings(entry=found.entry, config=request_config(found.config))


def check_run_config(hint: str) -> None:
    """Read the pinned run configuration now (a task that needs it fails when built, in one line ending
    ``hint``, instead of in every sample)."""
    try:
        run_config()
    except upstream.UpstreamDataError as e:
        raise upstream.UpstreamDataError(f"{e}; {hint}") from e
