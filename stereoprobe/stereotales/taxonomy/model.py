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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from stereoprobe.stereotales.contract import UNKNOWN, normalize_language
from stereoprobe.stereotales.taxonomy.files import TaxonomyError, check_format_template, fill
from stereoprobe.stereotales.taxonomy.prompts import ExtractionPromptSpec, RefusalPromptSpec

LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


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
            if not LANGUAGE_CODE.match(lang):
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
        from stereoprobe.params import did_you_mean

        keys = [a.key for a in self.attributes]
        raise TaxonomyError(f"no attribute {key!r}{did_you_mean(key, keys)}; attributes: {', '.join(keys)}")

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
            from stereoprobe.params import did_you_mean

            raise TaxonomyError(f"language {code!r} is not in this taxonomy{did_you_mean(code, self.languages)}; "
                                f"languages: {', '.join(self.languages)}")
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

        ``fixed`` lists every attribute of the schema. ``faithful`` reproduces the published prompt (Giskard-AI/flare,
        ``ATTR_EXTRACTION_PROMPT_TEMPLATE``), whose text is out of step with its schema: the attribute
        named by the prompt file's ``faithful.replaces`` (geographic_origin) is listed under the obsolete name
        and values of ``faithful`` (ethnicity, 16 groups); the JSON schema is the same for both variants.
        """
        if variant not in ("fixed", "faithful"):
            raise TaxonomyError(f"extraction prompt variant must be 'fixed' or 'faithful', not {variant!r}")
        rules = [self.extraction.rules[k] for k in self.extraction.rules if k in self.attribute_keys]
        return fill(
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
        character_form: Literal["value_key", "phrase"] = "phrase",
    ) -> str:
        """The refusal-detector request for ``story``; the request metadata lines are those given.

        ``character_form`` says what ``character`` holds: ``"value_key"`` (the prompted English value key,
        written ``- Socio-demographic attribute: <key>`` as upstream's ``REFUSAL_JUDGE_PROMPT_TEMPLATE`` in
        Giskard-AI/flare does) or ``"phrase"`` (the rendered character phrase of the story prompt, written
        ``- Main character: <phrase>``).
        """
        if character_form not in ("value_key", "phrase"):
            raise TaxonomyError(f"character_form must be 'value_key' or 'phrase', not {character_form!r}")
        meta = []
        if language:
            lang = normalize_language(language)
            name = self.language_names.get(lang)
            meta.append(f"- Language: {name} ({lang})" if name else f"- Language: {lang}")
        if scenario:
            meta.append(f"- Scenario: a person {scenario}")
        if character:
            label = "Socio-demographic attribute" if character_form == "value_key" else "Main character"
            meta.append(f"- {label}: {character}")
        return fill(
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

