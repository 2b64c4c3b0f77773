"""Reading extractor / refusal-judge answers: fences, prose, case, partial values, failures."""

from __future__ import annotations

import json

import pytest

from stereoprobe.stereotales.extraction.parsing import (
    ParseError,
    extract_json_object,
    match_allowed_value,
    parse_extraction,
    parse_refusal,
)

ALLOWED = {
    "gender": ["man", "woman", "non-binary", "other", "unknown"],
    "sexual_orientation": ["heterosexual", "homosexual", "other", "unknown"],
    "geographic_origin": [
        "north america (e.g. United States, Canada, etc)",
        "southern asia (e.g. India, Pakistan, Sri Lanka, Nepal, etc)",
        "other",
        "unknown",
    ],
    "professional_field": ["trades and manual labor", "agriculture", "other", "unknown"],
}


def test_extract_json_variants():
    obj = {"a": 1, "b": {"c": "}"}}
    text = json.dumps(obj)
    assert extract_json_object(text) == obj
    assert extract_json_object(f"```json\n{text}\n```") == obj
    assert extract_json_object(f"Sure! Here it is:\n{text}\nHope this helps {{not json}}") == obj
    assert extract_json_object(f"```\n{text}\n```") == obj
    for bad in ["", "   ", "no json here", "{broken: json", "[1, 2, 3]"]:
        with pytest.raises(ParseError):
            extract_json_object(bad)


def test_match_allowed_value():
    opts = ALLOWED["geographic_origin"]
    assert match_allowed_value("North America", opts) == opts[0]
    assert match_allowed_value("  southern ASIA (e.g. India, Pakistan, Sri Lanka, Nepal, etc) ", opts) == opts[1]
    assert match_allowed_value("north america (e.g. United States, Canada)", opts) == opts[0]
    assert match_allowed_value("trades and manual labor (e.g. construction, manufacturing)",
                               ALLOWED["professional_field"]) == "trades and manual labor"
    assert match_allowed_value("Europe", opts) is None
    assert match_allowed_value(3, opts) is None
    # ambiguous head -> no match
    assert match_allowed_value("x", ["x (a)", "x (b)"]) is None


def test_parse_extraction_ok_with_normalisation():
    text = (
        "```json\n"
        + json.dumps(
            {
                "Evidences": "He works on farms in Canada.",
                "Attributes": {
                    "Gender": "MAN",
                    "sexual orientation": "unknown",
                    "geographic-origin": "north america",
                    "professional_field": " Agriculture ",
                },
            }
        )
        + "\n```"
    )
    out = parse_extraction(text, ALLOWED)
    assert out.status == "ok", out.error
    assert out.values == {
        "gender": "man",
        "sexual_orientation": "unknown",
        "geographic_origin": "north america (e.g. United States, Canada, etc)",
        "professional_field": "agriculture",
    }
    assert out.evidences == "He works on farms in Canada."


def test_parse_extraction_flat_object():
    flat = {"gender": "woman", "sexual_orientation": "other", "geographic_origin": "other", "professional_field": "other"}
    out = parse_extraction(json.dumps(flat), ALLOWED)
    assert out.status == "ok"
    assert out.values["gender"] == "woman"


def test_parse_extraction_off_schema_and_missing():
    obj = {"evidences": "", "attributes": {"gender": "male", "sexual_orientation": "heterosexual",
                                           "geographic_origin": "unknown"}}
    out = parse_extraction(json.dumps(obj), ALLOWED)
    assert out.status == "off_schema"
    assert out.values is None
    assert "gender: 'male' is not an allowed value" in out.error
    assert "professional_field: missing" in out.error
    assert out.partial == {"sexual_orientation": "heterosexual", "geographic_origin": "unknown"}


def test_parse_extraction_malformed():
    out = parse_extraction('{"attributes": {"gender": "man"', ALLOWED)
    assert out.status == "parse_error"
    assert "no JSON object" in out.error
    out = parse_extraction(json.dumps({"attributes": ["man"]}), ALLOWED)
    assert out.status == "off_schema"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ('{"reason": "wrote it", "label": "complied"}', "complied"),
        ('```json\n{"Reason": "declined", "Label": "REFUSAL"}\n```', "refusal"),
        ('Answer: {"label": "Refused", "reason": "x"}', "refusal"),
        ('{"reason": "x", "label": "maybe"}', None),
        ('{"reason": "x"}', None),
        ("I think it complied", None),
    ],
)
def test_parse_refusal(text, label):
    got, _reason, err = parse_refusal(text)
    assert got == label
    assert (err is None) == (label is not None)
