"""flare's response formats read with ``ast``: pydantic's schema, the strict form, inspect's carrier, errors.

Checked on a synthetic schema module of flare's shape (test wording, written here), against schemas worked by
hand from pydantic's and the OpenAI SDK's documented rules; the module would stop the test run if it were ever
executed. The formats of flare's real file are checked by ``tests/conformance/test_stereotales_formats.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai.util._json import json_schema_dump

from stereoprobe import upstream
from stereoprobe.stereotales.extraction.response_formats import (
    ResponseFormat,
    model_json_schema,
    response_format,
    role_formats,
)

SYNTHETIC = '''from typing import Literal

from pydantic import BaseModel, Field


class Traits(BaseModel):
    hair_colour: Literal["dark", "fair", "unknown"]
    mood: Literal["calm", "calm", "busy"]


class Reading(BaseModel):
    note: str = Field(description="Why")
    traits: Traits = Field(description="What")


raise SystemExit("schema.py was executed")
'''

TRAITS = {"properties": {"hair_colour": {"enum": ["dark", "fair", "unknown"], "title": "Hair Colour", "type": "string"},
                         "mood": {"enum": ["calm", "busy"], "title": "Mood", "type": "string"}},
          "required": ["hair_colour", "mood"], "title": "Traits", "type": "object"}
# pydantic: fields in definition order, keys sorted, a model field as a $ref beside its description
PYDANTIC = {"$defs": {"Traits": TRAITS},
            "properties": {"note": {"description": "Why", "title": "Note", "type": "string"},
                           "traits": {"$ref": "#/$defs/Traits", "description": "What"}},
            "required": ["note", "traits"], "title": "Reading", "type": "object"}
STRICT_TRAITS = {**TRAITS, "additionalProperties": False}
# strict: additionalProperties false on every object, the $ref with a sibling inlined after that sibling
STRICT = {"$defs": {"Traits": STRICT_TRAITS},
          "properties": {"note": {"description": "Why", "title": "Note", "type": "string"},
                         "traits": {"description": "What", **STRICT_TRAITS}},
          "required": ["note", "traits"], "title": "Reading", "type": "object", "additionalProperties": False}


@pytest.fixture
def schema_file(tmp_path: Path) -> Path:
    path = tmp_path / "schema.py"
    path.write_text(SYNTHETIC, encoding="utf-8")
    return path


def test_pydantic_schema_and_strict_form(schema_file: Path) -> None:
    assert model_json_schema(schema_file, "Reading") == PYDANTIC
    fmt = response_format(schema_file, "Reading")
    assert fmt == ResponseFormat(name="Reading", schema=STRICT, strict=True, description=None)
    assert list(fmt.schema["properties"]["traits"]) == ["description", "properties", "required", "title", "type",
                                                        "additionalProperties"]


def test_inspect_response_schema_carries_titles_and_defs(schema_file: Path) -> None:
    rs = response_format(schema_file, "Reading").response_schema()
    assert (rs.name, rs.strict, rs.description) == ("Reading", True, None)
    dumped: dict[str, Any] = json_schema_dump(rs.json_schema)  # what inspect's providers send
    assert dumped == STRICT and dumped["$defs"]["Traits"]["properties"]["mood"]["title"] == "Mood"


@pytest.mark.parametrize("body, message", [
    ("    x: int\n", "type int is not str"),
    ('    x: str = "a"\n', "is not Field"),
    ('    x: str = Field(default="a", description="b")\n', "is not Field"),
    ('    x: Literal["only"]\n', "Literal"),
    ("    def f(self): ...\n", "not an annotated field"),
])
def test_another_shape_is_one_line(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "schema.py"
    path.write_text("class Odd(BaseModel):\n" + body, encoding="utf-8")
    with pytest.raises(upstream.UpstreamDataError, match=message) as e:
        model_json_schema(path, "Odd")
    assert "\n" not in str(e.value) and str(path) in str(e.value)


def test_a_taxonomy_unlike_flares_is_refused_with_flares_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    """With flare's formats the taxonomy must have flare's attributes and values; our wording needs neither."""
    from stereoprobe.stereotales.extraction import response_formats as rf
    from stereoprobe.stereotales.taxonomy import load_taxonomy
    from stereoprobe.stereotales.taxonomy.files import TaxonomyError

    tax = load_taxonomy("bundled")
    flare = rf.FlareFormats(ResponseFormat("R", {"type": "object"}), ResponseFormat("E", {"type": "object"}),
                            {a.key: list(a.extraction_values) for a in tax.attributes}, source="test")
    monkeypatch.setattr(rf, "flare_formats", lambda local=None: flare)
    extraction, refusal = role_formats(tax, True, "upstream")
    assert (extraction.name, refusal.name) == ("E", "R")  # type: ignore[union-attr]
    assert role_formats(tax, False, "upstream") == (None, None)
    assert role_formats(tax, True, "bundled") == (tax.extraction_json_schema(), tax.refusal_json_schema())
    flare.attribute_values["mood"] = ["calm", "unknown"]
    flare.attribute_values["gender"] = flare.attribute_values["gender"][:-1]
    with pytest.raises(TaxonomyError) as e:
        role_formats(tax, True, "upstream")
    assert "attribute(s) mood, gender differ" in str(e.value) and str(e.value).endswith(
        "(stereoprobe's wording, response formats built from the taxonomy)")
