"""``stereoprobe taxonomy``: summary, prompt export, clear failure on an invalid taxonomy."""

from __future__ import annotations

import json
from pathlib import Path

from stereoprobe.cli import main

TINY = """
languages: [en, es]
story_template: "A story about a person {context}; the hero is {character}."
attributes:
  - key: diet
    values:
      - {key: vegan, phrase: a vegan}
      - {key: omnivore, phrase: an omnivore}
scenarios:
  kitchen: [cooking pasta]
locales:
  es:
    story_template: "Una historia sobre una persona {context}; es {character}."
    attributes:
      diet:
        vegan: {label: vegano, phrase: una persona vegana}
        omnivore: {label: omnívoro, phrase: una persona omnívora}
    scenarios:
      kitchen: {cooking pasta: que cocina pasta}
"""


def test_summary_and_prompt_export(tmp_path: Path, capsys) -> None:
    tax = tmp_path / "tiny.yaml"
    tax.write_text(TINY, encoding="utf-8")
    out = tmp_path / "prompts.jsonl"
    assert main(["taxonomy", str(tax), "--prompts", str(out), "--show-prompt", "es:diet:1:kitchen:0",
                 "--show-extraction-prompt", "fixed"]) == 0
    text = capsys.readouterr().out
    assert "samples      4 (en: 2, es: 2)" in text
    assert "Una historia sobre una persona que cocina pasta; es una persona omnívora." in text
    assert '- diet: "vegan" | "omnivore" | "unknown"' in text
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["en:diet:0:kitchen:0", "en:diet:1:kitchen:0", "es:diet:0:kitchen:0",
                                       "es:diet:1:kitchen:0"]
    assert rows[2]["metadata"]["attribute_value"] == "vegano"


def test_invalid_taxonomy_exits_2_naming_the_field(tmp_path: Path, capsys) -> None:
    # bad input: one line naming file and field, exit code 2 like every subcommand (was 1 before the CLI package)
    tax = tmp_path / "broken.yaml"
    tax.write_text(TINY.replace("es {character}.", "es {hero}."), encoding="utf-8")
    assert main(["taxonomy", str(tax)]) == 2
    err = capsys.readouterr().err
    assert "broken.yaml: locales.es: story_template" in err and "unknown placeholder(s) {hero}" in err
    assert "missing placeholder(s) {character}" in err
