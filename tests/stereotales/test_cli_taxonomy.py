"""``stereoprobe taxonomy``: summary, prompt export, clear failure on an invalid taxonomy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


@pytest.fixture
def fresh_role_prompts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """No cached upstream copy; flare's prompts read anew in each test."""
    from stereoprobe.stereotales.extraction.upstream_prompts import upstream_role_prompts

    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    upstream_role_prompts.cache_clear()
    yield
    upstream_role_prompts.cache_clear()


def _section(out: str, title: str) -> list[str]:
    return out.split(f"--- {title}\n", 1)[1].splitlines()


def test_refusal_prompt_without_the_upstream_file_is_one_line(fresh_role_prompts, tmp_path: Path, monkeypatch,
                                                              capsys) -> None:
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(tmp_path / "empty"))
    assert main(["taxonomy", "bundled", "--languages", "en", "--show-refusal-prompt"]) == 0
    [line] = _section(capsys.readouterr().out, "refusal prompt (flare's, what the default run sends)")
    assert "src/flare/scorer/attribute_extraction/prompts.py" in line
    assert line.endswith("our wording: --show-refusal-prompt bundled)")


def test_refusal_prompt_bundled_is_our_wording(capsys) -> None:
    from stereoprobe.stereotales.taxonomy.summary import inspect_taxonomy

    assert main(["taxonomy", "bundled", "--languages", "en", "--show-refusal-prompt", "bundled"]) == 0
    shown = capsys.readouterr().out.split("--- refusal prompt (stereoprobe's wording, -T role_prompts=bundled)\n")[1]
    assert shown == inspect_taxonomy("bundled", languages="en").refusal_prompt() + "\n"


@pytest.mark.refdata
def test_refusal_prompt_is_flares_template_filled_for_the_first_sample(fresh_role_prompts, refdata: Path,
                                                                      tmp_path: Path, monkeypatch, capsys) -> None:
    """What the default run sends: flare's template (the string literal of the pinned prompts.py) with the first
    sample's language, English scenario and seed value, filled here with str.format as flare's scorer does."""
    from stereoprobe.upstream import python_constant

    prompts = refdata / "flare" / "src" / "flare" / "scorer" / "attribute_extraction" / "prompts.py"
    if not prompts.is_file():
        pytest.skip("no upstream copy of flare's src/flare/scorer/attribute_extraction/prompts.py")
    template = str(python_constant(prompts, "REFUSAL_JUDGE_PROMPT_TEMPLATE"))
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    samples = tmp_path / "samples.jsonl"
    assert main(["taxonomy", "bundled", "--languages", "en", "--prompts", str(samples)]) == 0
    capsys.readouterr()
    assert main(["taxonomy", "bundled", "--languages", "en", "--show-refusal-prompt"]) == 0
    shown = capsys.readouterr().out.split("--- refusal prompt (flare's, what the default run sends)\n")[1]
    first = json.loads(samples.read_text(encoding="utf-8").splitlines()[0])["metadata"]
    expected = template.format(
        language="en", scenario_key=first["scenario_key"], attribute_value_key=first["attribute_value_key"],
        assistant_output="<the story>")
    assert shown == expected + "\n"
