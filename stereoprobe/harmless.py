"""The one writer of outside input: a value is written only where its key and its shape are known harmless.

Model arguments (``-M``), generation settings, task arguments (``-T``), model-role bindings, URLs, headers,
arguments echoed by the command line and a provider's error text come from outside: a user, a log, a server.
Every file, table, report and console line that copies them takes them from here, and this module keeps a value
only when it knows it is harmless; everything else becomes :data:`REDACTED`. Nothing here recognises what a
secret looks like (that is a deny-list, and a secret has shapes no list names):

- :func:`safe_settings` (a mapping such as ``model_args``): the value of a key of :data:`HARMLESS_KEYS` (the
  transformers provider's model arguments, inspect's generation settings, the probes' task parameters) is kept
  when it is a number, a boolean, none, or an option word (lower case letters, digits and ``_.:-``, at most 32
  characters: ``float16``, ``cuda:0``, ``sdpa``); a model name of plain names for the keys naming a model
  (:data:`MODEL_KEYS`) and a URL for ``base_url`` (:func:`safe_url`); a list keeps each such item. Every other
  value (any key not in the list: ``apitoken``, ``creds``, ``x7q``; a text, a mapping) becomes ``***``; a key
  that is not a plain identifier is written as ``***`` too;
- :func:`safe_url`: the scheme, the host and port and the path segments that are plain names; the user
  information (everything between ``//`` and the *last* ``@``, so a password holding ``/``, ``#`` or ``?`` is
  hidden whole), path parameters (``;jsessionid=...``), a segment that is not a plain name or reads as a random
  token (a commit id or SHA-256 digest, 40 or 64 lower-case hex digits, is a pin: kept), the value of a query parameter not in :data:`HARMLESS_QUERY_NAMES` or not a plain word (a URL
  percent-encoded inside ``?path=``), and a fragment that is not a plain anchor become ``***``;
- :func:`safe_error`: a provider's error text is reduced to its exception class, its HTTP status and a fixed
  message, unless a rule of :data:`HARMLESS_ERRORS` names the whole text harmless;
- :func:`safe_arg`: one command-line word echoed back (argparse's "unrecognized arguments", ``run_info.json``'s
  ``command``): an option name (``--out``) is kept, ``name=value`` keeps the name and a harmless value, a URL
  keeps what :func:`safe_url` keeps, any other word is ``***``.

>>> safe_settings({"apitoken": "abc", "dtype": "float16", "temperature": 0.5, "score_first_token": True})
{'apitoken': '***', 'dtype': 'float16', 'temperature': 0.5, 'score_first_token': True}
>>> safe_url("http://mirror:p/w#d?x@host.example:8080/a;jsessionid=F00/b?region=eu&sig=zz#top")
'http://***@host.example:8080/a;***/b?region=eu&sig=***#top'
>>> safe_error("AuthenticationError: Error code: 401 - {'message': 'Incorrect API key: sk-abc'}")
'AuthenticationError (HTTP 401 Unauthorized): provider error; its text is not written (it may quote a credential)'
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["safe_in_text", "HARMLESS_ERRORS", "HARMLESS_KEYS", "HARMLESS_QUERY_NAMES", "MODEL_KEYS", "REDACTED", "is_harmless_value",
           "safe_arg", "safe_error", "safe_settings", "safe_url"]

REDACTED = "***"

#: model arguments of the transformers provider (stereoprobe.providers.transformers_api) and common ones of
#: inspect's providers whose values are settings
_MODEL_ARGS = frozenset({
    "device", "dtype", "batch_size", "batch_tokens", "gen_batch_size", "prefix_sharing", "score_first_token", "kind",
    "tokenizer", "mlm_max_length", "repetition_penalty", "top_k", "revision", "trust_remote_code",
    "attn_implementation", "max_connections", "batch_invariant", "microbatch_tokens", "continuous_batching",
    "cuda_graphs", "scorer_process", "static_cache",
    "gpu_memory_utilization", "tensor_parallel_size", "max_model_len", "max_num_seqs",
    "enforce_eager", "quantization", "load_in_8bit", "load_in_4bit", "base_url", "model_path", "pretrained",
    "emulate_tools", "responses_api", "stream", "region", "api_version",
})
#: inspect's generation settings (``GenerateConfig``; ``--temperature``, ``--max-tokens``, ...) whose values are
#: numbers, booleans or option words (not ``stop_seqs``, ``system_message``, ``extra_body``: free text)
_GENERATE = frozenset({
    "adaptive_connections", "attempt_timeout", "batch", "best_of", "cache", "cache_prompt", "effort",
    "fail_on_refusal", "frequency_penalty", "internal_tools", "logprobs", "max_connections", "max_retries",
    "max_tokens", "max_tool_output", "num_choices", "parallel_tool_calls", "presence_penalty", "prompt_logprobs",
    "reasoning_effort", "reasoning_history", "reasoning_mode", "reasoning_summary", "reasoning_tokens", "seed",
    "stream_idle_timeout", "temperature", "timeout", "top_k", "top_logprobs", "top_p", "verbosity",
})
#: the probes' task parameters (``-T``; tests/test_harmless.py checks that every task's parameters are here)
_TASK_PARAMS = frozenset({
    "associations", "attributes", "batch_size", "benchmark", "bos_in_continuation", "cache", "categories",
    "concepts", "consensus", "descriptors", "encoder_decoder", "epochs", "extra_english", "extraction_prompt",
    "faithful", "frequency_penalty", "generation", "generator_model", "grader_temperature", "groups",
    "harmful_threshold", "languages", "limit", "limit_templates", "local", "max_tokens", "min_extractors",
    "mlm_max_length", "mode", "n_variations", "names", "normalisation", "normalize_apostrophes", "option_order",
    "order_model", "prompt", "refusal_character", "refusal_failure", "refusal_votes", "repetition_base",
    "requirement", "revision", "role_prompts", "role_settings", "run_settings", "runs", "scenario_groups",
    "scoring", "seed", "seeds", "separator", "settings", "shuffle_seed", "slices", "source", "splits",
    "stories_per_prompt", "strict_parse", "structured_output", "subset", "system", "system_message", "taxonomy",
    "temperature", "template_wording", "templates", "texts_key", "threshold", "tokenizer", "tool_calls", "top_k",
    "top_p", "unit", "upstream_dir", "use_filter", "value_lists", "values", "variations", "verify",
    "verify_seeds",
})
#: every key whose value may be written (when its shape is harmless too)
HARMLESS_KEYS = _MODEL_ARGS | _GENERATE | _TASK_PARAMS | {"model", "model_name", "task", "task_version"}
#: keys whose value is a model name (kept when it is ``provider/org/name`` of plain names)
MODEL_KEYS = frozenset({"model", "model_name", "model_path", "pretrained", "tokenizer", "generator_model",
                        "order_model"})
#: query parameters whose value is kept in a URL (when it is a plain word)
HARMLESS_QUERY_NAMES = frozenset({
    "api-version", "api_version", "version", "v", "region", "revision", "rev", "ref", "branch", "tag", "download",
    "raw", "format", "lang", "language", "page", "path", "file", "config", "split", "subset", "plain", "view", "tab",
})
#: provider error texts written as they are: each rule names a whole text known to be harmless
HARMLESS_ERRORS = (
    re.compile(r"(?:[A-Za-z_.]+\.)?(?:TimeoutError|CancelledError)(?:\(\))?"),
    re.compile(r"Sample (?:time|token|message|working) limit exceeded"),
    re.compile(r"Connection (?:refused|reset by peer|closed)"),
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,47}")
_OPTION_WORD = re.compile(r"[a-z0-9][a-z0-9_.:+-]{0,31}")
_PLAIN = re.compile(r"[A-Za-z0-9._~+-]{1,64}")  # a path segment, a query value
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,95}(?:/[A-Za-z0-9][A-Za-z0-9._:+-]{0,95}){0,3}")
_HEX = re.compile(r"[0-9a-f]{7,40}")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", "auto"})


def _random(word: str) -> bool:
    """A run of letters and digits reading as a random token: 16 or more of them without a separator, mixing
    upper case, lower case and digits, or 20 or more mixing letters and digits."""
    for run in re.findall(r"[A-Za-z0-9]{16,}", word):
        has = [bool(re.search(p, run)) for p in ("[a-z]", "[A-Z]", r"\d")]
        if all(has) or (len(run) >= 20 and has[2] and (has[0] or has[1])):
            return True
    return False


def _harmless_scalar(key: str, value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return not isinstance(value, float) or math.isfinite(value)
    if not isinstance(value, str):
        return False
    v = value.strip()
    if v.lower() in _BOOLEAN_WORDS or _NUMBER.fullmatch(v):
        return True
    if key == "revision" and _HEX.fullmatch(v):
        return True
    return bool(_OPTION_WORD.fullmatch(v)) and not _random(v)


def is_harmless_value(key: str, value: Any) -> bool:
    """Whether ``value`` may be written under ``key``: a key of :data:`HARMLESS_KEYS` and a harmless shape."""
    if key not in HARMLESS_KEYS:
        return False
    if isinstance(value, (list, tuple)):
        return all(_harmless_scalar(key, v) for v in value)
    return _harmless_scalar(key, value)


def _safe_key(key: Any) -> str:
    k = str(key)
    return k if _IDENT.fullmatch(k) and not _random(k) else REDACTED


def _safe_value(key: str, value: Any) -> Any:
    if key not in HARMLESS_KEYS:
        return REDACTED
    if key == "base_url" and isinstance(value, str):
        return safe_url(value)
    if key in MODEL_KEYS and isinstance(value, str):
        return safe_model(value)
    if isinstance(value, (list, tuple)):
        return [v if _harmless_scalar(key, v) else REDACTED for v in value]
    return value if _harmless_scalar(key, value) else REDACTED


def safe_settings(values: Mapping[str, Any] | None) -> dict[str, Any]:
    """``values`` (model arguments, generation settings, task arguments, headers) with every value not known
    harmless replaced by :data:`REDACTED` (see the module docstring); keys in their order."""
    return {_safe_key(k): _safe_value(str(k), v) for k, v in (values or {}).items()}


def safe_model(name: str) -> str:
    """A model name as it may be written: ``provider/org/name`` of plain names (a folder's path, a name with a
    random token or anything else is ``***``; :func:`stereoprobe.model_labels.model_label` gives a folder's
    public name before a value reaches here)."""
    label = str(name)
    return label if _MODEL_NAME.fullmatch(label) and not _random(label) else REDACTED


_SCHEME = re.compile(r"(?i)([a-z][a-z0-9+.-]*:/{1,3})")
_HOST = re.compile(r"(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}|\[[0-9A-Fa-f:.]+\]")
_ANCHOR = re.compile(r"[A-Za-z][\w.-]{0,63}")


_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a git commit id or a SHA-256 digest: a pin, public


def _segment(seg: str) -> str:
    name, semi, _ = seg.partition(";")  # path parameters (;jsessionid=...) are never written
    if name and (not _PLAIN.fullmatch(name) or (_random(name) and not _COMMIT.fullmatch(name))):
        name = REDACTED
    return f"{name};{REDACTED}" if semi else name


def _query_item(item: str) -> str:
    name, eq, value = item.partition("=")
    if not eq:
        return item if _PLAIN.fullmatch(item) and not _random(item) else REDACTED
    keep = name.lower() in HARMLESS_QUERY_NAMES and (not value or (_PLAIN.fullmatch(value) and not _random(value)))
    shown = name if _PLAIN.fullmatch(name) and not _random(name) else REDACTED
    return f"{shown}={value if keep else REDACTED}"


def safe_url(url: str) -> str:
    """``url`` with only what is known harmless kept (see the module docstring).

    >>> safe_url("https://h.example/api/Qm7vT2xK9pLw4ZrB8nYc3HdF?code=x&api-version=2024-06-01")
    'https://h.example/api/***?code=***&api-version=2024-06-01'
    """
    text = str(url)
    m = _SCHEME.match(text)
    if m is None:
        return REDACTED
    rest = text[m.end():]
    auth_end = len(rest)
    for stop in "/?#":
        i = rest.find(stop)
        auth_end = min(auth_end, i) if i >= 0 else auth_end
    user = ""
    if "@" in rest:  # user information: up to the last @, whatever it holds (a password with / # ?)
        at = rest.rindex("@")
        user, rest = f"{REDACTED}@", rest[at + 1:]
        auth_end = min([i for i in (rest.find(c) for c in "/?#") if i >= 0] or [len(rest)])
    authority, after = rest[:auth_end], rest[auth_end:]
    host, colon, port = authority.rpartition(":") if not authority.endswith("]") else (authority, "", "")
    if not colon or not port.isdigit():
        host, colon, port = authority, "", ""
    host = host if _HOST.fullmatch(host) else REDACTED
    after, hash_, fragment = after.partition("#")
    path, mark, query = after.partition("?")
    path = "/".join(_segment(s) for s in path.split("/"))
    query = "&".join(_query_item(i) for i in query.split("&")) if mark else ""
    fragment = fragment if not hash_ or _ANCHOR.fullmatch(fragment) else REDACTED
    return f"{m.group(1).lower()}{user}{host}{colon}{port}{path}{mark}{query}{hash_}{fragment}"


_CLASS = re.compile(r"\b((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9]*(?:Error|Exception|Timeout|Exceeded))\b")
_STATUS = re.compile(r"(?i)(?:^\s*|error code:?\s*|status(?: code)?:?\s*|http(?:/[\d.]+)?:?\s*|\()([1-5]\d\d)\b")
ERROR_MESSAGE = "provider error; its text is not written (it may quote a credential)"


def safe_error(text: Any) -> str:
    """A provider's error (an exception or its text) as its exception class, HTTP status and a fixed message
    (:data:`ERROR_MESSAGE`), unless a rule of :data:`HARMLESS_ERRORS` names the whole text harmless."""
    from http import HTTPStatus

    if isinstance(text, BaseException):
        status = getattr(text, "status_code", None) or getattr(text, "status", None)
        head = type(text).__name__
        text = f"{head} {status if isinstance(status, int) else ''} {text}"
    raw = " ".join(str(text or "").split())
    if any(rule.fullmatch(raw) for rule in HARMLESS_ERRORS):
        return raw
    cls = _CLASS.search(raw)
    status_m = _STATUS.search(raw)
    parts = [cls.group(1).rsplit(".", 1)[-1] if cls else "error"]
    if status_m:
        code = int(status_m.group(1))
        try:
            parts.append(f"(HTTP {code} {HTTPStatus(code).phrase})")
        except ValueError:
            parts.append(f"(HTTP {code})")
    return f"{' '.join(parts)}: {ERROR_MESSAGE}"


@functools.lru_cache(maxsize=1024)
def safe_arg(word: str) -> str:
    """One command-line word as it may be echoed: an option name (``--out``, ``-M``), ``name=value`` with the
    name shown and the value kept only when harmless (:func:`is_harmless_value`), a URL as :func:`safe_url`
    writes it; any other word (a value no key names) is ``***``."""
    if re.fullmatch(r"--?[A-Za-z][A-Za-z0-9-]{0,47}", word):
        return word
    name, eq, value = word.partition("=")
    if eq:
        bare = name.lstrip("-")
        shown = name if _IDENT.fullmatch(bare) and not _random(bare) else REDACTED
        keep = is_harmless_value(bare.replace("-", "_"), value)
        return f"{shown}={value if keep else REDACTED}"
    return safe_url(word) if _SCHEME.match(word) else REDACTED


def safe_in_text(text: str, outside: Mapping[str, str]) -> str:
    """Our own ``text`` (a plan's note, a message) with each value of outside input it quotes (``outside``: the
    value and the form in which it may be written, e.g. ``{name: safe_model(name)}``) replaced by that form,
    longest first; the rest of the text is ours."""
    for raw in sorted(outside, key=len, reverse=True):
        if raw:
            text = text.replace(raw, outside[raw])
    return text
