"""Checks of the ``transformers`` provider's model arguments (``-M``) and generation settings (``--top-p`` ...).

A value outside its range is refused before any work, in one line naming the setting and its range (the format
of :mod:`stereoprobe.params`)::

    transformers provider: generation setting top_p must be a finite number in [0, 1], got top_p=2.0

The errors are :class:`~stereoprobe.errors.InputError` and inspect's ``PrerequisiteError``, so ``inspect eval``
shows the line without a traceback. The run's own checks, for every provider (``--max-connections``,
``--epochs``), are :mod:`stereoprobe.preflight`'s.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from inspect_ai.model import GenerateConfig

from stereoprobe import params as P
from stereoprobe.errors import one_line, reason
from stereoprobe.inspect_internals import PrerequisiteError

__all__ = ["GenerationSettingError", "ModelArgError", "chat_template_text", "check_device", "check_generate_config",
           "model_int", "one_line_setup", "strict_bool", "top_k_arg"]

F = TypeVar("F", bound=Callable[..., Any])
SEED_MAX = 2**64 - 1  # torch.manual_seed's range (non-negative part)
DEVICE = re.compile(r"(cpu|cuda|mps)(?::([0-9]+))?")


class ModelArgError(P.TaskParameterError):
    """A ``-M`` model argument of the transformers provider outside its domain."""

    subject = "transformers provider: model argument"


class GenerationSettingError(P.TaskParameterError):
    """A generation setting (``GenerateConfig`` field) the transformers provider cannot run."""

    subject = "transformers provider: generation setting"


def one_line_setup(init: F) -> F:
    """Decorate the provider's ``__init__``: a ``ValueError`` it raises about the user's setup (its message starts
    with "transformers provider:", e.g. a model argument checked by another module) becomes a
    :class:`ModelArgError`, one line in ``inspect eval``; other errors (bugs) keep their traceback."""

    @functools.wraps(init)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return init(*args, **kwargs)
        except ValueError as ex:
            if isinstance(ex, PrerequisiteError) or not str(ex).startswith("transformers provider:"):
                raise
            raise ModelArgError(one_line(ex)) from ex

    return cast(F, checked)


def strict_bool(value: Any, name: str, default: bool) -> bool:
    """``true`` or ``false`` (any case) or a bool; a typo such as ``ture`` is an error, never taken as true."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    P.fail(name, value, "true or false", ModelArgError)


def model_int(value: Any, name: str, minimum: int, *, auto: bool = False) -> int | None:
    """An integer >= ``minimum``; None when unset, and for ``auto`` where ``auto`` is allowed."""
    if value is None or (auto and isinstance(value, str) and value.strip().lower() == "auto"):
        return None
    if auto:
        try:
            return P.integer(value, name, minimum, error=ModelArgError)
        except ModelArgError:
            P.fail(name, value, f"an integer >= {minimum} or auto", ModelArgError)
    return P.integer(value, name, minimum, error=ModelArgError)


def top_k_arg(value: Any) -> int | None:
    """``-M top_k``: an integer >= 1, or ``none``/``0`` for no top-k (None)."""
    return P.top_k(value, error=ModelArgError)


def chat_template_text(value: Any) -> str:
    """``-M chat_template``: a Jinja template (it holds ``{{`` or ``{%``) or the path of a file holding one; a
    path that does not exist is an error (it would otherwise become the template's literal text)."""
    text = str(value)
    if "{{" in text or "{%" in text:
        return text
    path = Path(text).expanduser()
    if not path.is_file():
        P.fail("chat_template", value, "a Jinja template (with {{ or {%) or an existing file", ModelArgError)
    try:
        content = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise ModelArgError(f"transformers provider: model argument chat_template: cannot read {path}: "
                            f"{reason(ex)}") from None
    if "{{" not in content and "{%" not in content:
        P.fail("chat_template", value, "a file holding a Jinja template (with {{ or {%)", ModelArgError)
    return content


def check_device(requested: Any) -> str | None:
    """``-M device``: None for auto/unset, else ``cpu``, ``cuda``, ``cuda:N`` or ``mps``, refused where this
    machine does not have it (torch would fail later with an assertion)."""
    if requested is None or str(requested).strip().lower() == "auto":
        return None
    text = str(requested).strip()
    match = DEVICE.fullmatch(text)
    if match is None or (match.group(1) != "cuda" and match.group(2) is not None):
        P.fail("device", requested, "one of auto, cpu, cuda, cuda:N, mps", ModelArgError)
    import torch

    if match.group(1) == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            P.fail("device", requested, "a device this machine has (no CUDA device here: use cpu or auto)",
                    ModelArgError)
        if match.group(2) is not None and int(match.group(2)) >= count:
            P.fail("device", requested, f"a device this machine has (cuda:0 to cuda:{count - 1})", ModelArgError)
    if match.group(1) == "mps" and not (getattr(torch.backends, "mps", None) is not None
                                        and torch.backends.mps.is_available()):
        P.fail("device", requested, "a device this machine has (no MPS here: use cpu or auto)", ModelArgError)
    return text


def check_generate_config(config: GenerateConfig, error: type[P.TaskParameterError] = GenerationSettingError) -> None:
    """Refuse a generation setting outside the range a model can run (None: unset, always fine)."""
    E = error
    P.number(config.temperature, "temperature", 0.0, optional=True, error=E)
    P.number(config.top_p, "top_p", 0.0, 1.0, optional=True, error=E)
    if config.top_k is not None:
        try:
            P.integer(config.top_k, "top_k", 0, error=E)
        except E:
            P.fail("top_k", config.top_k, "an integer >= 0 (0: no top-k)", E)
    P.integer(config.max_tokens, "max_tokens", 1, optional=True, error=E)
    P.integer(config.seed, "seed", 0, maximum=SEED_MAX, optional=True, error=E)
    P.integer(config.num_choices, "num_choices", 1, optional=True, error=E)
    P.integer(config.top_logprobs, "top_logprobs", 0, optional=True, error=E)
    P.integer(config.prompt_logprobs, "prompt_logprobs", 0, optional=True, error=E)
    for name in ("frequency_penalty", "presence_penalty"):  # any finite value (OpenAI's API takes [-2, 2])
        P.number(getattr(config, name), name, optional=True, error=E)
    for token, bias in (config.logit_bias or {}).items():
        P.integer(token, "logit_bias token", 0, error=E)
        P.number(bias, f"logit_bias[{token}]", -100.0, 100.0, error=E)  # OpenAI's range
