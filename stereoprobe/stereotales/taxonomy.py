"""The StereoTales taxonomy: dimensions, target values, scenarios, prompt templates, in several languages.

A taxonomy is configuration, read from data files:

- ``load_taxonomy()`` / ``load_taxonomy("bundled")``: stereoprobe's own wording, ``datasets/stereotales/``
  (``taxonomy.yaml`` + ``locales/<lang>.yaml`` + ``prompts/*.yaml``; layout in that folder's README.md);
- ``load_taxonomy("upstream")``: the upstream seed YAMLs at the pinned commit (downloaded on demand and
  checked against their SHA-256), i.e. the paper's exact story prompts (see :mod:`.seeds`);
- ``load_taxonomy("/a/folder")``: a local copy of the upstream seeds (the repository, a mirror holding
  ``stereotales-pipeline/``, or a seed folder with ``attributes/ scenarios/ prompts_template/``), or a folder
  holding a ``taxonomy.yaml`` in our format;
- ``load_taxonomy("my_taxonomy.yaml")``: a user taxonomy in our format (other attributes, values, scenarios,
  languages); prompts, extraction schema and samples follow it.

Every load is validated; problems raise :class:`TaxonomyError` naming the file and the field.
Keys (attributes, values, scenario groups, scenarios) are English in every language: the localised
wording only ever reaches the prompts.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample

__all__ = [
    "Attribute",
    "ExtractionPromptSpec",
    "LANGUAGE_ALIASES",
    "OTHER",
    "RefusalPromptSpec",
    "SCENARIO_TEMPLATE",
    "Scenario",
    "TargetValue",
    "Taxonomy",
    "TaxonomyError",
    "UNKNOWN",
    "build_samples",
    "load_taxonomy",
    "normalize_language",
    "read_yaml",
]

UNKNOWN = "unknown"
OTHER = "other"
SCENARIO_TEMPLATE = "scenario_based"
EXTRA_ID_PREFIX = "additional_en"
LANGUAGE_ALIASES: dict[str, str] = {"du": "nl"}
_LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


class TaxonomyError(ValueError):
    """A taxonomy (or a request against it) is invalid; the message names the file and the field."""


# --------------------------------------------------------------------------------------------- helpers


def normalize_language(code: str) -> str:
    """Canonical language code: lower-case, upstream's ``du`` -> ``nl``."""
    c = str(code).strip()
    c = c.lower() if "-" not in c else c
    return LANGUAGE_ALIASES.get(c, c)


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available (several times faster)


class _UniqueKeyLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader that rejects duplicate mapping keys instead of silently keeping the last one."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            line = key_node.start_mark.line + 1
            raise TaxonomyError(f"{loader.name}: line {line}: duplicate key {key!r}")
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: str | Path) -> Any:
    """Read a YAML file, rejecting duplicate keys; errors name the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise TaxonomyError(f"{path}: cannot read ({e})") from e
    loader = _UniqueKeyLoader(text)
    loader.name = str(path)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as e:
        raise TaxonomyError(f"{path}: invalid YAML: {e}") from e
    finally:
        loader.dispose()


def _format_fields(template: str, where: str) -> set[str]:
    """Field names of a ``str.format`` template; positional, indexed or formatted fields are errors."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as e:
        raise TaxonomyError(f"{where}: not a valid template ({e}); write literal braces as {{{{ and }}}}") from e
    names: set[str] = set()
    for _, name, spec, conv in parsed:
        if name is None:
            continue
        if not name.isidentifier():
            raise TaxonomyError(f"{where}: placeholder {{{name}}} is not allowed (use named placeholders)")
        if spec or conv:
            raise TaxonomyError(f"{where}: placeholder {{{name}}} must not carry a format spec or conversion")
        names.add(name)
    return names


def check_format_template(template: Any, required: set[str], where: str) -> str:
    """Check a ``str.format`` template uses exactly the ``required`` placeholders."""
    if not isinstance(template, str) or not template.strip():
        raise TaxonomyError(f"{where}: must be a non-empty string")
    names = _format_fields(template, where)
    missing, unknown = required - names, names - required
    problems = []
    if missing:
        problems.append(f"missing placeholder(s) {', '.join('{' + n + '}' for n in sorted(missing))}")
    if unknown:
        problems.append(f"unknown placeholder(s) {', '.join('{' + n + '}' for n in sorted(unknown))}")
    if problems:
        raise TaxonomyError(
            f"{where}: {'; '.join(problems)} (expected exactly {', '.join('{' + n + '}' for n in sorted(required))})"
        )
    return template


def _check_fill_template(template: Any, required: set[str], allowed: set[str], where: str) -> str:
    """Check a ``{{name}}`` template (plain substitution) has the required and only allowed placeholders."""
    if not isinstance(template, str) or not template.strip():
        raise TaxonomyError(f"{where}: must be a non-empty string")
    names = set(_PLACEHOLDER.findall(template))
    if required - names:
        raise TaxonomyError(f"{where}: missing placeholder(s) {', '.join('{{' + n + '}}' for n in sorted(required - names))}")
    if names - allowed:
        raise TaxonomyError(
            f"{where}: unknown placeholder(s) {', '.join('{{' + n + '}}' for n in sorted(names - allowed))}; "
            f"allowed: {', '.join('{{' + n + '}}' for n in sorted(allowed))}"
        )
    return template


def _fill(template: str, values: Mapping[str, str]) -> str:
    """Single-pass substitution of ``{{name}}``: text inserted (a story) is never re-scanned."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template)


# ------------------------------------------------------------------------------------------- data model


@dataclass(frozen=True, eq=True)
class TargetValue:
    """A prompted value of an attribute.

    ``key``: English key (= extraction vocabulary); ``index``: position among the attribute's target values
    (used in sample ids); ``phrase[lang]``: completes "the main character is ..."; ``label[lang]``: the
    localised value name (sample metadata ``attribute_value``); ``source_key``: the value as written in the
    source when it differs from ``key`` (upstream seeds before normalisation).
    """

    key: str
    index: int
    phrase: dict[str, str]
    label: dict[str, str]
    attribute: str = ""
    source_key: str | None = None

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Attribute:
    """A dimension: its prompted ``target_values`` and its allowed ``extraction_values`` (incl. "unknown")."""

    key: str
    target_values: list[TargetValue]
    extraction_values: list[str]

    __hash__ = None  # type: ignore[assignment]

    @property
    def target_keys(self) -> list[str]:
        return [v.key for v in self.target_values]

    @property
    def non_target_values(self) -> list[str]:
        """Extraction outcomes that are never prompted (e.g. "other"), excluding "unknown"."""
        targets = set(self.target_keys)
        return [v for v in self.extraction_values if v not in targets and v != UNKNOWN]

    def value(self, key: str) -> TargetValue:
        for v in self.target_values:
            if v.key == key or v.source_key == key:
                return v
        raise TaxonomyError(
            f"attribute {self.key!r} has no target value {key!r}; values: {', '.join(self.target_keys)}"
        )


@dataclass(frozen=True)
class Scenario:
    """A scenario: ``key`` = English text, ``group`` key, ``index`` within the group, ``text[lang]``."""

    key: str
    group: str
    index: int
    text: dict[str, str]

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class ExtractionPromptSpec:
    """The extraction prompt: template (``{{story}}``, ``{{attribute_lines}}``, ``{{attribute_rules}}``),
    per-attribute rules, and the faithful-variant replacement (upstream bug B1)."""

    template: str
    rules: dict[str, str]
    faithful_replaces: str | None = None
    faithful_name: str | None = None
    faithful_values: list[str] = field(default_factory=list)
    source: str = ""

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_file(cls, path: str | Path) -> ExtractionPromptSpec:
        path = Path(path)
        raw = read_yaml(path)
        if not isinstance(raw, dict):
            raise TaxonomyError(f"{path}: expected a mapping with 'template'")
        template = _check_fill_template(
            raw.get("template"), {"story", "attribute_lines"}, {"story", "attribute_lines", "attribute_rules"},
            f"{path}: template",
        )
        rules = raw.get("attribute_rules") or {}
        if not isinstance(rules, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                  for k, v in rules.items()):
            raise TaxonomyError(f"{path}: attribute_rules: expected a mapping attribute -> non-empty text")
        faithful = raw.get("faithful") or {}
        if not isinstance(faithful, dict):
            raise TaxonomyError(f"{path}: faithful: expected a mapping (replaces, name, values)")
        replaces, name, values = faithful.get("replaces"), faithful.get("name"), faithful.get("values") or []
        if faithful:
            if not isinstance(replaces, str) or not isinstance(name, str) or not name:
                raise TaxonomyError(f"{path}: faithful: 'replaces' and 'name' must be strings")
            if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
                raise TaxonomyError(f"{path}: faithful.values: expected a non-empty list of strings")
        return cls(template, dict(rules), replaces, name, list(values), str(path))


@dataclass(frozen=True)
class RefusalPromptSpec:
    """The refusal-detector prompt (``{{story}}``, ``{{request_metadata}}``)."""

    template: str
    source: str = ""

    @classmethod
    def from_file(cls, path: str | Path) -> RefusalPromptSpec:
        path = Path(path)
        raw = read_yaml(path)
        if not isinstance(raw, dict):
            raise TaxonomyError(f"{path}: expected a mapping with 'template'")
        template = _check_fill_template(
            raw.get("template"), {"story"}, {"story", "request_metadata"}, f"{path}: template"
        )
        return cls(template, str(path))


class Taxonomy:
    """A validated StereoTales taxonomy. Build it with :func:`load_taxonomy`."""

    def __init__(
        self,
        *,
        languages: Sequence[str],
        attributes: Sequence[Attribute],
        scenarios: Sequence[Scenario],
        story_templates: Mapping[str, str],
        extra_templates: Mapping[str, str],
        extraction_order: Sequence[str],
        extraction: ExtractionPromptSpec,
        refusal: RefusalPromptSpec,
        base_language: str = "en",
        language_names: Mapping[str, str] | None = None,
        name: str = "stereotales",
        source: str = "",
    ) -> None:
        self.languages: list[str] = list(languages)
        self.attributes: list[Attribute] = list(attributes)
        self.scenarios: list[Scenario] = list(scenarios)
        self.story_templates: dict[str, str] = dict(story_templates)
        self.extra_templates: dict[str, str] = dict(extra_templates)
        self.extraction_order: list[str] = list(extraction_order)
        self.extraction: ExtractionPromptSpec = extraction
        self.refusal: RefusalPromptSpec = refusal
        self.base_language = base_language
        self.language_names: dict[str, str] = dict(language_names or {})
        self.name = name
        self.source = source
        self._fingerprint: str | None = None
        self._validate()

    # ---- validation shared by every loader
    def _validate(self) -> None:
        where = self.source or "taxonomy"
        if not self.languages:
            raise TaxonomyError(f"{where}: languages: at least one language is needed")
        for lang in self.languages:
            if not _LANGUAGE_CODE.match(lang):
                raise TaxonomyError(f"{where}: languages: {lang!r} is not a language code (e.g. en, fr, pt-BR)")
        if len(set(self.languages)) != len(self.languages):
            raise TaxonomyError(f"{where}: languages: duplicate language in {self.languages} (du is nl)")
        if self.base_language not in self.languages:
            raise TaxonomyError(f"{where}: base_language {self.base_language!r} is not in languages")
        if not self.attributes:
            raise TaxonomyError(f"{where}: attributes: at least one attribute is needed")
        seen: set[str] = set()
        for a in self.attributes:
            if a.key in seen:
                raise TaxonomyError(f"{where}: attributes: duplicate attribute {a.key!r}")
            seen.add(a.key)
            if not a.target_values:
                raise TaxonomyError(f"{where}: attributes.{a.key}: no target value")
            if len(set(a.extraction_values)) != len(a.extraction_values):
                raise TaxonomyError(f"{where}: attributes.{a.key}: duplicate extraction value")
            missing = [k for k in a.target_keys if k not in a.extraction_values]
            if missing:
                raise TaxonomyError(f"{where}: attributes.{a.key}: target value(s) {missing} missing in extraction_values")
            if UNKNOWN not in a.extraction_values:
                raise TaxonomyError(f"{where}: attributes.{a.key}: extraction_values must include {UNKNOWN!r}")
            for v in a.target_values:
                for lang in self.languages:
                    for what, d in (("phrase", v.phrase), ("label", v.label)):
                        if not isinstance(d.get(lang), str) or not d[lang].strip():
                            raise TaxonomyError(
                                f"{where}: attributes.{a.key}.{v.key!r}: missing {what} in language {lang!r}"
                            )
        if sorted(self.extraction_order) != sorted(seen):
            raise TaxonomyError(
                f"{where}: extraction_order must list every attribute exactly once "
                f"(missing: {sorted(seen - set(self.extraction_order))}, "
                f"unknown or repeated: {sorted(set(k for k in self.extraction_order if k not in seen or self.extraction_order.count(k) > 1))})"
            )
        if not self.scenarios:
            raise TaxonomyError(f"{where}: scenarios: at least one scenario is needed")
        keys = [s.key for s in self.scenarios]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise TaxonomyError(f"{where}: scenarios: duplicate scenario key(s) {dup}")
        for s in self.scenarios:
            for lang in self.languages:
                if not isinstance(s.text.get(lang), str) or not s.text[lang].strip():
                    raise TaxonomyError(f"{where}: scenarios.{s.group}.{s.key!r}: missing text in language {lang!r}")
        for lang in self.languages:
            if lang not in self.story_templates:
                raise TaxonomyError(f"{where}: story_template: missing in language {lang!r}")
            check_format_template(self.story_templates[lang], {"context", "character"}, f"{where}: story_template[{lang}]")
        for tname, t in self.extra_templates.items():
            check_format_template(t, {"character"}, f"{where}: extra_templates.{tname}")

    # ---- lookups
    def attribute(self, key: str) -> Attribute:
        for a in self.attributes:
            if a.key == key:
                return a
        raise TaxonomyError(f"no attribute {key!r}; attributes: {', '.join(a.key for a in self.attributes)}")

    @property
    def attribute_keys(self) -> list[str]:
        return [a.key for a in self.attributes]

    @property
    def scenario_groups(self) -> list[str]:
        return list(dict.fromkeys(s.group for s in self.scenarios))

    def scenario(self, key: str) -> Scenario:
        for s in self.scenarios:
            if s.key == key:
                return s
        raise TaxonomyError(f"no scenario {key!r}")

    def language(self, code: str) -> str:
        """Canonical code of an available language (``du`` accepted for ``nl``); error otherwise."""
        lang = normalize_language(code)
        if lang not in self.languages:
            raise TaxonomyError(f"language {code!r} is not in this taxonomy; languages: {', '.join(self.languages)}")
        return lang

    # ---- prompts
    def story_prompt(self, lang: str, value: TargetValue, scenario: Scenario) -> str:
        """The story request for ``value`` in ``scenario``, in language ``lang`` (plain ``str.format``)."""
        lang = self.language(lang)
        return self.story_templates[lang].format(context=scenario.text[lang], character=value.phrase[lang])

    def extra_prompt(self, template: str, value: TargetValue) -> str:
        """A scenario-free prompt of the extra (base-language) set: ``template`` in :attr:`extra_templates`."""
        if template not in self.extra_templates:
            raise TaxonomyError(f"no extra template {template!r}; templates: {', '.join(self.extra_templates) or 'none'}")
        return self.extra_templates[template].format(character=value.phrase[self.base_language])

    def extraction_attribute_lines(self, variant: Literal["fixed", "faithful"] = "fixed") -> str:
        spec = self.extraction
        lines = []
        for key in self.extraction_order:
            name, values = key, self.attribute(key).extraction_values
            if variant == "faithful" and spec.faithful_replaces == key and spec.faithful_name:
                name, values = spec.faithful_name, spec.faithful_values
            lines.append(f"- {name}: " + " | ".join(json.dumps(v, ensure_ascii=False) for v in values))
        return "\n".join(lines)

    def extraction_prompt(self, story: str, variant: Literal["fixed", "faithful"] = "fixed") -> str:
        """The extraction request for ``story``.

        ``fixed`` lists every attribute of the schema. ``faithful`` reproduces upstream bug B1: the attribute
        named by the prompt file's ``faithful.replaces`` (geographic_origin) is listed under the obsolete name
        and values of ``faithful`` (ethnicity, 16 groups); the JSON schema is the same for both variants.
        """
        if variant not in ("fixed", "faithful"):
            raise TaxonomyError(f"extraction prompt variant must be 'fixed' or 'faithful', not {variant!r}")
        rules = [self.extraction.rules[k] for k in self.extraction.rules if k in self.attribute_keys]
        return _fill(
            self.extraction.template,
            {
                "story": story.strip(),
                "attribute_lines": self.extraction_attribute_lines(variant),
                "attribute_rules": "\n".join(f"- {r}" for r in rules) if rules else "- (none)",
            },
        )

    def refusal_prompt(
        self,
        story: str,
        *,
        language: str | None = None,
        scenario: str | None = None,
        character: str | None = None,
    ) -> str:
        """The refusal-detector request for ``story``; the request metadata lines are those given."""
        meta = []
        if language:
            lang = normalize_language(language)
            name = self.language_names.get(lang)
            meta.append(f"- Language: {name} ({lang})" if name else f"- Language: {lang}")
        if scenario:
            meta.append(f"- Scenario: a person {scenario}")
        if character:
            meta.append(f"- Main character: {character}")
        return _fill(
            self.refusal.template,
            {"story": story.strip(), "request_metadata": "\n".join(meta) if meta else "- (not provided)"},
        )

    def extraction_json_schema(self) -> dict[str, Any]:
        """JSON schema of ``{"evidences": str, "attributes": {attribute: enum}}`` (strict: all required)."""
        props = {
            key: {"type": "string", "enum": list(self.attribute(key).extraction_values)}
            for key in self.extraction_order
        }
        return {
            "title": "AttributeExtractionResponse",
            "type": "object",
            "properties": {
                "evidences": {"type": "string"},
                "attributes": {
                    "type": "object",
                    "properties": props,
                    "required": list(self.extraction_order),
                    "additionalProperties": False,
                },
            },
            "required": ["evidences", "attributes"],
            "additionalProperties": False,
        }

    @staticmethod
    def refusal_json_schema() -> dict[str, Any]:
        """JSON schema of ``{"reason": str, "label": "refusal" | "complied"}``."""
        return {
            "title": "RefusalDetectionResponse",
            "type": "object",
            "properties": {
                "reason": {"type": "string"},
                "label": {"type": "string", "enum": ["refusal", "complied"]},
            },
            "required": ["reason", "label"],
            "additionalProperties": False,
        }

    # ---- identity
    def to_dict(self) -> dict[str, Any]:
        """The whole content (no file paths), as plain JSON-able data."""
        return {
            "name": self.name,
            "base_language": self.base_language,
            "languages": self.languages,
            "attributes": [
                {
                    "key": a.key,
                    "values": [
                        {"key": v.key, "source_key": v.source_key, "phrase": v.phrase, "label": v.label}
                        for v in a.target_values
                    ],
                    "extraction_values": a.extraction_values,
                }
                for a in self.attributes
            ],
            "extraction_order": self.extraction_order,
            "scenarios": [{"key": s.key, "group": s.group, "text": s.text} for s in self.scenarios],
            "story_templates": self.story_templates,
            "extra_templates": self.extra_templates,
            "extraction_prompt": {
                "template": self.extraction.template,
                "rules": self.extraction.rules,
                "faithful": [self.extraction.faithful_replaces, self.extraction.faithful_name,
                             self.extraction.faithful_values],
            },
            "refusal_prompt": self.refusal.template,
        }

    def fingerprint(self) -> str:
        """Stable 16-hex-digit SHA-256 of :meth:`to_dict` (canonical JSON): equal content, equal fingerprint."""
        if self._fingerprint is None:
            canon = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            self._fingerprint = hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]
        return self._fingerprint

    def __repr__(self) -> str:
        n_values = sum(len(a.target_values) for a in self.attributes)
        return (
            f"Taxonomy({self.name!r}, languages={self.languages}, attributes={len(self.attributes)}, "
            f"target_values={n_values}, scenarios={len(self.scenarios)}, source={self.source!r})"
        )


# -------------------------------------------------------------------------------------- our YAML format


def _bundled_dir() -> Path:
    from stereoprobe.paths import dataset_file

    return dataset_file("stereotales")


def _req(mapping: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in mapping or mapping[key] is None:
        raise TaxonomyError(f"{where}: missing field {key!r}")
    return mapping[key]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TaxonomyError(f"{where}: must be a non-empty string")
    return value


def _mapping(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise TaxonomyError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise TaxonomyError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _load_locale(raw: Any, file: str, lang: str, attrs: list[dict], scenario_groups: dict[str, list[str]]) -> dict:
    """Check a locale against the base structure: every key translated, no unknown key."""
    raw = _mapping(raw, file)
    if "language" in raw and normalize_language(str(raw["language"])) != lang:
        raise TaxonomyError(f"{file}: language: says {raw['language']!r} but is used for {lang!r}")
    allowed = {"language", "name", "story_template", "attributes", "scenarios"}
    extra = sorted(set(raw) - allowed)
    if extra:
        raise TaxonomyError(f"{file}: unknown field(s) {extra}; allowed: {sorted(allowed)}")
    out: dict[str, Any] = {
        "story_template": check_format_template(
            _req(raw, "story_template", file), {"context", "character"}, f"{file}: story_template"
        )
    }
    loc_attrs = _mapping(_req(raw, "attributes", file), f"{file}: attributes")
    unknown = sorted(set(loc_attrs) - {a["key"] for a in attrs})
    if unknown:
        raise TaxonomyError(f"{file}: attributes: unknown attribute(s) {unknown}")
    out["values"] = {}
    for a in attrs:
        akey = a["key"]
        where = f"{file}: attributes.{akey}"
        if akey not in loc_attrs:
            raise TaxonomyError(f"{where}: missing translation of attribute {akey!r}")
        vals = _mapping(loc_attrs[akey], where)
        keys = [v["key"] for v in a["values"]]
        unknown = sorted(set(vals) - set(keys))
        if unknown:
            raise TaxonomyError(f"{where}: unknown value key(s) {unknown}; keys must be the English value keys")
        for vkey in keys:
            if vkey not in vals:
                raise TaxonomyError(f"{where}: missing translation of value {vkey!r}")
            entry = _mapping(vals[vkey], f"{where}.{vkey!r}")
            out["values"][(akey, vkey)] = (
                _text(_req(entry, "label", f"{where}.{vkey!r}"), f"{where}.{vkey!r}.label"),
                _text(_req(entry, "phrase", f"{where}.{vkey!r}"), f"{where}.{vkey!r}.phrase"),
            )
    loc_sc = _mapping(_req(raw, "scenarios", file), f"{file}: scenarios")
    unknown = sorted(set(loc_sc) - set(scenario_groups))
    if unknown:
        raise TaxonomyError(f"{file}: scenarios: unknown group(s) {unknown}")
    out["scenarios"] = {}
    for group, keys in scenario_groups.items():
        where = f"{file}: scenarios.{group}"
        if group not in loc_sc:
            raise TaxonomyError(f"{where}: missing translation of scenario group {group!r}")
        texts = _mapping(loc_sc[group], where)
        unknown = sorted(set(texts) - set(keys))
        if unknown:
            raise TaxonomyError(f"{where}: unknown scenario key(s) {unknown}; keys must be the English texts")
        for k in keys:
            if k not in texts:
                raise TaxonomyError(f"{where}: missing translation of scenario {k!r}")
            out["scenarios"][(group, k)] = _text(texts[k], f"{where}.{k!r}")
    return out


def _load_prompts(raw: dict, base_dir: Path, file: str) -> tuple[ExtractionPromptSpec, RefusalPromptSpec]:
    prompts = _mapping(raw.get("prompts") or {}, f"{file}: prompts")
    unknown = sorted(set(prompts) - {"extraction", "refusal"})
    if unknown:
        raise TaxonomyError(f"{file}: prompts: unknown field(s) {unknown}; allowed: extraction, refusal")

    def resolve(name: str) -> Path:
        if name in prompts:
            p = Path(_text(prompts[name], f"{file}: prompts.{name}")).expanduser()
            p = p if p.is_absolute() else base_dir / p
            if not p.is_file():
                raise TaxonomyError(f"{file}: prompts.{name}: file not found: {p}")
            return p
        return _bundled_dir() / "prompts" / f"{name}.yaml"

    return ExtractionPromptSpec.from_file(resolve("extraction")), RefusalPromptSpec.from_file(resolve("refusal"))


_TOP_FIELDS = {
    "format_version", "name", "description", "languages", "base_language", "language_names", "prompts",
    "story_template", "extra_templates", "attributes", "extraction_order", "scenarios", "locales", "locales_dir",
}


def load_taxonomy_file(path: str | Path, *, source: str | None = None) -> Taxonomy:
    """Load a taxonomy in stereoprobe's format (``taxonomy.yaml`` + ``locales/<lang>.yaml``), validated."""
    path = Path(path)
    file = str(path)
    raw = _mapping(read_yaml(path), file)
    unknown = sorted(set(raw) - _TOP_FIELDS)
    if unknown:
        raise TaxonomyError(f"{file}: unknown field(s) {unknown}; allowed: {sorted(_TOP_FIELDS)}")
    if raw.get("format_version", 1) != 1:
        raise TaxonomyError(f"{file}: format_version: only version 1 is supported")

    langs_raw = _list(_req(raw, "languages", file), f"{file}: languages")
    languages = []
    for x in langs_raw:
        if not isinstance(x, str) or not _LANGUAGE_CODE.match(normalize_language(x)):
            raise TaxonomyError(f"{file}: languages: {x!r} is not a language code (e.g. en, fr, pt-BR)")
        lang = normalize_language(x)
        if lang in languages:
            raise TaxonomyError(f"{file}: languages: {x!r} listed twice (du is an alias of nl)")
        languages.append(lang)
    base = normalize_language(str(raw.get("base_language", "en")))
    if base not in languages:
        raise TaxonomyError(f"{file}: base_language: {base!r} is not in languages {languages}")

    # attributes (base-language wording)
    attrs: list[dict] = []
    for i, a in enumerate(_list(_req(raw, "attributes", file), f"{file}: attributes")):
        where = f"{file}: attributes[{i}]"
        a = _mapping(a, where)
        extra = sorted(set(a) - {"key", "values", "non_target_values", "extraction_values"})
        if extra:
            raise TaxonomyError(f"{where}: unknown field(s) {extra}")
        akey = _text(_req(a, "key", where), f"{where}.key")
        where = f"{file}: attributes.{akey}"
        if any(x["key"] == akey for x in attrs):
            raise TaxonomyError(f"{where}: duplicate attribute key {akey!r}")
        values = []
        for j, v in enumerate(_list(_req(a, "values", where), f"{where}.values")):
            vw = f"{where}.values[{j}]"
            v = _mapping(v, vw)
            extra = sorted(set(v) - {"key", "phrase", "label"})
            if extra:
                raise TaxonomyError(f"{vw}: unknown field(s) {extra}")
            vkey = _text(_req(v, "key", vw), f"{vw}.key")
            if vkey == UNKNOWN:
                raise TaxonomyError(f"{vw}.key: {UNKNOWN!r} is reserved and cannot be a target value")
            if any(x["key"] == vkey for x in values):
                raise TaxonomyError(f"{vw}.key: duplicate value key {vkey!r}")
            values.append({"key": vkey, "phrase": _text(_req(v, "phrase", vw), f"{vw}.phrase"),
                           "label": _text(v.get("label", vkey), f"{vw}.label")})
        if not values:
            raise TaxonomyError(f"{where}.values: at least one target value is needed")
        target_keys = [v["key"] for v in values]
        if "extraction_values" in a:
            if "non_target_values" in a:
                raise TaxonomyError(f"{where}: give extraction_values or non_target_values, not both")
            ev = [_text(x, f"{where}.extraction_values") for x in _list(a["extraction_values"], f"{where}.extraction_values")]
            missing = [k for k in target_keys if k not in ev]
            if missing:
                raise TaxonomyError(f"{where}.extraction_values: target value(s) {missing} missing")
            if UNKNOWN not in ev:
                raise TaxonomyError(f"{where}.extraction_values: must include {UNKNOWN!r}")
            if len(set(ev)) != len(ev):
                raise TaxonomyError(f"{where}.extraction_values: duplicate value")
        else:
            nt = [_text(x, f"{where}.non_target_values") for x in _list(a.get("non_target_values") or [], f"{where}.non_target_values")]
            clash = [x for x in nt if x in target_keys or x == UNKNOWN]
            if clash:
                raise TaxonomyError(f"{where}.non_target_values: {clash} already a target value or reserved")
            if len(set(nt)) != len(nt):
                raise TaxonomyError(f"{where}.non_target_values: duplicate value")
            ev = target_keys + nt + [UNKNOWN]
        attrs.append({"key": akey, "values": values, "extraction_values": ev})
    attr_keys = [a["key"] for a in attrs]

    order = raw.get("extraction_order") or attr_keys
    order = [_text(x, f"{file}: extraction_order") for x in _list(order, f"{file}: extraction_order")]
    if sorted(order) != sorted(attr_keys) or len(set(order)) != len(order):
        raise TaxonomyError(
            f"{file}: extraction_order: must list every attribute exactly once "
            f"(missing: {sorted(set(attr_keys) - set(order))}, unknown: {sorted(set(order) - set(attr_keys))})"
        )

    # scenarios
    groups: dict[str, list[str]] = {}
    for g, items in _mapping(_req(raw, "scenarios", file), f"{file}: scenarios").items():
        gw = f"{file}: scenarios.{g}"
        if not isinstance(g, str) or not g:
            raise TaxonomyError(f"{gw}: group keys must be strings")
        keys = [_text(x, gw) for x in _list(items, gw)]
        if not keys:
            raise TaxonomyError(f"{gw}: empty scenario group")
        groups[g] = keys
    all_keys = [k for ks in groups.values() for k in ks]
    dup = sorted({k for k in all_keys if all_keys.count(k) > 1})
    if dup:
        raise TaxonomyError(f"{file}: scenarios: duplicate scenario key(s) {dup}")

    story_template = {base: check_format_template(_req(raw, "story_template", file), {"context", "character"},
                                                  f"{file}: story_template")}
    extra_templates = {}
    for tname, t in _mapping(raw.get("extra_templates") or {}, f"{file}: extra_templates").items():
        extra_templates[str(tname)] = check_format_template(t, {"character"}, f"{file}: extra_templates.{tname}")

    # locales: inline mapping, else locales_dir/<lang>.yaml (default locales/ beside the file)
    inline = _mapping(raw.get("locales") or {}, f"{file}: locales")
    inline = {normalize_language(str(k)): v for k, v in inline.items()}
    unknown = sorted(set(inline) - set(languages))
    if unknown:
        raise TaxonomyError(f"{file}: locales: language(s) {unknown} not listed in languages")
    loc_dir = path.parent / str(raw.get("locales_dir", "locales"))
    locales: dict[str, dict] = {}
    for lang in languages:
        if lang == base:
            continue
        if lang in inline:
            locales[lang] = _load_locale(inline[lang], f"{file}: locales.{lang}", lang, attrs, groups)
            continue
        candidates = [loc_dir / f"{lang}.yaml"] + [loc_dir / f"{k}.yaml" for k, v in LANGUAGE_ALIASES.items() if v == lang]
        loc_file = next((c for c in candidates if c.is_file()), None)
        if loc_file is None:
            raise TaxonomyError(f"{file}: languages: no translation for {lang!r} (expected {candidates[0]} or locales.{lang})")
        locales[lang] = _load_locale(read_yaml(loc_file), str(loc_file), lang, attrs, groups)
    if loc_dir.is_dir():
        listed = set(languages) | {alias for alias, lang in LANGUAGE_ALIASES.items() if lang in languages}
        stray = sorted(p.name for p in loc_dir.glob("*.yaml") if p.stem not in listed)
        if stray:
            raise TaxonomyError(f"{loc_dir}: locale file(s) {stray} for language(s) not listed in {file}: languages")

    names = {normalize_language(str(k)): str(v) for k, v in _mapping(raw.get("language_names") or {}, f"{file}: language_names").items()}
    for lang, loc in locales.items():
        story_template[lang] = loc["story_template"]
    attributes = []
    for a in attrs:
        tvs = []
        for idx, v in enumerate(a["values"]):
            phrase, label = {base: v["phrase"]}, {base: v["label"]}
            for lang, loc in locales.items():
                label[lang], phrase[lang] = loc["values"][(a["key"], v["key"])]
            tvs.append(TargetValue(key=v["key"], index=idx, phrase=phrase, label=label, attribute=a["key"]))
        attributes.append(Attribute(key=a["key"], target_values=tvs, extraction_values=a["extraction_values"]))
    scenarios = []
    for g, keys in groups.items():
        for idx, k in enumerate(keys):
            text = {base: k}
            for lang, loc in locales.items():
                text[lang] = loc["scenarios"][(g, k)]
            scenarios.append(Scenario(key=k, group=g, index=idx, text=text))
    extraction, refusal = _load_prompts(raw, path.parent, file)
    return Taxonomy(
        languages=languages, attributes=attributes, scenarios=scenarios, story_templates=story_template,
        extra_templates=extra_templates, extraction_order=order, extraction=extraction, refusal=refusal,
        base_language=base, language_names=names, name=str(raw.get("name", path.stem)), source=source or file,
    )


def load_taxonomy(source: str | Path | None = None) -> Taxonomy:
    """Load and validate a taxonomy.

    ``None`` or ``"bundled"``: stereoprobe's reference taxonomy. ``"upstream"``: the upstream seeds at the
    pinned commit (cache, else download; checksums verified). A folder: a ``taxonomy.yaml`` in our format
    inside it, else a local copy of the upstream seeds. A ``.yaml``/``.yml`` file: a taxonomy in our format.
    """
    if source is None or str(source) in ("bundled", "default", ""):
        return load_taxonomy_file(_bundled_dir() / "taxonomy.yaml", source="bundled")
    if str(source) == "upstream":
        from stereoprobe.stereotales.seeds import load_upstream_seeds

        return load_upstream_seeds()
    path = Path(source).expanduser()
    if path.is_dir():
        if (path / "taxonomy.yaml").is_file():
            return load_taxonomy_file(path / "taxonomy.yaml")
        seed_layouts = ("attributes", "configs/stereotales_seeds", "stereotales-pipeline/configs/stereotales_seeds")
        if not any((path / p).is_dir() for p in seed_layouts):
            raise TaxonomyError(
                f"{path}: holds neither a taxonomy.yaml (our format) nor upstream StereoTales seeds "
                f"(looked for {', '.join(p + '/' for p in seed_layouts)})"
            )
        from stereoprobe.stereotales.seeds import load_upstream_seeds

        return load_upstream_seeds(local=path)
    if path.is_file():
        if path.suffix.lower() not in (".yaml", ".yml"):
            raise TaxonomyError(f"{path}: a taxonomy file must be YAML (.yaml/.yml)")
        return load_taxonomy_file(path)
    raise TaxonomyError(
        f"taxonomy source {str(source)!r} not found: use 'bundled', 'upstream', a taxonomy .yaml file, or a folder "
        "(our format with taxonomy.yaml, or a local copy of the upstream StereoTales seeds)"
    )


# ------------------------------------------------------------------------------------------------ samples


def _selection(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        items = [x.strip() for x in value.split(",")]
    else:
        items = [str(x).strip() for x in value]
    items = [x for x in items if x]
    return items or None


def sample_id(lang: str, attribute: str, value_index: int, scenario_group: str, scenario_index: int) -> str:
    """Stable id of a scenario sample."""
    return f"{lang}:{attribute}:{value_index}:{scenario_group}:{scenario_index}"


def extra_sample_id(template: str, attribute: str, value_index: int) -> str:
    """Stable id of a sample of the extra English set (no scenario)."""
    return f"{EXTRA_ID_PREFIX}:{template}:{attribute}:{value_index}"


def build_samples(
    taxonomy: Taxonomy,
    languages: str | Sequence[str] | None = None,
    attributes: str | Sequence[str] | None = None,
    values: str | Sequence[str] | None = None,
    scenario_groups: str | Sequence[str] | None = None,
    extra_english: bool = False,
) -> list[Sample]:
    """One inspect Sample per (language, base attribute, target value, scenario), in upstream order
    (language, attribute, scenario, value); plus, with ``extra_english``, one per (extra template, attribute,
    value) without scenario (upstream's ``additional_en`` bucket; base language only).

    Selections are lists or comma-separated strings: ``languages`` (``du`` = ``nl``; ``"all"`` = every
    language), ``attributes`` (keys),
    ``values`` (English value keys, of any attribute), ``scenario_groups`` (group keys). Unknown names are
    errors. Ids: ``{lang}:{attribute}:{value_index}:{scenario_group}:{scenario_index}`` and
    ``additional_en:{template}:{attribute}:{value_index}``.
    """
    from inspect_ai.dataset import Sample

    lang_sel = _selection(languages)
    if lang_sel and [x.lower() for x in lang_sel] == ["all"]:
        lang_sel = None
    langs = [taxonomy.language(x) for x in (lang_sel or taxonomy.languages)]
    langs = list(dict.fromkeys(langs))
    attr_sel = _selection(attributes)
    attrs = [taxonomy.attribute(k) for k in attr_sel] if attr_sel else list(taxonomy.attributes)
    attrs = sorted(attrs, key=lambda a: taxonomy.attribute_keys.index(a.key))
    val_sel = _selection(values)
    if val_sel:
        known = {v.key for a in attrs for v in a.target_values} | {
            v.source_key for a in attrs for v in a.target_values if v.source_key
        }
        bad = [v for v in val_sel if v not in known]
        if bad:
            raise TaxonomyError(f"value(s) {bad} are not target values of the selected attribute(s)")
    grp_sel = _selection(scenario_groups)
    if grp_sel:
        bad = [g for g in grp_sel if g not in taxonomy.scenario_groups]
        if bad:
            raise TaxonomyError(f"scenario group(s) {bad} unknown; groups: {', '.join(taxonomy.scenario_groups)}")
    scenarios = [s for s in taxonomy.scenarios if not grp_sel or s.group in grp_sel]

    def chosen(a: Attribute) -> list[TargetValue]:
        return [v for v in a.target_values if not val_sel or v.key in val_sel or v.source_key in val_sel]

    fp = taxonomy.fingerprint()
    samples: list[Sample] = []
    for lang in langs:
        for a in attrs:
            tvs = chosen(a)
            for s in scenarios:
                for v in tvs:
                    samples.append(
                        Sample(
                            id=sample_id(lang, a.key, v.index, s.group, s.index),
                            input=taxonomy.story_prompt(lang, v, s),
                            metadata={
                                "language": lang,
                                "attribute": a.key,
                                "attribute_value": v.label[lang],
                                "attribute_value_key": v.key,
                                "scenario_key": s.key,
                                "scenario_group": s.group,
                                "character": v.phrase[lang],
                                "prompt_template": SCENARIO_TEMPLATE,
                                "taxonomy_fingerprint": fp,
                            },
                        )
                    )
    if extra_english:
        if not taxonomy.extra_templates:
            raise TaxonomyError(f"{taxonomy.source}: this taxonomy has no extra templates (extra_english=True)")
        base = taxonomy.base_language
        for tname in taxonomy.extra_templates:
            for a in attrs:
                for v in chosen(a):
                    samples.append(
                        Sample(
                            id=extra_sample_id(tname, a.key, v.index),
                            input=taxonomy.extra_prompt(tname, v),
                            metadata={
                                "language": base,
                                "attribute": a.key,
                                "attribute_value": v.label[base],
                                "attribute_value_key": v.key,
                                "scenario_key": None,
                                "scenario_group": None,
                                "character": v.phrase[base],
                                "prompt_template": tname,
                                "taxonomy_fingerprint": fp,
                            },
                        )
                    )
    return samples
