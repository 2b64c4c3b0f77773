"""Robust reading of extractor and refusal-judge answers.

Models without structured output wrap JSON in code fences, add prose around it, change the case of keys
or values, or answer ``"north america"`` for ``"north america (e.g. United States, Canada, etc)"``. These
functions accept such answers when the intended value is unambiguous and report everything else as a
parse error (no JSON object) or an off-schema answer (JSON, but a missing attribute or a value outside the
allowed list). Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ParseError",
    "ExtractionParse",
    "extract_json_object",
    "normalise_key",
    "match_allowed_value",
    "parse_extraction",
    "parse_refusal",
]

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_SPACES = re.compile(r"\s+")
_PAREN_TAIL = re.compile(r"\s*\(.*\)\s*$")


class ParseError(ValueError):
    """The answer holds no JSON object."""


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``.

    Tries, in order: the whole text; the content of each Markdown code fence; every ``{`` position with
    ``json.JSONDecoder.raw_decode`` (so prose before and trailing text after the object are ignored).
    Control characters inside strings are accepted (``strict=False``, as flare's ``json.loads(...,
    strict=False)``): a raw newline inside ``"reason"`` parses.

    Raises
    ------
    ParseError
        When no JSON object can be decoded.
    """
    if not text or not text.strip():
        raise ParseError("empty answer")
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            obj = json.loads(candidate, strict=False)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    snippet = text.strip().replace("\n", " ")[:80]
    raise ParseError(f"no JSON object found in the answer (starts with {snippet!r})")


def normalise_key(text: str) -> str:
    """Case-, space- and separator-insensitive form used to compare keys and values.

    ``" Sexual-Orientation "`` → ``"sexual_orientation"``; ``"Young  Adult (18-29)"`` → ``"young adult (18-29)"``.
    """
    return _SPACES.sub(" ", str(text).strip().strip("\"'`.;").strip()).casefold()


def _attr_form(text: str) -> str:
    return re.sub(r"[\s\-]+", "_", normalise_key(text))


def match_allowed_value(value: Any, allowed: Sequence[str]) -> str | None:
    """The allowed value that ``value`` denotes, or None.

    Matches exactly after :func:`normalise_key`; otherwise, when the answer and the allowed value agree
    once a trailing parenthesis is removed from both (``"north america"`` vs
    ``"north america (e.g. United States, Canada, etc)"``, ``"trades and manual labor (e.g. construction)"``
    vs ``"trades and manual labor"``) and exactly one allowed value matches that way.
    """
    if not isinstance(value, str):
        return None
    norm = normalise_key(value)
    for option in allowed:
        if normalise_key(option) == norm:
            return option
    head = _PAREN_TAIL.sub("", norm)
    if not head:
        return None
    hits = [option for option in allowed if _PAREN_TAIL.sub("", normalise_key(option)) == head]
    return hits[0] if len(hits) == 1 else None


@dataclass
class ExtractionParse:
    """Outcome of reading one extractor answer."""

    status: str  # "ok" | "parse_error" | "off_schema"
    values: dict[str, str] | None = None
    error: str | None = None
    evidences: str | None = None
    partial: dict[str, str] = field(default_factory=dict)


def parse_extraction(text: str, allowed: Mapping[str, Sequence[str]]) -> ExtractionParse:
    """Read ``{"evidences": ..., "attributes": {attr: value}}`` (or a flat ``{attr: value}``) against ``allowed``.

    Keys match :func:`normalise_key`-insensitively (``Sexual Orientation`` = ``sexual_orientation``); values
    through :func:`match_allowed_value`. Status ``"ok"`` only when every attribute of ``allowed`` has an
    allowed value; otherwise ``"off_schema"`` with the offending attributes in ``error`` (the valid ones
    are kept in ``partial`` for inspection, not used as votes — upstream drops an extractor whose answer
    fails schema validation). No JSON object at all gives ``"parse_error"``.
    """
    try:
        obj = extract_json_object(text)
    except ParseError as ex:
        return ExtractionParse(status="parse_error", error=str(ex))
    lowered = {_attr_form(k): v for k, v in obj.items()}
    evidences = lowered.get("evidences", lowered.get("evidence"))
    block = lowered.get("attributes", obj)
    if not isinstance(block, Mapping):
        return ExtractionParse(status="off_schema", error="'attributes' is not a JSON object")
    answers = {_attr_form(k): v for k, v in block.items()}
    values: dict[str, str] = {}
    problems: list[str] = []
    for attr, options in allowed.items():
        if _attr_form(attr) not in answers:
            problems.append(f"{attr}: missing")
            continue
        raw = answers[_attr_form(attr)]
        matched = match_allowed_value(raw, options)
        if matched is None:
            problems.append(f"{attr}: {raw!r} is not an allowed value")
        else:
            values[attr] = matched
    ev = evidences if isinstance(evidences, str) else (json.dumps(evidences) if evidences is not None else None)
    if problems:
        return ExtractionParse(status="off_schema", error="; ".join(problems), evidences=ev, partial=values)
    return ExtractionParse(status="ok", values=values, evidences=ev, partial=values)


def parse_refusal(text: str) -> tuple[str | None, str, str | None]:
    """Read ``{"reason": ..., "label": "refusal" | "complied"}``.

    Returns ``(label, reason, error)``: ``label`` is ``"refusal"``, ``"complied"`` or None (with ``error``
    saying why). Labels are matched case-insensitively by stem (``"Refused"`` → refusal, ``"COMPLIES"`` →
    complied).
    """
    try:
        obj = extract_json_object(text)
    except ParseError as ex:
        return None, "", str(ex)
    lowered = {_attr_form(k): v for k, v in obj.items()}
    reason = lowered.get("reason", "")
    reason = reason if isinstance(reason, str) else json.dumps(reason)
    label = lowered.get("label")
    if not isinstance(label, str):
        return None, reason, "no 'label' field"
    norm = normalise_key(label)
    if norm.startswith("refus"):
        return "refusal", reason, None
    if norm.startswith("compl"):
        return "complied", reason, None
    return None, reason, f"label {label!r} is neither 'refusal' nor 'complied'"
