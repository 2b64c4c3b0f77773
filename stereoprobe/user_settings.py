"""The one rule for the settings of a request: what the user gave wins; the paper's values fill only the rest.

Every solver and scorer that sends settings of its own with a request (the published protocol's temperature,
token limit, reasoning effort, ...) builds them with :func:`request_config`, never by hand.

Where inspect keeps what the user gave (inspect-ai 0.3, ``inspect_ai/_eval/eval.py``, ``model/_model.py``):

- the command line's ``--max-tokens``, ``--temperature``, ``--top-p``, ``--reasoning-effort``, ... (and
  ``eval(..., max_tokens=...)``) become the evaluated model's own ``GenerateConfig`` (``resolve_models``) and,
  merged over the task's ``Task(config=...)``, the run's *active* ``GenerateConfig``
  (``active_generate_config()``); ``--model-spec`` settings are the evaluated model's own config;
- a ``--model-role 'judge={model: ..., max_tokens: 16}'`` spec becomes that role model's own config;
- a request's ``generate(config=...)`` is merged last, over both (``Model._resolve_config``): whatever a
  solver sends per request beats the command line. A role model never sees the command line's generation
  settings (only the operational ones: connections, retries, timeout, cache).

So the user's settings for a request to ``model`` are the evaluated model's own config, then the active config,
then (for a role model) the role's own config, each over the one before; :func:`request_config` sends them with
the request, so they reach every role too, and adds the paper's value of each field they leave unset. This
holds only if no task puts a paper value into ``Task(config=...)`` (which would read as the user's): the paper's
values travel per request, through this module; ``Task(config=...)`` holds only what the user chose with ``-T``.

Only the settings that choose what a request samples (:data:`SAMPLING_FIELDS`) are the user's to win: the shape
of a request (its response format, the log-probabilities a scoring request reads, a system message) belongs to
the protocol. ``-M`` model arguments are the provider's (e.g. the ``transformers`` provider's ``-M top_k``): no
paper value sets one of them (none holds ``top_k`` or a repetition penalty), so they are never overridden.

Requests that read log-probabilities of fixed text and sample nothing (GlobalBias sentences, DBB logprob mode,
DBB-SG, the capability probes) keep their one greedy token (``max_tokens`` 1, temperature 0): these settings are
how the score is read, not a choice of generation, and do not go through this module (docs/fidelity.md, G-rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.model import GenerateConfig, Model
from stereoprobe.inspect_internals import active_generate_config, active_model

#: the settings that choose what a request samples: the user's value wins over the paper's, on every request
SAMPLING_FIELDS = (
    "max_tokens", "temperature", "top_p", "top_k", "stop_seqs", "best_of", "frequency_penalty", "presence_penalty",
    "logit_bias", "seed", "verbosity", "effort", "reasoning_effort", "reasoning_mode", "reasoning_tokens",
    "reasoning_summary", "extra_body",
)


def user_settings(model: Model | None = None) -> dict[str, Any]:
    """The sampling settings the user gave for requests to ``model`` (None or the evaluated model: the evaluated
    model's; a role model: the command line's, then its role spec's over them). Fields left unset are absent."""
    evaluated = active_model()
    given = evaluated.config if evaluated is not None else GenerateConfig()
    given = given.merge(active_generate_config())
    if model is not None and model is not evaluated:
        given = given.merge(model.config)
    return {k: getattr(given, k) for k in SAMPLING_FIELDS if getattr(given, k) is not None}


def request_config(paper: Mapping[str, Any], model: Model | None = None) -> dict[str, Any]:
    """The ``GenerateConfig`` fields to send with one request to ``model`` (see :func:`user_settings`): every
    setting the user gave, and the ``paper``'s value of each field the user left unset."""
    user = user_settings(model)
    return {**{k: v for k, v in paper.items() if k not in user}, **user}
