"""Neutral sampling settings on inspect's vLLM providers (``vllm/`` chat, ``vllm-completions/``).

A vLLM server fills every sampling setting a request leaves unset from the model folder's
``generation_config.json`` (its default ``--generation-config auto``: Qwen2.5-Instruct's top_k 20,
repetition_penalty 1.05, temperature 0.7, top_p 0.8), and inspect's OpenAI-compatible request builder never
sends ``top_k``, ``min_p`` or ``repetition_penalty`` (a ``GenerateConfig.top_k`` is dropped). So, for the
requests of stereoprobe's tasks, an inspect hook (:class:`NeutralVLLMSampling`, run before every model call)
completes the request with vLLM's neutral values, the values of ``vllm serve --generation-config vllm``:

- ``extra_body``: ``top_k`` (the request's, else -1 = none), ``min_p`` 0 and ``repetition_penalty`` 1, unless the
  request's own ``extra_body`` sets them;
- ``top_p`` 1 when unset, and on ``vllm/`` a temperature of 1 when unset (``vllm-completions`` already sends
  inspect's 0).

A prefill-only likelihood request (:func:`stereoprobe.providers.vllm_batch.prefill_only`) keeps its
``prompt_logprobs`` 0 although the task's configuration (merged in by inspect) says 1
(:func:`~stereoprobe.providers.vllm_batch.keep_prefill_only`).

Other tasks' requests and other providers are left alone. The hook is registered with inspect only when a vLLM
model runs (:func:`register_for`): named on inspect's command line (the check before the run,
:mod:`stereoprobe.preflight`, so inspect lists it among the hooks it prints at the start), or active or in a role
when a stereoprobe task is built (a script calling ``inspect_ai.eval``). A run on another provider prints no
hook banner. Serving with ``--generation-config vllm`` (or
``-M generation_config=vllm`` when inspect starts the server) gives the same defaults on the server's side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from inspect_ai.hooks import BeforeModelGenerate, Hooks, hooks
from inspect_ai.model import GenerateConfig

__all__ = ["NEUTRAL_EXTRA_BODY", "VLLM_PROVIDERS", "NeutralVLLMSampling", "is_stereoprobe_task", "names_vllm",
           "neutral_vllm_config", "register", "register_for", "register_for_build"]

VLLM_PROVIDERS = ("vllm/", "vllm-completions/")
NEUTRAL_EXTRA_BODY = {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0}
"""vLLM's "off" values (``SamplingParams``: top_k -1 or 0 = all tokens, min_p 0, repetition_penalty 1)."""


def neutral_vllm_config(model_name: str, config: GenerateConfig) -> bool:
    """Complete ``config`` (in place) with vLLM's neutral sampling values when ``model_name`` is a vLLM route;
    True when it is. Values the request sets are kept; a request's ``top_k`` travels in ``extra_body``."""
    if not model_name.startswith(VLLM_PROVIDERS):
        return False
    extra = dict(config.extra_body or {})
    if config.top_k is not None and "top_k" not in extra:
        extra["top_k"] = config.top_k if config.top_k > 0 else -1  # 0: none
    for name, value in NEUTRAL_EXTRA_BODY.items():
        extra.setdefault(name, value)
    config.extra_body = extra
    if config.top_p is None:
        config.top_p = 1.0
    if config.temperature is None and model_name.startswith("vllm/"):
        config.temperature = 1.0
    return True


@lru_cache(maxsize=256)
def is_stereoprobe_task(task_name: str | None) -> bool:
    """True for a task registered by stereoprobe (``stereoprobe/dbb`` or ``dbb``)."""
    if not task_name:
        return False
    from stereoprobe.inspect_internals import registry_lookup

    bare = task_name.split("/", 1)[1] if task_name.startswith("stereoprobe/") else task_name
    for name in (f"stereoprobe/{bare}", bare):
        found = registry_lookup("task", name)
        if found is not None and str(getattr(found, "__module__", "")).startswith("stereoprobe"):
            return True
    return False


class NeutralVLLMSampling(Hooks):
    """Completes each vLLM request of a stereoprobe task with neutral sampling values (module docstring)."""

    async def on_before_model_generate(self, data: BeforeModelGenerate) -> None:
        if is_stereoprobe_task(data.task_name) and neutral_vllm_config(data.model_name, data.config):
            from stereoprobe.providers.vllm_batch import keep_prefill_only

            keep_prefill_only(data.config)


HOOK_NAME = "stereoprobe_vllm_neutral_sampling"
HOOK_DESCRIPTION = "Neutral sampling settings (no top-k, min-p or repetition penalty) on vLLM for stereoprobe tasks"
_REGISTERED = False
# a vLLM route inside a model or role spec: "vllm/m", "judge=vllm-completions/m", "{grader: vllm/m}"
_VLLM_IN_SPEC = re.compile(r"(?:^|[\s=:,{\[\"'])vllm(?:-completions)?/")


def register() -> None:
    """Register :class:`NeutralVLLMSampling` with inspect (once per process)."""
    global _REGISTERED
    if not _REGISTERED:
        hooks(name=HOOK_NAME, description=HOOK_DESCRIPTION)(NeutralVLLMSampling)
        _REGISTERED = True


def names_vllm(specs: Iterable[str]) -> bool:
    """True when a model name or role spec (``--model``, ``--model-role judge=...``) names a vLLM route."""
    return any(_VLLM_IN_SPEC.search(str(spec)) for spec in specs)


def register_for(specs: Iterable[str]) -> bool:
    """Register the hook when ``specs`` name a vLLM route; True when they do."""
    if names_vllm(specs):
        register()
        return True
    return False


def _model_names(models: Any) -> list[str]:
    values = list(models.values()) if isinstance(models, dict) else [models]
    flat = [m for v in values for m in (v if isinstance(v, (list, tuple)) else [v])]
    return [str(m) for m in flat if m is not None]


def register_for_build(task: Any = None) -> bool:
    """When a stereoprobe task is built: register the hook if the active model, a run's role or ``task``'s own
    roles are vLLM routes (nothing before a model is active)."""
    from stereoprobe.inspect_internals import active_model, active_model_roles

    names = _model_names(active_model()) + _model_names(active_model_roles())
    names += _model_names(getattr(task, "model_roles", None) or {})
    return register_for(names)
