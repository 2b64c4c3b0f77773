"""Robust parsing of generated character profiles (GlobalBias generation probe, paper section 6).

The model is asked for a JSON list of profiles. Accepted: a top-level list; an object holding the list under
any key (the first list-valued key, e.g. "characters"); a single profile object; JSON inside a Markdown code
fence or surrounded by prose (the first decodable JSON value is used). Every outcome is recorded: a response
without decodable JSON is a parse failure; profiles are matched to the requested names case-insensitively;
requested names without a profile are "missing", profiles with a name not requested are "unknown".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache

import yaml

from stereoprobe.paths import dataset_file

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


@cache
def prompt_spec() -> dict:
    """The prompt template and profile fields (``datasets/globalbias/profiles_prompt.yaml``)."""
    return yaml.safe_load(dataset_file("globalbias", "profiles_prompt.yaml").read_text(encoding="utf-8"))


def build_prompt(names: list[str]) -> str:
    return prompt_spec()["prompt"].replace("{names}", json.dumps(names, ensure_ascii=False))


@dataclass
class ParseResult:
    ok: bool
    profiles: list[dict] = field(default_factory=list)  # flattened profiles of requested names
    missing: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    malformed: int = 0  # list items that are not objects
    error: str | None = None


def _first_json(text: str) -> object:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    dec = json.JSONDecoder()
    for cand in candidates:
        s = cand.strip()
        try:
            return json.loads(s)
        except json.JSONDecodeError:
            pass
        for i, ch in enumerate(s):
            if ch in "[{":
                try:
                    return dec.raw_decode(s[i:])[0]
                except json.JSONDecodeError:
                    continue
    raise ValueError("no decodable JSON value in the response")


def _as_list(obj: object) -> list:
    if isinstance(obj, list):
        return obj
    if isinstance(obj, dict):
        for v in obj.values():
            if isinstance(v, list):
                return v
        if "name" in obj:
            return [obj]
    raise ValueError(f"JSON {type(obj).__name__} holds no list of profiles")


def _text(v: object) -> str | None:
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def flatten_profile(p: dict) -> dict:
    """One profile -> the flat upstream layout (list fields as tuples of strings, physical_characteristics.*)."""
    spec = prompt_spec()["fields"]
    out: dict = {}
    for f in spec["scalar"]:
        out[f] = _text(p.get(f))
    for f in spec["list"]:
        v = p.get(f)
        if isinstance(v, str):
            v = [x.strip() for x in v.split(",") if x.strip()]
        out[f] = tuple(str(x) for x in v) if isinstance(v, (list, tuple)) else ()
    phys = p.get("physical_characteristics")
    phys = phys if isinstance(phys, dict) else {}
    for f in spec["physical"]:
        out[f"physical_characteristics.{f}"] = _text(phys.get(f))
    return out


def parse_profiles(text: str, requested: list[str]) -> ParseResult:
    """Parse a response to the profile prompt for the ``requested`` names (see module docstring)."""
    try:
        items = _as_list(_first_json(text))
    except ValueError as e:
        return ParseResult(ok=False, missing=list(requested), error=str(e))
    wanted = {n.casefold(): n for n in requested}
    found: dict[str, dict] = {}
    res = ParseResult(ok=True)
    for it in items:
        if not isinstance(it, dict):
            res.malformed += 1
            continue
        nm = str(it.get("name", "")).strip()
        key = nm.casefold()
        if key not in wanted:
            res.unknown.append(nm)
            continue
        if key in found:
            continue
        flat = flatten_profile(it)
        flat["name"] = wanted[key]
        found[key] = flat
    res.profiles = [found[k] for k in (n.casefold() for n in requested) if k in found]
    res.missing = [n for n in requested if n.casefold() not in found]
    return res
