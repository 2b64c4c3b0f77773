"""Reading flare's prompts with ``ast`` (stereoprobe.stereotales.extraction.flare_source), on synthetic files of
the same shape as flare's ``prompts.py`` and ``schema.py``; the real files are checked byte for byte against
flare's renderings in tests/conformance/test_stereotales.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from stereoprobe.stereotales.extraction.flare_source import prompt_constants
from stereoprobe.upstream import UpstreamDataError

SCHEMA = '''raise SystemExit("never run")
from typing import Literal

from pydantic import BaseModel


class DemographicAttributes(BaseModel):
    """docstring"""
    age: Literal["child (0-12)", "senior (65+)", "unknown", "unknown"]
    diet: Literal["vegan"]


class Other(BaseModel):
    x: str
'''

PROMPTS = '''raise SystemExit("never run")
from flare.scorer.bias.schema import DemographicAttributes

attr_schema = DemographicAttributes.model_json_schema()["properties"]
attr_schema_str = "\\n  ".join(
    f"{k}: " + " | ".join(f'"{t}"' for t in v["enum"]) + ";"
    for k, v in attr_schema.items()
)
attr_fields_str = ", ".join(attr_schema.keys())
UNUSED = some_call()

ATTR_EXTRACTION_PROMPT_TEMPLATE = f"""Story:
$STORY_REPLACE_ME$
  {attr_schema_str}.
Fields: {attr_fields_str} {{braces}}
"""

REFUSAL_JUDGE_PROMPT_TEMPLATE = """Lang {language}: {{"label": "x"}}"""
'''


def _write(tmp_path: Path, prompts: str = PROMPTS, schema: str = SCHEMA) -> tuple[Path, dict[str, Path]]:
    files = {"src/flare/scorer/attribute_extraction/prompts.py": prompts, "src/flare/scorer/bias/schema.py": schema}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path / "src/flare/scorer/attribute_extraction/prompts.py", {}


def test_fstring_filled_from_the_schema_without_running_either_file(tmp_path: Path) -> None:
    prompts, _ = _write(tmp_path)
    asked: list[str] = []

    def locate(rel: str) -> Path:
        asked.append(rel)
        return tmp_path / rel

    got = prompt_constants(prompts, locate)
    assert asked == ["src/flare/scorer/bias/schema.py"]  # the module prompts.py imports the model from
    assert got["ATTR_EXTRACTION_PROMPT_TEMPLATE"] == (
        'Story:\n$STORY_REPLACE_ME$\n'
        '  age: "child (0-12)" | "senior (65+)" | "unknown";\n  diet: "vegan";.\n'
        'Fields: age, diet {braces}\n'
    )
    assert got["REFUSAL_JUDGE_PROMPT_TEMPLATE"] == 'Lang {language}: {{"label": "x"}}'


@pytest.mark.parametrize("prompts, schema, words", [
    (PROMPTS.replace('f"{k}: "', 'f"{k!r}: "'), SCHEMA, ["prompts.py", "ATTR_EXTRACTION_PROMPT_TEMPLATE",
                                                         "conversion"]),
    (PROMPTS.replace('v["enum"]', 'v["enum"].upper()'), SCHEMA, ["ATTR_EXTRACTION_PROMPT_TEMPLATE", ".upper()"]),
    (PROMPTS.replace('v["enum"]', 'v["choices"]'), SCHEMA, ["ATTR_EXTRACTION_PROMPT_TEMPLATE", "'choices'"]),
    (PROMPTS, SCHEMA.replace('diet: Literal["vegan"]', 'diet: str'), ["schema.py", "line 10", "Literal"]),
    (PROMPTS.replace('REFUSAL_JUDGE_PROMPT_TEMPLATE =', 'OTHER ='), SCHEMA, ["REFUSAL_JUDGE_PROMPT_TEMPLATE"]),
    (PROMPTS.replace("import DemographicAttributes", "import Other as DemographicAttributes"), SCHEMA,
     ["schema.py", "Other line 14", "Literal"]),
    (PROMPTS.replace("import DemographicAttributes", "import Missing as DemographicAttributes"), SCHEMA,
     ["schema.py", "no class Missing"]),
])
def test_what_the_reader_does_not_model_is_one_line(tmp_path: Path, prompts: str, schema: str,
                                                    words: list[str]) -> None:
    path, _ = _write(tmp_path, prompts, schema)
    with pytest.raises(UpstreamDataError) as err:
        prompt_constants(path, lambda rel: tmp_path / rel)
    message = str(err.value)
    assert "\n" not in message and all(w in message for w in words), message
