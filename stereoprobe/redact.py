"""Credentials never reach a file or a console line: redaction of run settings and texts.

A key given to a provider (``-M api_key=...``, a role's ``args``, a base URL with ``user:password@`` or
``?key=...``) is recorded by inspect in the log's header. Everything that copies run settings out of a log
(``run_info.json``, DBB's runs table and report, the leaderboard's runs table, the index page) and every
console line of the command line pass through :func:`redact` / :func:`redact_text`, which put
:data:`REDACTED` in place of

- the value of a credential-like name (:func:`is_secret_name`: ``api_key``, ``apiKey``, ``x-api-key``,
  ``token``, ``hf_token``, ``access_token``, ``secret``, ``password``, ``authorization``, ``auth``,
  ``cookie``, ``credentials``, ``sig`` ...), in a mapping or as ``name=value`` / ``name: value`` in a text
  (a query string, an lm-eval ``model_args`` string, a command line); numbers and booleans are kept
  (``score_first_token=true`` is a setting, not a secret), and so are names such as ``max_tokens``,
  ``scenario_key`` or ``eos_token``;
- the user information of a URL (``https://user:password@host`` -> ``https://***@host``);
- the credential after ``Bearer`` / ``Basic``;
- text shaped like a well-known provider key (``sk-...``, ``hf_...``, ``ghp_...``, ``AKIA...``, ``AIza...``).

>>> redact({"api_key": "sk-abc", "score_first_token": True, "max_tokens": 16})
{'api_key': '***', 'score_first_token': True, 'max_tokens': 16}
>>> redact_text("https://me:pw@host.example/v1?api_key=abc&x=1")
'https://***@host.example/v1?api_key=***&x=1'
>>> redact_text("stereoprobe plan globalbias -M api_key=sk-abc")
'stereoprobe plan globalbias -M api_key=***'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_name", "redact", "redact_html", "redact_text"]

REDACTED = "***"

#: a name holding one of these words is a credential
_SECRET_WORDS = frozenset({
    "secret", "secrets", "password", "passwords", "passwd", "pwd", "passphrase", "authorization", "auth",
    "authentication", "bearer", "credential", "credentials", "cookie", "cookies", "signature", "sig", "apikey",
    "apikeys", "accesskey", "secretkey", "privatekey", "xapikey", "accesstoken", "authtoken", "refreshtoken",
    "sessiontoken", "hftoken", "pat",
})
#: ``<qualifier>_key``: a credential (``api_key``, ``access_key``); ``scenario_key`` is not
_KEY_QUALIFIERS = frozenset({
    "api", "access", "secret", "private", "subscription", "account", "client", "service", "master", "auth",
    "session", "signing", "encryption", "license", "app", "application", "admin", "openai", "anthropic",
    "google", "gemini", "azure", "aws", "hf", "together", "groq", "mistral", "cohere", "deepseek", "x",
})
#: ``<word>_token`` that names a setting, not a credential (``eos_token``, ``score_first_token``)
_SETTING_TOKENS = frozenset({
    "eos", "bos", "pad", "unk", "sep", "cls", "mask", "first", "last", "special", "start", "end", "stop",
    "image", "audio", "video", "chat", "default", "per", "max", "min", "num", "n",
})
_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null", ""})


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def is_secret_name(name: str, *, bare_key: bool = True) -> bool:
    """Whether a setting called ``name`` holds a credential. ``bare_key``: ``key`` alone is one (a URL's
    ``?key=``); in a mapping it is not (a taxonomy's or an upstream source's ``key`` is a name).

    >>> [is_secret_name(n) for n in ("api_key", "apiKey", "X-Api-Key", "HF_TOKEN", "token", "password")]
    [True, True, True, True, True, True]
    >>> [is_secret_name(n) for n in ("max_tokens", "score_first_token", "scenario_key", "eos_token", "key_column")]
    [False, False, False, False, False]
    """
    words = _words(str(name))
    if not words:
        return False
    if any(w in _SECRET_WORDS for w in words) or "".join(words) in _SECRET_WORDS:
        return True
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    if last in ("key", "keys"):
        return (bare_key and not before) or before in _KEY_QUALIFIERS
    if last == "token":
        return before not in _SETTING_TOKENS
    return False


def _secret_value(value: Any) -> bool:
    """A value worth hiding: text (not a boolean word) or a structure; numbers and booleans are settings."""
    if isinstance(value, str):
        return value.strip().lower() not in _BOOLEAN_WORDS
    return isinstance(value, (Mapping, list, tuple))


def redact(value: Any) -> Any:
    """``value`` (a mapping, list, text, number ...) with every credential replaced by :data:`REDACTED`:
    values of credential-like names (:func:`is_secret_name`), and credentials inside texts
    (:func:`redact_text`). Mappings and lists are copied, other values returned as they are."""
    if isinstance(value, Mapping):
        return {k: REDACTED if is_secret_name(str(k), bare_key=False) and _secret_value(v) else redact(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v) for v in value) if isinstance(value, tuple) else [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=:-]{6,}")
# name=value / name: value / "name": "value" (a query string, a model_args string, a command line, JSON); the
# value is not consumed by the match, so that a pair inside another value (a base URL's query) is found too
_NAME_SEP = re.compile(r"""(?<![\w.-])(?P<name>[A-Za-z_][\w.-]*)(?P<sep>["']?\s*[=:]\s*)(?!//)(?P<quote>["']?)""")
_VALUE = re.compile(r"""[^\s&,;"'()\[\]{}<>?#]+""")
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{12,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|glpat-[A-Za-z0-9_-]{16,}|r8_[A-Za-z0-9]{20,}|gsk_[A-Za-z0-9]{20,})")


def _pairs(text: str) -> str:
    """``text`` with the value of every credential-like ``name=value`` pair redacted."""
    parts: list[str] = []
    pos = 0
    for m in _NAME_SEP.finditer(text):
        if m.start() < pos or not is_secret_name(m.group("name")):
            continue
        quote = m.group("quote")
        value = re.compile(f"[^{re.escape(quote)}]+" if quote else _VALUE.pattern).match(text, m.end())
        if value is None or not _secret_value(value.group()) or re.fullmatch(r"[-+]?\d+(\.\d+)?", value.group()):
            continue
        parts += [text[pos:m.end()], REDACTED]
        pos = value.end()
    return "".join(parts) + text[pos:]


def redact_text(text: str) -> str:
    """``text`` with credentials replaced by :data:`REDACTED` (see the module docstring)."""
    if not text:
        return text
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _pairs(text)
    return _KEY_SHAPES.sub(REDACTED, text)


_HTML_PARTS = re.compile(r"(?is)(<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>)")
_HTML_ATTRIBUTE = re.compile(r"""(?s)(\s[\w:-]+=)(["'])(.*?)\2""")


def _redact_escaped(escaped: str) -> str:
    """Escaped HTML text (a text node, an attribute value) with its credentials redacted, re-escaped only
    where something was redacted (the page's bytes are kept otherwise)."""
    import html

    raw = html.unescape(escaped)
    clean = redact_text(raw)
    return escaped if clean == raw else html.escape(clean)


def redact_html(page: str) -> str:
    """An HTML page with credentials redacted in its text and attribute values (a table cell quoting a log's
    settings or path, a link's address, a caption), read unescaped so that ``{&quot;api_key&quot;: ...}`` is
    seen as the JSON it shows; scripts, styles, comments and embedded ``data:`` images are left as they are.

    >>> redact_html('<td>{&quot;api_key&quot;: &quot;abc123&quot;}</td><img src="data:image/png;base64,AAA=">')
    '<td>{&quot;api_key&quot;: &quot;***&quot;}</td><img src="data:image/png;base64,AAA=">'
    """

    def tag(part: str) -> str:
        if part.startswith(("<script", "<style", "<!--", "<SCRIPT", "<STYLE")):
            return part
        return _HTML_ATTRIBUTE.sub(
            lambda m: m.group(0) if m.group(3).startswith("data:")
            else f"{m.group(1)}{m.group(2)}{_redact_escaped(m.group(3))}{m.group(2)}", part)

    return "".join(tag(part) if i % 2 else _redact_escaped(part)
                   for i, part in enumerate(_HTML_PARTS.split(page)))


def check_public_url(text: str, what: str = "URL") -> str:
    """``text`` when it is an ``http(s)://host/...`` URL fit to publish (in a Hub file, a report link), else
    :class:`~stereoprobe.errors.InputError` naming ``what``: another scheme (``javascript:``, ``file:``,
    ``data:``), no host, blanks or control characters, or credentials (``user:password@``, ``?token=``).

    >>> check_public_url("https://huggingface.co/datasets/org/logs")
    'https://huggingface.co/datasets/org/logs'
    """
    from urllib.parse import urlsplit

    from stereoprobe.errors import InputError

    value = str(text)
    try:
        parts = urlsplit(value)
    except ValueError as exc:
        raise InputError(f"{what} {redact_text(value)!r}: not a URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InputError(f"{what} {redact_text(value)[:200]!r}: expected an http:// or https:// URL with a host")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value) or any(c in value for c in "<>\"'`\\"):
        raise InputError(f"{what} {redact_text(value)[:200]!r}: blanks, quotes or control characters in a URL")
    if parts.username or parts.password or redact_text(value) != value:
        raise InputError(f"{what} {redact_text(value)!r}: holds credentials; give a URL without them")
    return value
