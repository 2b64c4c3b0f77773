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
- in every URL-like value (``scheme://...``, also ``scheme:/...`` once a path normalisation dropped a slash):
  the user information (``https://user:password@host`` -> ``https://***@host``), the value of every query
  parameter whose name is not in :data:`HARMLESS_QUERY_NAMES` (``?code=...`` -> ``?code=***``; ``region``,
  ``api-version``, ``revision`` ... are kept) and a fragment that is not a plain anchor; ``user:password@host``
  without a scheme loses its user information too. This is by construction: what a URL carries besides its
  host and path is never written, whatever its shape;
- the credential after ``Bearer`` / ``Basic``;
- text shaped like a well-known provider key (``sk-...``, ``hf_...``, ``ghp_...``, ``AKIA...``, ``AIza...``),
  a JSON web token (``eyJ...``.``eyJ...``.``...``) anywhere, and a long random token (32 or more letters and
  digits mixing upper case, lower case and digits, 24 of them without a separator).

Model names and paths reach tables in their public form first (:func:`stereoprobe.model_labels.model_label`),
every text cell of a table written by :func:`stereoprobe.tables.write_table` passes :func:`redact_text`, and so
do console lines, error lines (after the path in them was normalised), report pages (:func:`redact_html`) and
``run_info.json`` (:func:`redact`).

>>> redact({"api_key": "sk-abc", "score_first_token": True, "max_tokens": 16})
{'api_key': '***', 'score_first_token': True, 'max_tokens': 16}
>>> redact_text("https://me:pw@host.example/v1?api_key=abc&x=1")
'https://***@host.example/v1?api_key=***&x=***'
>>> redact_text("https:/me:pw@host.example/v1?code=abc&region=eu#access_token=x")
'https:/***@host.example/v1?code=***&region=eu#***'
>>> redact_text("stereoprobe plan globalbias -M api_key=sk-abc")
'stereoprobe plan globalbias -M api_key=***'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from stereoprobe.harmless import HARMLESS_QUERY_NAMES

__all__ = ["HARMLESS_QUERY_NAMES", "REDACTED", "check_public_url", "is_secret_name", "redact", "redact_html",
           "redact_text"]

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


# scheme:// (or scheme:/ once a slash was dropped) and the rest of the URL, not ending in punctuation
_URL = re.compile(r"""(?i)(?<![\w.+-])(?P<scheme>[a-z][a-z0-9+.-]+:/{1,3})(?P<rest>[^\s"'<>`]*[^\s"'<>`.,;:)\]}])""")
_BARE_USERINFO = re.compile(r"""(?<![\w.%+/:-])[\w.%+-]+:[^\s/@'"<>]+@(?=[A-Za-z0-9\[])""")
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*-----.*?(?:-----END [A-Z0-9 ]*-----|\Z)", re.S)
_JWT = re.compile(r"(?<![\w-])eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*")
_LONG_RUN = re.compile(r"(?<![\w-])[A-Za-z0-9_-]{32,}(?![\w-])")
_LONG = re.compile(r"[A-Za-z0-9_-]{15}")  # as long as the shortest key shape: a key or token may be there
#: a part of every key shape of :data:`_KEY_SHAPES`
_SHAPE_PARTS = ("sk-", "_", "AKIA", "AIza", "xox", "glpat-")
#: a part of every credential-like name (:func:`is_secret_name`) and authorization scheme
_SECRET_PARTS = ("key", "token", "secret", "pass", "pwd", "auth", "bearer", "basic", "credential", "cookie", "sig",
                 "pat")
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


def _public_url(m: re.Match[str]) -> str:
    """One URL as the one writer of outside input writes it (:func:`stereoprobe.harmless.safe_url`: scheme, host,
    port and plain path segments; user information up to the last ``@``, path parameters, query values not
    known harmless and a fragment that is not a plain anchor are ``***``)."""
    from stereoprobe.harmless import safe_url

    return safe_url(m.group(0))


def _random_token(m: re.Match[str]) -> str:
    """A long run of letters and digits that reads as a random token: upper case, lower case and digits mixed,
    and a piece of 24 or more characters between separators (``Llama-3-70B-Instruct-...`` is a name, and so
    is inspect's 22-character id of a run in a log's file name)."""
    run = m.group()
    mixed = re.search(r"[a-z]", run) and re.search(r"[A-Z]", run) and re.search(r"\d", run)
    return REDACTED if mixed and max(len(p) for p in re.split(r"[-_]", run)) >= 24 else run


def redact_text(text: str) -> str:
    """``text`` with credentials replaced by :data:`REDACTED` (see the module docstring)."""
    if not text:
        return text
    if "-----BEGIN" in text:  # a PEM block (a private key), whole, up to its end line or the text's end
        text = _PEM.sub(REDACTED, text)
    # each rule runs only where the text holds what it needs (most table cells hold none: a fast path)
    if ":/" in text:
        text = _URL.sub(_public_url, text)
    if "@" in text:
        text = _BARE_USERINFO.sub(f"{REDACTED}@", text)
    low = text.lower()
    if any(part in low for part in _SECRET_PARTS):
        text = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
        text = _pairs(text)
    if "eyJ" in text:
        text = _JWT.sub(REDACTED, text)
    if _LONG.search(text):
        if any(part in text for part in _SHAPE_PARTS):
            text = _KEY_SHAPES.sub(REDACTED, text)
        text = _LONG_RUN.sub(_random_token, text)
    return text


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
    if parts.username or parts.password or "@" in parts.netloc:
        raise InputError(f"{what} {redact_text(value)!r}: holds credentials; give a URL without them")
    if parts.query or parts.fragment or "?" in value or "#" in value:  # ?code=, ?sig=: a key, whatever its name
        raise InputError(f"{what} {redact_text(value)!r}: has a query string or fragment, which may hold a key "
                         "and would be published; give the URL without it")
    if ";" in parts.path:  # a path parameter (;jsessionid=...) is a session, whatever its name
        raise InputError(f"{what} {redact_text(value)!r}: has a path parameter (;...), which may hold a session "
                         "and would be published; give the URL without it")
    if redact_text(value) != value:
        raise InputError(f"{what} {redact_text(value)!r}: holds credentials; give a URL without them")
    return value
