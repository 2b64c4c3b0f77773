"""Model labels for tables and reports: the model's name, never a file-system path.

lm-evaluation-harness records a local model by its ``pretrained=`` path (``model_args``, ``model_name``, and the
output folder it names after it, with ``/`` written as ``__``), and inspect by ``provider/<path>`` when the
model was given as a folder. A Hugging Face cache folder (``.../models--org--name/snapshots/<hash>``) names its
repository, so it becomes ``org/name``; another folder becomes its own name; hub ids and API model names stay
as they are.

Every label is in Unicode normal form NFC (:func:`nfc`): two spellings of one name that differ only in how an
accented letter is encoded (``é`` as one code point, or ``e`` and a combining accent) look identical and are
one model, never two rows. Labels read from tables (a ``model`` column) go through :func:`nfc` too.

Invisible and direction-changing characters (Unicode categories Cf and Cc: a right-to-left override
``U+202E``, zero-width spaces and joiners, bidi isolates, a byte-order mark) are shown escaped (``\\u202e``), so
that two different names never display as one and a name cannot reorder the text around it
(:func:`visible`); the first time a name is changed so, one notice on stderr says it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

#: a Hugging Face hub cache folder: ``models--<org>--<name>`` (path separators as ``/`` or lm-eval's ``__``)
_HUB_CACHE = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+?)(?:/|__snapshots|$)")
#: folder names that do not name a model by themselves (training checkpoints): the parent folder is kept
_GENERIC = re.compile(r"^(checkpoint|ckpt|step|global_step|epoch|final|merged|hf|model)[-_]?\d*$", re.IGNORECASE)
#: the keys of lm-eval ``model_args`` that name the model, in order of preference
_NAME_KEYS = ("pretrained", "model", "path", "model_name", "engine")


def _looks_like_path(text: str) -> bool:
    """An absolute, home or relative path, a hub cache folder, or lm-eval's folder name of a path (``__x__y``);
    ``org/name`` hub ids and ``provider/org/name`` inspect names are names."""
    return text.startswith(("/", "~", "./", "../", "__")) or bool(re.match(r"^[A-Za-z]:[\\/]", text)) \
        or "models--" in text


def _from_path(path: str) -> str:
    if "/" not in path and "\\" not in path and "__" in path:  # lm-eval's output folder name: "/" written "__"
        path = path.replace("__", "/")
    m = _HUB_CACHE.search(path)
    if m:
        return f"{m.group('org')}/{m.group('name')}"
    parts = [p for p in re.split(r"[\\/]", path.rstrip("/\\")) if p]
    if len(parts) > 2 and parts[-2] == "snapshots":  # .../<repo folder>/snapshots/<hash>
        parts = parts[:-2]
    if len(parts) > 1 and _GENERIC.match(parts[-1]):  # run1/checkpoint-1000, not checkpoint-1000 alone
        return f"{parts[-2]}/{parts[-1]}"
    return parts[-1] if parts else path


def _model_args_name(text: str) -> str | None:
    """The model named by an lm-eval ``model_args`` string ``k=v,k=v`` (None when it is not one)."""
    if "=" not in text:
        return None
    pairs = dict(p.split("=", 1) for p in text.split(",") if "=" in p)
    return next((pairs[k].strip() for k in _NAME_KEYS if pairs.get(k, "").strip()), None)


def nfc(text: str) -> str:
    """``text`` in Unicode normal form NFC (the form of a model label).

    >>> nfc("cafe\u0301") == "caf\u00e9"
    True
    """
    return unicodedata.normalize("NFC", text)


_NOTICED: set[str] = set()


def visible(text: str) -> str:
    r"""``text`` with every invisible or direction-changing character (Unicode categories Cf, Cc) escaped as
    ``\uXXXX``; one notice on stderr the first time a text is changed.

    >>> print(visible("gpt\u202e4o-mini"), visible("llama\u200b3"))
    gpt\u202e4o-mini llama\u200b3
    """
    if text.isascii() and text.isprintable():
        return text
    shown = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cf", "Cc") else c for c in text)
    if shown != text and shown not in _NOTICED:
        import sys

        _NOTICED.add(shown)
        print(f"stereoprobe: notice: model name {shown} holds invisible or direction-changing characters; shown "
              "escaped", file=sys.stderr)
    return shown


def model_label(model: Any) -> str:
    """The label of ``model``: an lm-eval ``model_args`` (string or mapping), a ``model_name``, an inspect
    model name (``provider/model``) or a path.

    >>> model_label("pretrained=/root/.cache/huggingface/hub/models--HuggingFaceTB--SmolLM2-135M/snapshots/ab12,dtype=float32")
    'HuggingFaceTB/SmolLM2-135M'
    >>> model_label({"pretrained": "/data/models/Llama-3.1-8B-Instruct"})
    'Llama-3.1-8B-Instruct'
    >>> model_label("__root__.cache__huggingface__hub__models--meta-llama--Llama-3.1-8B__snapshots__0e9e39f")
    'meta-llama/Llama-3.1-8B'
    >>> model_label("transformers//srv/models/models--Qwen--Qwen2.5-7B/snapshots/a1")
    'transformers/Qwen/Qwen2.5-7B'
    >>> model_label("pretrained=/runs/lr3e-4/checkpoint-1000")
    'lr3e-4/checkpoint-1000'
    >>> model_label("pretrained=meta-llama/Llama-3.1-8B-Instruct"), model_label("openai/gpt-4o")
    ('meta-llama/Llama-3.1-8B-Instruct', 'openai/gpt-4o')
    """
    if isinstance(model, Mapping):
        name = next((str(model[k]) for k in _NAME_KEYS if model.get(k)), None)
        return model_label(name) if name else "unknown model"
    text = visible(nfc(str(model).strip()))
    named = _model_args_name(text)
    if named is not None:
        return model_label(named)
    provider, sep, rest = text.partition("/")
    if sep and re.fullmatch(r"[A-Za-z][\w.-]*", provider) and _looks_like_path(rest):
        return f"{provider}/{_from_path(rest)}"  # inspect: provider/<folder>
    from stereoprobe.redact import redact_text  # a model_args string naming no model may carry an api_key

    return redact_text(_from_path(text) if _looks_like_path(text) else text)
