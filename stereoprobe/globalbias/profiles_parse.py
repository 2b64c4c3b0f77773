"""The prompt of the GlobalBias generation probe and robust parsing of its answers (paper section 6).

Prompt: by default (``prompt="upstream"``) the reference's own ``BIAS_PROMPT`` (Appendix B), read at run time
from the pinned upstream notebook ``code/9a openai_generation_output.ipynb`` (the same text in 9a, 9b and
9c; checksum-verified, downloaded once or read from a local copy) and filled as the notebooks do:
``BIAS_PROMPT.format(list_of_names=json.dumps(names))``. ``prompt="stereoprobe"``: the project's own wording
(``datasets/globalbias/profiles_prompt.yaml``), the names as ``json.dumps(names, ensure_ascii=False)``.

Answers are read leniently, whichever prompt asked for them. Accepted: a top-level list; an object holding the list under
any key (the first list-valued key, e.g. "characters"); a single profile object; JSON inside a Markdown code
fence or surrounded by prose (the first decodable JSON value is used). Every outcome is recorded: a response
without decodable JSON is a parse failure; profiles are matched to the requested names case-insensitively;
requested names without a profile are "missing", profiles with a name not requested are "unknown".
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from stereoprobe.paths import dataset_file
from stereoprobe.upstream import UpstreamDataError, fetch, notebook_string

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


@cache
def prompt_spec() -> dict:
    """The prompt template and profile fields (``datasets/globalbias/profiles_prompt.yaml``)."""
    return yaml.safe_load(dataset_file("globalbias", "profiles_prompt.yaml").read_text(encoding="utf-8"))


PROMPTS = ("upstream", "stereoprobe")
PROMPT_SOURCE = "GlobalBias"  # key in stereoprobe/upstream_sources.yaml
PROMPT_NOTEBOOK = "code/9a openai_generation_output.ipynb"
PROMPT_VARIABLE = "BIAS_PROMPT"


@dataclass(frozen=True)
class ProfilePrompt:
    """A profile prompt: ``kind`` (one of :data:`PROMPTS`) and its ``template``."""

    kind: str
    template: str

    def render(self, names: list[str]) -> str:
        """The prompt for one batch of ``names``."""
        if self.kind == "upstream":
            return self.template.format(list_of_names=json.dumps(names))
        return self.template.replace("{names}", json.dumps(names, ensure_ascii=False))


def _notebook_path(source: str | os.PathLike[str], verify: bool) -> Path:
    local = None
    if str(source) not in ("upstream", "bundled"):
        root = Path(source)
        if (root / PROMPT_NOTEBOOK).is_file() or (root / PROMPT_SOURCE / PROMPT_NOTEBOOK).is_file():
            local = root
    return fetch(PROMPT_SOURCE, PROMPT_NOTEBOOK, local=local, verify=verify)


def profile_prompt(prompt: str = "upstream", source: str | os.PathLike[str] = "upstream",
                   verify: bool = True) -> ProfilePrompt:
    """The profile prompt ``prompt`` (see the module docstring). ``source``: the task's data source; a local
    copy of the upstream repository holding the notebook is read from there. Without the notebook offline,
    one line naming ``-T prompt=stereoprobe``."""
    if prompt == "stereoprobe":
        return ProfilePrompt("stereoprobe", prompt_spec()["prompt"])
    if prompt != "upstream":
        raise ValueError(f"unknown prompt {prompt!r}; use {' or '.join(PROMPTS)}")
    try:
        template = notebook_string(_notebook_path(source, verify), PROMPT_VARIABLE)
    except UpstreamDataError as e:
        raise UpstreamDataError(f"{e} (the default profile prompt is upstream's {PROMPT_VARIABLE}; "
                                "-T prompt=stereoprobe sends stereoprobe's own wording instead)") from None
    if template.count("{list_of_names}") != 1:
        raise UpstreamDataError(f"{PROMPT_NOTEBOOK}: {PROMPT_VARIABLE} has no single {{list_of_names}} field")
    return ProfilePrompt("upstream", template)


def build_prompt(names: list[str], prompt: ProfilePrompt | None = None) -> str:
    """The prompt for ``names``: ``prompt`` rendered (None: stereoprobe's own wording)."""
    return (prompt or ProfilePrompt("stereoprobe", prompt_spec()["prompt"])).render(names)


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
