"""The extraction and refusal-detector prompts of a taxonomy (``datasets/stereotales/prompts/*.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from stereoprobe.stereotales.taxonomy.files import TaxonomyError, check_fill_template, read_yaml


@dataclass(frozen=True)
class ExtractionPromptSpec:
    """The extraction prompt: template (``{{story}}``, ``{{attribute_lines}}``, ``{{attribute_rules}}``),
    per-attribute rules, and the faithful-variant replacement (the published prompt of Giskard-AI/flare lists
    an obsolete ``ethnicity`` field in place of ``geographic_origin``)."""

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
        template = check_fill_template(
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
        template = check_fill_template(
            raw.get("template"), {"story"}, {"story", "request_metadata"}, f"{path}: template"
        )
        return cls(template, str(path))
