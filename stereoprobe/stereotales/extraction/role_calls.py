"""Calls to the refusal detector and the extractors: generation settings, flare's retry, the cache.

As flare's ``safe_completion(nb_try=3, ensure_json=True)`` (Giskard-AI/flare ``src/flare/complete.py``), an
answer that holds no JSON object is asked again, up to three calls in all; each retry has its own cache entry,
so a cached unreadable answer is not returned again. A call whose structured-output request raises is made
once more without the schema. A failed call is data (an error message), never an exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import CachePolicy, GenerateConfig, Model, ResponseSchema
from inspect_ai.util import JSONSchema

from stereoprobe.errors import reason
from stereoprobe.stereotales.extraction.parsing import ParseError, extract_json_object
from stereoprobe.user_settings import request_config

ATTEMPTS = 3  # flare's safe_completion(nb_try=3, ensure_json=True): an answer that is not JSON is asked again


def role_call_settings(model: Model, mode: str) -> dict[str, Any]:
    """The generation settings sent to one role model: the user's (the role spec's
    ``--model-role 'extractor={model: ..., max_tokens: ...}'`` over the command line's ``--max-tokens``, ...)
    and, for each field the user left unset, the paper's: with ``"upstream"`` flare's scorer defaults and the
    model's ``generation_kwargs`` in the published run configuration (:func:`role_settings`), with ``"none"``
    nothing. The rule is :func:`stereoprobe.user_settings.request_config`'s."""
    from stereoprobe.stereotales.run_settings import role_settings

    return request_config(role_settings(str(model)).config if mode != "none" else {}, model)


def _attempt_cache(cache: bool | CachePolicy, attempt: int) -> bool | CachePolicy:
    """The cache of one attempt: a retry must not be answered from the cache entry of the failed attempt."""
    if attempt == 0 or cache is False:
        return cache
    base = cache if isinstance(cache, CachePolicy) else CachePolicy(expiry=None, per_epoch=False)
    return CachePolicy(expiry=base.expiry, per_epoch=base.per_epoch, scopes={**base.scopes, "attempt": str(attempt)})


async def _generate_once(
    model: Model, prompt: str, schema: ResponseSchema | dict[str, Any] | None, schema_name: str,
    cache: bool | CachePolicy,
    settings: Mapping[str, Any],
) -> tuple[str | None, str | None]:
    """(completion, None) or (None, error message). Never raises: a failed call is data.

    With a schema the call asks for structured output (a ready ``ResponseSchema`` as it is, e.g. flare's format;
    a JSON schema under ``schema_name``); if that call raises (a provider or endpoint that
    rejects the schema), it is made once more without the schema and the answer is parsed as text.
    """
    configs = [GenerateConfig(**settings)]
    if schema is not None:
        rs = schema if isinstance(schema, ResponseSchema) else ResponseSchema(
            name=schema_name, json_schema=JSONSchema.model_validate(schema))
        configs.insert(0, GenerateConfig(**settings, response_schema=rs))
    errors: list[str] = []
    for config in configs:
        try:
            output = await model.generate(prompt, config=config, cache=cache)
        except asyncio.CancelledError:
            raise
        except Exception as ex:  # noqa: BLE001 - any provider failure is recorded, never fatal
            errors.append(reason(ex))
            continue
        if output.error:
            return None, f"model error: {output.error}"
        return output.completion, None
    label = ["with response_schema", "without response_schema"] if len(errors) == 2 else ["call"]
    return None, "; ".join(f"{lab}: {err}" for lab, err in zip(label, errors))


def _holds_json(text: str) -> bool:
    try:
        extract_json_object(text)
    except ParseError:
        return False
    return True


async def ask(
    model: Model, prompt: str, schema: ResponseSchema | dict[str, Any] | None, schema_name: str,
    cache: bool | CachePolicy,
    settings: Mapping[str, Any] | None = None, attempts: int = ATTEMPTS,
) -> tuple[str | None, str | None]:
    """:func:`_generate_once`, asked again (up to ``attempts`` calls in all, each with its own cache entry)
    while the answer holds no JSON object, as flare retries an answer ``json.loads`` cannot read; the last
    answer is returned either way (its parse error is recorded by the caller)."""
    result: tuple[str | None, str | None] = (None, "no call")
    for attempt in range(max(1, attempts)):
        result = await _generate_once(model, prompt, schema, schema_name, _attempt_cache(cache, attempt),
                                      settings or {})
        text, err = result
        if err is not None or _holds_json(text or ""):
            return result
    return result


def cache_policy(cache: bool | str) -> bool | CachePolicy:
    """True → keep forever, independent of epoch (the key includes the story); a string → that expiry."""
    if cache is False or cache is None:
        return False
    if isinstance(cache, str):
        if cache.lower() in ("false", "no", "off", "0"):
            return False
        if cache.lower() not in ("true", "yes", "on", "1"):
            return CachePolicy(expiry=cache, per_epoch=False)
    return CachePolicy(expiry=None, per_epoch=False)
