"""The generation settings the ``transformers`` provider applies: the request's, and neutral values for the rest.

transformers fills every setting a ``generate()`` call leaves unset from the model folder's
``generation_config.json`` and then from its own defaults (top-k 50). Both are departures from a request that
says nothing about them: Qwen2.5-Instruct's folder sets top-k 20 and repetition penalty 1.05, and transformers'
default top-k 50 truncates every sampled distribution. So:

- :func:`structural_config` keeps of the folder's generation config only what describes the model (token ids
  of BOS/EOS/padding/decoder start, forced and suppressed tokens, the cache layout); it replaces the loaded
  model's ``generation_config`` once, at load time;
- :func:`request_config` builds each call's ``GenerationConfig`` from a fresh one with every sampling and
  penalty setting explicit: the request's value, else the neutral one (:data:`NEUTRAL_SAMPLING`: no top-k, top-p
  1, no min-p/typical/epsilon/eta cut, no repetition penalty, one beam, no n-gram ban);
- :func:`settings_record` is what ran, read back from the config transformers resolves, recorded in every
  output's ``ModelOutput.metadata[EFFECTIVE_SETTINGS_KEY]`` (so the log's model events carry it).

A request without a temperature decodes greedily (transformers' ``do_sample`` default), whatever the folder says.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EFFECTIVE_SETTINGS_KEY", "NEUTRAL_SAMPLING", "STRUCTURAL_FIELDS", "is_sampling", "request_config",
           "settings_record", "structural_config"]

EFFECTIVE_SETTINGS_KEY = "stereoprobe_generation_settings"
"""Key of the effective-settings record in ``ModelOutput.metadata`` (and so in the log's model events)."""

STRUCTURAL_FIELDS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id", "forced_bos_token_id",
                     "forced_eos_token_id", "suppress_tokens", "begin_suppress_tokens", "cache_implementation")
"""The folder's generation-config fields that describe the model rather than a way of sampling from it."""

NEUTRAL_SAMPLING: dict[str, Any] = {
    "top_k": 0, "top_p": 1.0, "min_p": 0.0, "typical_p": 1.0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0,
}
"""Sampling warpers switched off (transformers skips top-k 0, top-p 1, typical-p 1 and zero cut-offs; min-p 0
keeps every token)."""

NEUTRAL_ALWAYS: dict[str, Any] = {
    "num_beams": 1, "repetition_penalty": 1.0, "encoder_repetition_penalty": 1.0, "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0, "min_length": 0, "length_penalty": 1.0,
    "renormalize_logits": False, "remove_invalid_values": False,
}
"""Logits processors that act in greedy decoding too, switched off."""

RECORDED = ("do_sample", "temperature", "top_p", "top_k", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff",
            "top_h", "repetition_penalty", "encoder_repetition_penalty", "no_repeat_ngram_size", "num_beams",
            "max_new_tokens", "num_return_sequences")
SAMPLING_ONLY = ("temperature", "top_p", "top_k", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff", "top_h")


def is_sampling(temperature: float | None) -> bool:
    """Sampled decoding for a temperature above 0; greedy for 0 and for no temperature."""
    return temperature is not None and temperature > 0


def structural_config(folder_config: Any) -> Any:
    """A fresh ``GenerationConfig`` with only :data:`STRUCTURAL_FIELDS` taken from ``folder_config``."""
    from transformers import GenerationConfig

    kept = {name: getattr(folder_config, name, None) for name in STRUCTURAL_FIELDS}
    return GenerationConfig(**{name: value for name, value in kept.items() if value is not None})


def request_config(settings: dict[str, Any], sampling: bool, pad_id: int) -> Any:
    """The ``GenerationConfig`` of one batch: ``settings`` (the provider's resolved request: temperature, top_p,
    top_k (None or 0: none), repetition_penalty, max_new_tokens, n, logprobs) and neutral values elsewhere."""
    from transformers import GenerationConfig

    values: dict[str, Any] = {**NEUTRAL_ALWAYS, "do_sample": sampling,
                              "max_new_tokens": int(settings["max_new_tokens"]),
                              "repetition_penalty": float(settings["repetition_penalty"]), "pad_token_id": pad_id,
                              "return_dict_in_generate": True, "output_logits": bool(settings["logprobs"])}
    if sampling:
        values.update(NEUTRAL_SAMPLING)
        values["temperature"] = 1.0 if settings["temperature"] is None else float(settings["temperature"])
        if settings["top_p"] is not None:
            values["top_p"] = float(settings["top_p"])
        if settings["top_k"]:
            values["top_k"] = int(settings["top_k"])
        values["num_return_sequences"] = int(settings["n"])
    return GenerationConfig(**values)


def settings_record(resolved: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """What ran: the sampling fields of ``resolved`` (the ``GenerationConfig`` after transformers merged in the
    model's; sampling-only fields are None under greedy decoding, where no warper runs) and the provider's own
    settings (OpenAI penalties, logit bias, stop strings, seed, choices)."""
    sampling = bool(resolved.do_sample)
    record = {name: (getattr(resolved, name, None) if sampling or name not in SAMPLING_ONLY else None)
              for name in RECORDED}
    if sampling and record["top_k"] == 0:
        record["top_k"] = None  # 0 = no top-k
    record.update({
        "frequency_penalty": settings["frequency_penalty"], "presence_penalty": settings["presence_penalty"],
        "logit_bias": {str(k): v for k, v in settings["logit_bias"]}, "stop": list(settings["stop"]),
        "seed": settings["seed"] if sampling else None, "num_choices": int(settings["n"]),
        "reasoning": None,  # reasoning/thinking settings are refused by the provider (providers.settings)
        "response_schema": settings["schema"] is not None,
    })
    return record
