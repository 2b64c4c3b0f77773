"""flare's response formats, built from its ``schema.py`` with ``ast`` (never imported or run).

flare asks its refusal detector and its extractors for structured output by passing pydantic models to LiteLLM
(``response_format=RefusalDetectionResponse`` / ``AttributeExtractionResponse``, ``src/flare/scorer/
attribute_extraction/scorer.py`` of Giskard-AI/flare; the models are in ``.../attribute_extraction/schema.py``).
LiteLLM's ``type_to_response_format_param`` turns a model into OpenAI's strict structured-output format::

    {"type": "json_schema", "json_schema": {"schema": <strict schema>, "name": <class name>, "strict": true}}

where the strict schema is ``model_json_schema()`` passed through the OpenAI SDK's strict transform
(``openai.lib._pydantic.to_strict_json_schema``). This module rebuilds that value from the pinned file:

1. ``model_json_schema()`` of a model of the shapes flare uses: fields ``str``, ``Literal[...]`` of strings, or
   another model of the file, each optionally ``= Field(description="...")``; per field pydantic's keys
   (``description``, ``enum``, ``title`` = the name title-cased with ``_`` as spaces, ``type``), a model field as
   ``{"$ref": "#/$defs/<Model>", "description": ...}`` with the model under the root's ``$defs``; per model
   ``properties`` in definition order, ``required`` (every field: none has a default), ``title`` (the class
   name), ``type: object``; keys in pydantic's sorted order;
2. the strict transform: every object gets ``additionalProperties: false`` and ``required`` = all its
   properties; a ``$ref`` with sibling keys is inlined (the referenced schema's keys after the siblings), the
   root's ``$defs`` staying as they are.

Anything else in a model read (a default, another type, another ``Field`` argument) is one error line.
:class:`StrictJSONSchema` carries the result through inspect's ``ResponseSchema``: inspect's ``JSONSchema`` has
no ``title`` and no ``$defs``, which this subclass adds, so a provider that dumps the schema sends them.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai.model import ResponseSchema
from inspect_ai.util import JSONSchema
from pydantic import ConfigDict, Field

from stereoprobe import upstream
from stereoprobe.stereotales.extraction.flare_source import literal_values, parse

SOURCE_KEY = "flare"
SCHEMA_PATH = "src/flare/scorer/attribute_extraction/schema.py"
REFUSAL_MODEL = "RefusalDetectionResponse"
EXTRACTION_MODEL = "AttributeExtractionResponse"
ATTRIBUTES_MODEL = "DemographicAttributes"
OPTION_HINT = "or use stereoprobe's own wording of the refusal and extraction requests with -T role_prompts=bundled"


class StrictJSONSchema(JSONSchema):
    """inspect's :class:`~inspect_ai.util.JSONSchema` with the two keywords of a pydantic schema it has no field
    for: ``title`` and ``$defs`` (dumped under that name); nested schemas are of this class too."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    title: str | None = Field(default=None)
    defs: dict[str, StrictJSONSchema] | None = Field(default=None, alias="$defs")
    items: StrictJSONSchema | None = Field(default=None)
    properties: dict[str, StrictJSONSchema] | None = Field(default=None)
    additionalProperties: StrictJSONSchema | bool | None = Field(default=None)
    anyOf: list[StrictJSONSchema] | None = Field(default=None)


@dataclass(frozen=True)
class ResponseFormat:
    """One structured-output request: ``name`` and the strict ``schema`` (plain JSON data), as LiteLLM sends
    them in ``response_format.json_schema``; ``strict`` and ``description`` as inspect's ResponseSchema takes
    them (``description`` None: LiteLLM sends none)."""

    name: str
    schema: dict[str, Any]
    strict: bool | None = True
    description: str | None = None

    def response_schema(self) -> ResponseSchema:
        """inspect's ``ResponseSchema`` of this format; a keyword inspect could not carry is an error here,
        never a silent drop."""
        carried = StrictJSONSchema.model_validate(copy.deepcopy(self.schema))
        if carried.model_dump(exclude_none=True) != self.schema:
            raise upstream.UpstreamDataError(f"response format {self.name}: a keyword of its schema cannot be "
                                             "sent through inspect's ResponseSchema")
        return ResponseSchema(name=self.name, json_schema=carried, description=self.description,
                              strict=self.strict)


# ------------------------------------------------------------------------------ 1. model_json_schema()
def _title(name: str) -> str:
    """pydantic's default title of a field: ``gender_alignment`` -> ``Gender Alignment``."""
    return name.title().replace("_", " ").strip()


def _description(value: ast.expr | None, where: str) -> str | None:
    """The ``description`` of ``= Field(description="...")``; None without a value; any other value an error."""
    if value is None:
        return None
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "Field"
            and not value.args and [k.arg for k in value.keywords] == ["description"]
            and isinstance(value.keywords[0].value, ast.Constant) and isinstance(value.keywords[0].value.value, str)):
        return value.keywords[0].value.value
    raise upstream.UpstreamDataError(f"{where}: the value is not Field(description=\"...\"); cannot read the schema")


def _field_schema(node: ast.AnnAssign, models: dict[str, ast.ClassDef],
                  where: str) -> tuple[dict[str, Any], str | None]:
    """(pydantic's schema of one field, the model it refers to or None)."""
    name = node.target.id  # type: ignore[union-attr]
    annotation, ref = node.annotation, None
    values = literal_values(annotation)
    if values is not None and len(values) > 1 and all(isinstance(v, str) for v in values):
        entry: dict[str, Any] = {"enum": values, "title": _title(name), "type": "string"}
    elif isinstance(annotation, ast.Name) and annotation.id == "str":
        entry = {"title": _title(name), "type": "string"}
    elif isinstance(annotation, ast.Name) and annotation.id in models:
        ref = annotation.id
        entry = {"$ref": f"#/$defs/{ref}"}
    else:
        raise upstream.UpstreamDataError(f"{where}: type {ast.unparse(annotation)} is not str, a Literal of "
                                         "strings or a model of the file; cannot read the schema")
    description = _description(node.value, where)
    if description is not None:
        entry["description"] = description
    return dict(sorted(entry.items())), ref


def _model_schema(path: Path, models: dict[str, ast.ClassDef], name: str, defs: dict[str, Any]) -> dict[str, Any]:
    """pydantic's schema of model ``name`` (its referenced models added to ``defs``, depth first)."""
    cls = models[name]
    properties: dict[str, Any] = {}
    for node in cls.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        where = f"{path}: {name} line {node.lineno}"
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            raise upstream.UpstreamDataError(f"{where}: not an annotated field; cannot read the schema")
        entry, ref = _field_schema(node, models, where)
        if ref is not None and ref not in defs:
            if ref == name:
                raise upstream.UpstreamDataError(f"{where}: a model refers to itself; cannot read the schema")
            defs[ref] = _model_schema(path, models, ref, defs)
        properties[node.target.id] = entry
    return {"properties": properties, "required": list(properties), "title": name, "type": "object"}


def model_json_schema(path: Path, name: str) -> dict[str, Any]:
    """``<name>.model_json_schema()`` of the pydantic model ``name`` in ``path``, read with ``ast``."""
    tree = parse(path)
    models = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)
              and [getattr(b, "id", None) for b in n.bases] == ["BaseModel"]}
    if name not in models:
        raise upstream.UpstreamDataError(f"{path}: no pydantic model {name} (a class deriving from BaseModel alone)")
    defs: dict[str, Any] = {}
    schema = _model_schema(path, models, name, defs)
    return {"$defs": dict(sorted(defs.items())), **schema} if defs else schema


# ------------------------------------------------------------------------------------- 2. strict form
def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The strict form of a pydantic schema (see the module docstring, step 2); ``schema`` is not changed."""
    root = copy.deepcopy(schema)
    return _strict(root, root)


def _strict(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    for sub in (node.get("$defs") or {}).values():
        _strict(sub, root)
    if node.get("type") == "object" and "additionalProperties" not in node:
        node["additionalProperties"] = False
    if isinstance(node.get("properties"), dict):
        node["required"] = list(node["properties"])
        node["properties"] = {k: _strict(v, root) for k, v in node["properties"].items()}
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1:
        target: Any = root
        for key in ref.removeprefix("#/").split("/"):
            target = target[key]
        node.update({**target, **node})
        node.pop("$ref")
        return _strict(node, root)
    return node


# ---------------------------------------------------------------------------------- the pinned formats
def response_format(path: Path, model: str) -> ResponseFormat:
    """The format LiteLLM sends for ``model`` of the schema file ``path``."""
    return ResponseFormat(name=model, schema=strict_schema(model_json_schema(path, model)), strict=True)


@dataclass(frozen=True)
class FlareFormats:
    """flare's two response formats and the value lists of its ``DemographicAttributes``, from the pinned file."""

    refusal: ResponseFormat
    extraction: ResponseFormat
    attribute_values: dict[str, list[str]]
    source: str


def attribute_values(path: Path) -> dict[str, list[str]]:
    """``DemographicAttributes``' fields and their ``Literal`` values, in definition order."""
    props = model_json_schema(path, ATTRIBUTES_MODEL)["properties"]
    out = {}
    for key, entry in props.items():
        if "enum" not in entry:
            raise upstream.UpstreamDataError(f"{path}: {ATTRIBUTES_MODEL}.{key} is not a Literal of strings")
        out[key] = list(entry["enum"])
    return out


def pinned_schema_file(local: str | None = None) -> tuple[Path, str]:
    """(the pinned ``schema.py``, verified: cache, download once, or ``$STEREOPROBE_UPSTREAM_DIR``; its label)."""
    src = upstream.sources()[SOURCE_KEY]
    return upstream.fetch(SOURCE_KEY, SCHEMA_PATH, local=local), f"{src.repository}@{src.commit[:10]}:{SCHEMA_PATH}"


@cache
def flare_formats(local: str | None = None) -> FlareFormats:
    """flare's formats read from the pinned ``schema.py``; an unobtainable or unreadable file is one line naming
    our wording's option."""
    try:
        path, label = pinned_schema_file(local)
        return FlareFormats(response_format(path, REFUSAL_MODEL), response_format(path, EXTRACTION_MODEL),
                            attribute_values(path), source=label)
    except upstream.UpstreamDataError as e:
        raise upstream.UpstreamDataError(f"{e}; {OPTION_HINT}") from e


Format = ResponseSchema | dict[str, Any] | None  # a ready ResponseSchema, a JSON schema sent under our name, none


def role_formats(taxonomy: Any, structured_output: bool, role_prompts: str) -> tuple[Format, Format]:
    """(extraction, refusal) response formats of the scorer: none without ``structured_output``; flare's with
    flare's prompts (``role_prompts="upstream"``, the default), whose attributes and values the taxonomy must
    have; else the JSON schemas built from the taxonomy (``Taxonomy.extraction_json_schema``)."""
    if not structured_output:
        return None, None
    if role_prompts != "upstream":
        return taxonomy.extraction_json_schema(), taxonomy.refusal_json_schema()
    flare = flare_formats()
    ours = {a.key: set(a.extraction_values) for a in taxonomy.attributes}
    differ = sorted(set(ours) ^ set(flare.attribute_values)) + sorted(
        k for k in set(ours) & set(flare.attribute_values) if ours[k] != set(flare.attribute_values[k]))
    if differ:
        from stereoprobe.stereotales.taxonomy.files import TaxonomyError

        raise TaxonomyError(
            f"taxonomy {taxonomy.source or taxonomy.name}: attribute(s) {', '.join(differ)} differ from flare's "
            f"response format ({flare.source}); for a taxonomy of your own use -T role_prompts=bundled "
            "(stereoprobe's wording, response formats built from the taxonomy)")
    return flare.extraction.response_schema(), flare.refusal.response_schema()
