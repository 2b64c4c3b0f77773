"""Loading models for the ``transformers`` provider: device and dtype choice, model kind, context window,
and a per-process cache of loaded weights (``default`` = the bundled SmolLM2-135M-Instruct)."""

from __future__ import annotations

import os
import threading
from typing import Any

import torch

from stereoprobe.providers.sampling import structural_config

DEFAULT_NAME = "default"
_MASKED_TYPES = {"bert", "roberta", "xlm-roberta", "distilbert", "albert", "electra", "deberta", "deberta-v2",
                 "camembert", "mpnet", "modernbert"}


def pick_device(requested: str | None = None) -> str:
    """``-M device=`` if given (refused where this machine lacks it), else cuda, then mps, then cpu."""
    from stereoprobe.providers.validation import check_device

    chosen = check_device(requested)
    if chosen is not None:
        return chosen
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def pick_dtype(device: str, requested: str | None = None) -> torch.dtype:
    """``-M dtype=`` if given; float32 on CPU (bfloat16 moves per-sentence NLL by up to 0.8 nats there),
    bfloat16 on CUDA when supported (float16 otherwise), float16 on MPS."""
    if requested and requested != "auto":
        try:
            dtype = getattr(torch, requested)
        except AttributeError:
            dtype = None
        if not isinstance(dtype, torch.dtype):
            from stereoprobe.params import fail
            from stereoprobe.providers.validation import ModelArgError

            fail("dtype", requested, "one of auto, float32, bfloat16, float16", ModelArgError)
        return dtype
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("mps"):
        return torch.float16
    return torch.float32


def model_kind(config: Any) -> str:
    """``causal``, ``masked`` or ``seq2seq`` from a transformers config."""
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    archs = getattr(config, "architectures", None) or []
    if any(a.endswith("ForCausalLM") or a.endswith("LMHeadModel") for a in archs):
        return "causal"
    if any(a.endswith("ForMaskedLM") for a in archs) or getattr(config, "model_type", "") in _MASKED_TYPES:
        return "masked"
    return "causal"


def context_window(config: Any, tokenizer: Any) -> int | None:
    """Longest input the model accepts: its position table, else a sensible tokenizer limit, else None."""
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 10**7:
        return limit
    return None


def register_model_info(model: str, context_length: int | None) -> None:
    """Tell inspect the context window of ``model`` (``transformers/<name>``), as inspect's own vLLM provider
    does, unless the user registered information for it (``set_model_info``). Without it inspect looks the
    model up by instantiating the provider again (a second provider object, and its imports, on the event
    loop at the first sample's model event)."""
    from inspect_ai.model import ModelInfo, set_model_info

    from stereoprobe.inspect_internals import custom_model_info

    if custom_model_info(model) is None:
        set_model_info(model, ModelInfo(model=model, context_length=context_length))


_LOADED: dict[tuple[Any, ...], tuple[Any, Any, str]] = {}
_LOADED_LOCK = threading.Lock()


def load(
    model_name: str,
    device: str,
    dtype: torch.dtype,
    kind: str | None = None,
    tokenizer_id: str | None = None,
    load_kwargs: dict[str, Any] | None = None,
) -> tuple[Any, Any, str]:
    """Load model and tokenizer (``default`` = the bundled model), once per process for identical arguments;
    clear error for an unknown model.

    inspect creates one model API per (model, generate config), so a model bound to several roles (subject,
    extractor, refusal detector, judge) with different settings would otherwise hold one copy of its weights
    per role. Inference never mutates the weights, so the instances share them.
    """
    load_kwargs = dict(load_kwargs or {})
    key = (model_name, device, str(dtype), kind, tokenizer_id, tuple(sorted((k, repr(v)) for k, v in load_kwargs.items())))
    with _LOADED_LOCK:
        if key not in _LOADED:
            _LOADED[key] = _from_pretrained(model_name, device, dtype, kind, tokenizer_id, load_kwargs)
        return _LOADED[key]


def _from_pretrained(model_name: str, device: str, dtype: torch.dtype, kind: str | None, tokenizer_id: str | None,
                     load_kwargs: dict[str, Any]) -> tuple[Any, Any, str]:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSeq2SeqLM, AutoTokenizer

    if model_name == DEFAULT_NAME:
        from stereoprobe.providers.default_model import default_model_dir

        source = str(default_model_dir())
    else:
        source = model_name
    from stereoprobe.errors import reason
    from stereoprobe.providers.validation import ModelArgError

    try:
        config = AutoConfig.from_pretrained(source, **load_kwargs)
    except (OSError, ValueError) as ex:
        offline = os.environ.get("HF_HUB_OFFLINE") == "1"
        raise ModelArgError(
            f"transformers provider: cannot load model {model_name!r}: it is neither a local model folder nor a "
            f"model id found on the Hugging Face hub{' cache (HF_HUB_OFFLINE=1)' if offline else ''}. "
            f"Use transformers/default for the bundled model. ({reason(ex, 300, fold=True)})"
        ) from ex
    kind = kind or model_kind(config)
    if kind not in {"causal", "masked", "seq2seq"}:
        raise ValueError(f"transformers provider: kind must be causal, masked or seq2seq, got {kind!r}")
    loader = {"causal": AutoModelForCausalLM, "masked": AutoModelForMaskedLM, "seq2seq": AutoModelForSeq2SeqLM}[kind]
    try:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_id or source,
                                                  **{k: v for k, v in load_kwargs.items() if k != "attn_implementation"})
    except (OSError, ValueError) as ex:
        raise ModelArgError(f"transformers provider: cannot load the tokenizer {tokenizer_id or model_name!r}"
                            f"{' (-M tokenizer)' if tokenizer_id else ''}: {reason(ex, 300, fold=True)}"
                            ) from ex
    model = loader.from_pretrained(source, dtype=dtype, **load_kwargs)
    model.to(device)
    model.eval()
    if getattr(model, "generation_config", None) is not None:  # the folder's sampling defaults never apply
        model.generation_config = structural_config(model.generation_config)
    return model, tokenizer, kind
