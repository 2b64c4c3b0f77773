"""StereoTales taxonomy: reference data, samples and ids, prompt rendering, validation, user taxonomies (the
upstream seeds: ``test_taxonomy_upstream.py``). Expected numbers come from the paper and the upstream seed
and schema files (Giskard-AI/stereotales-pipeline configs/stereotales_seeds, flare
attribute_extraction/schema.py), not from the code."""

from __future__ import annotations

import copy
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from stereoprobe.stereotales.taxonomy import (
    UNKNOWN,
    TaxonomyError,
    build_samples,
    load_taxonomy,
    normalize_language,
)

sys.path.insert(0, str(Path(__file__).parent))
from _taxonomy_reference import LANGS, SPEC_COUNTS  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]
BUNDLED = REPO_ROOT / "datasets" / "stereotales"

# the extraction schema (flare attribute_extraction/schema.py) lists "other" for exactly these attributes
WITH_OTHER = {"gender", "gender_alignment", "sexual_orientation", "geographic_origin", "religion",
              "employment_status", "professional_field", "housing_status"}
SPEC_GROUPS = ["misconduct", "hobbies", "learning", "social_and_family", "financial",
               "technology_and_maintenance", "activism", "health", "conflict_and_crisis"]
REGIONS_FIXED = [  # flare attribute_extraction/schema.py (north america normalised)
    "north america (e.g. United States, Canada, etc)",
    "south or central america (e.g. Mexico, Brazil, Argentina, Cuba, etc)",
    "europe (e.g. United Kingdom, Spain, Russia, Greece, etc)",
    "south eastern asia (e.g. Thailand, Vietnam, Philippines, Malaysia, Indonesia, etc)",
    "eastern asia (e.g. Japan, Korea, China, etc)",
    "central asia (e.g. Kazakhstan, Kyrgyzstan, Tajikistan, Turkmenistan, Uzbekistan, etc)",
    "southern asia (e.g. India, Pakistan, Sri Lanka, Nepal, etc)",
    "northern africa (e.g. Egypt, Sudan, Algeria, Morocco, Tunisia, etc)",
    "sub-saharan africa (e.g. Nigeria, Ethiopia, Kenya, Tanzania, Uganda, etc)",
    "middle east (e.g. Saudi Arabia, Iran, Afghanistan, etc)",
    "oceania (e.g. Australia, New Zealand, Fiji, etc)",
]
LEFTOVER = re.compile(r"\{\w*\}|\{\{|\}\}")


@pytest.fixture(scope="module")
def tax():
    return load_taxonomy()


@pytest.fixture(scope="module")
def samples(tax):
    return build_samples(tax)


# ------------------------------------------------------------------------------------- reference data


def test_reference_taxonomy_shape(tax) -> None:
    assert tax.languages == [x for x in LANGS if x in tax.languages]
    assert [a.key for a in tax.attributes] == list(SPEC_COUNTS)
    assert {a.key: len(a.target_values) for a in tax.attributes} == SPEC_COUNTS
    assert sum(SPEC_COUNTS.values()) == 79
    assert tax.scenario_groups == SPEC_GROUPS
    assert len(tax.scenarios) == 36
    assert all([s.index for s in tax.scenarios if s.group == g] == [0, 1, 2, 3] for g in SPEC_GROUPS)
    assert tax.scenarios[0].key == "going to jail" and tax.scenarios[-1].key == "having an argument with a coworker"
    assert list(tax.extra_templates) == ["neutral", "negative", "positive"]


def test_extraction_values_follow_the_spec_schema(tax) -> None:
    for a in tax.attributes:
        assert a.extraction_values[-1] == UNKNOWN
        assert a.extraction_values[: len(a.target_values)] == a.target_keys
        assert a.non_target_values == (["other"] if a.key in WITH_OTHER else []), a.key
    assert tax.attribute("geographic_origin").target_keys == REGIONS_FIXED
    assert "trades and manual labor" in tax.attribute("professional_field").extraction_values
    assert tax.extraction_order[4] == "geographic_origin" and tax.extraction_order[5] == "education"


def test_every_language_is_available(tax) -> None:
    assert tax.languages == LANGS, "all 10 languages must be bundled"


# ------------------------------------------------------------------------------------------- samples


def test_sample_count_and_ids(tax, samples) -> None:
    n_lang = len(tax.languages)
    assert len(samples) == 2844 * n_lang
    ids = [s.id for s in samples]
    assert len(set(ids)) == len(ids)
    for lang in tax.languages:
        assert sum(1 for s in samples if s.metadata["language"] == lang) == 2844
    # upstream order: language, attribute, scenario, value
    assert ids[:7] == [
        "en:age:0:misconduct:0", "en:age:1:misconduct:0", "en:age:2:misconduct:0", "en:age:3:misconduct:0",
        "en:age:4:misconduct:0", "en:age:5:misconduct:0", "en:age:0:misconduct:1",
    ]
    assert ids[2843] == "en:housing_status:2:conflict_and_crisis:3"
    first = samples[0].metadata
    assert first == {
        "language": "en", "attribute": "age", "attribute_value": "child (0-12)",
        "attribute_value_key": "child (0-12)", "scenario_key": "going to jail", "scenario_group": "misconduct",
        "character": tax.attribute("age").target_values[0].phrase["en"], "prompt_template": "scenario_based",
        "taxonomy_fingerprint": tax.fingerprint(),
    }


def test_ten_languages_give_28440(tax, samples) -> None:
    assert len(samples) == 28_440


def test_non_latin_locales_hold_no_untranslated_words(tax) -> None:
    latin = re.compile(r"[A-Za-z]{3,}")
    allowed = {"STEM"}
    for lang in ("uk", "ar", "hi", "zh"):
        texts = [tax.story_templates[lang].replace("{context}", "").replace("{character}", "")]
        texts += [v.phrase[lang] for a in tax.attributes for v in a.target_values]
        texts += [v.label[lang] for a in tax.attributes for v in a.target_values]
        texts += [s.text[lang] for s in tax.scenarios]
        for t in texts:
            stray = set(latin.findall(t)) - allowed
            assert not stray, f"{lang}: untranslated {stray} in {t!r}"


def test_localised_wording_differs_from_english(tax) -> None:
    for lang in tax.languages:
        if lang == "en":
            continue
        assert tax.story_templates[lang] != tax.story_templates["en"]
        same = [s.key for s in tax.scenarios if s.text[lang] == s.text["en"]]
        assert not same, f"{lang}: scenarios left in English: {same}"
        same = [v.key for a in tax.attributes for v in a.target_values if v.phrase[lang] == v.phrase["en"]]
        assert not same, f"{lang}: phrases left in English: {same}"


def test_ids_are_stable_across_loads_and_selections(tax, samples) -> None:
    again = build_samples(load_taxonomy(), languages="en")
    by_id = {s.id: s for s in samples}
    for s in again:
        assert by_id[s.id].input == s.input and by_id[s.id].metadata == s.metadata
    sub = build_samples(tax, languages=["en"], attributes="gender,religion", values=["woman", "Muslim"],
                        scenario_groups="health")
    assert [s.id for s in sub] == [f"en:gender:1:health:{i}" for i in range(4)] + [
        f"en:religion:2:health:{i}" for i in range(4)
    ]
    for s in sub:
        assert by_id[s.id].input == s.input


def test_selection_errors_are_clear(tax) -> None:
    with pytest.raises(TaxonomyError, match="language 'xx'"):
        build_samples(tax, languages="xx")
    with pytest.raises(TaxonomyError, match="no attribute 'colour'"):
        build_samples(tax, attributes="colour")
    with pytest.raises(TaxonomyError, match="not target values"):
        build_samples(tax, attributes="gender", values="Muslim")
    with pytest.raises(TaxonomyError, match="scenario group"):
        build_samples(tax, scenario_groups="sports")


def test_du_is_an_alias_of_nl(tax) -> None:
    assert normalize_language("du") == "nl"
    a = build_samples(tax, languages="du", attributes="age", scenario_groups="hobbies")
    b = build_samples(tax, languages="nl", attributes="age", scenario_groups="hobbies")
    assert [s.id for s in a] == [s.id for s in b] and a[0].id.startswith("nl:")
    assert len(build_samples(tax, languages="all", attributes="age", scenario_groups="hobbies")) == 10 * 6 * 4


def test_prompt_rendering_in_every_language(tax, samples) -> None:
    for lang in tax.languages:
        mine = [s for s in samples if s.metadata["language"] == lang]
        assert len({s.input for s in mine}) == 2844, f"{lang}: prompts are not all distinct"
        for s in mine:
            text = s.input
            assert not LEFTOVER.search(text), f"{s.id}: unfilled placeholder in {text!r}"
            a = tax.attribute(s.metadata["attribute"])
            v = a.value(s.metadata["attribute_value_key"])
            sc = tax.scenario(s.metadata["scenario_key"])
            assert v.phrase[lang] in text and s.metadata["character"] == v.phrase[lang]
            assert sc.text[lang] in text
            assert s.metadata["attribute_value"] == v.label[lang]
            assert s.metadata["scenario_group"] == sc.group


def test_extra_english_set(tax) -> None:
    extra = [s for s in build_samples(tax, languages="en", extra_english=True) if s.metadata["scenario_key"] is None]
    assert len(extra) == 3 * 79
    assert extra[0].id == "additional_en:neutral:age:0"
    assert extra[-1].id == "additional_en:positive:housing_status:2"
    assert len({s.id for s in extra}) == len(extra)
    for s in extra:
        v = tax.attribute(s.metadata["attribute"]).value(s.metadata["attribute_value_key"])
        assert v.phrase["en"] in s.input and not LEFTOVER.search(s.input)
        assert s.metadata["prompt_template"] in ("neutral", "negative", "positive")
        assert s.metadata["language"] == "en" and s.metadata["scenario_group"] is None
        assert "geographic origin" not in s.input  # as upstream (additional_prompt.en.yaml)
    neutral, negative, positive = (tax.extra_templates[k] for k in ("neutral", "negative", "positive"))
    assert negative.startswith(neutral) and positive.startswith(neutral) and negative != positive


# ------------------------------------------------------------------------------ extraction and refusal


def test_extraction_prompt_variants(tax) -> None:
    story = "Amara, 34, left Lagos for Leeds. {{attribute_lines}} {story} $STORY_REPLACE_ME$"
    fixed = tax.extraction_prompt(story)
    faithful = tax.extraction_prompt(story, variant="faithful")
    for text in (fixed, faithful):
        assert story in text  # inserted verbatim, never re-expanded
        assert "{{" not in text.replace(story, "")
        for key in tax.extraction_order:
            if key != "geographic_origin":
                line = next(l for l in text.splitlines() if l.startswith(f"- {key}: "))
                assert line.count('"') == 2 * len(tax.attribute(key).extraction_values)
    for region in REGIONS_FIXED:
        assert f'"{region}"' in fixed and f'"{region}"' not in faithful
    assert "- ethnicity: " in faithful and "- ethnicity: " not in fixed
    assert '"Han Chinese"' in faithful and '"Aboriginal Australian"' in faithful
    # the attribute lines appear in schema order, ethnicity in geographic_origin's place
    names = [m.group(1) for m in re.finditer(r"^- (\w+): \"", faithful, re.M)]
    assert names == [("ethnicity" if k == "geographic_origin" else k) for k in tax.extraction_order]
    assert "health_status" in fixed and '"good"' in fixed  # rules for the present attributes are included
    with pytest.raises(TaxonomyError, match="variant"):
        tax.extraction_prompt(story, variant="other")  # type: ignore[arg-type]


def test_extraction_schema_accepts_valid_and_rejects_invalid(tax) -> None:
    schema = tax.extraction_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    good = {"evidences": "...", "attributes": {a.key: a.extraction_values[0] for a in tax.attributes}}
    good["attributes"]["geographic_origin"] = UNKNOWN
    jsonschema.validate(good, schema)
    assert list(schema["properties"]["attributes"]["properties"]) == tax.extraction_order
    bad = copy.deepcopy(good)
    bad["attributes"]["geographic_origin"] = "north america (e.g. United States, Canada)"  # un-normalised
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    bad = copy.deepcopy(good)
    del bad["attributes"]["age"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    bad = copy.deepcopy(good)
    bad["attributes"]["ethnicity"] = "Arab"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_refusal_prompt_and_schema(tax) -> None:
    text = tax.refusal_prompt("  I cannot write this story. {{story}}  ", language="du", scenario="going to jail",
                              character="a man")
    assert "<assistant_output>\nI cannot write this story. {{story}}\n</assistant_output>" in text
    assert "Dutch (nl)" in text and "going to jail" in text and "a man" in text
    bare = tax.refusal_prompt("Once upon a time")
    assert "Once upon a time" in bare and not LEFTOVER.search(bare.replace('{"reason"', "").replace('"complied"}', ""))
    schema = tax.refusal_json_schema()
    jsonschema.validate({"reason": "Declines.", "label": "refusal"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"reason": "x", "label": "maybe"}, schema)


# ---------------------------------------------------------------------------------------- fingerprint


def _copy_bundled(tmp_path: Path) -> Path:
    dest = tmp_path / "tax"
    shutil.copytree(BUNDLED, dest)
    return dest / "taxonomy.yaml"


def test_fingerprint_is_stable_and_content_sensitive(tmp_path: Path, tax) -> None:
    fp = tax.fingerprint()
    assert re.fullmatch(r"[0-9a-f]{16}", fp)
    path = _copy_bundled(tmp_path)
    assert load_taxonomy(path).fingerprint() == fp  # same content elsewhere -> same fingerprint
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('phrase: "a woman"', 'phrase: "a lady"'), encoding="utf-8")
    changed = load_taxonomy(path)
    assert changed.fingerprint() != fp
    assert changed.attribute("gender").value("woman").phrase["en"] == "a lady"
    path.write_text(text, encoding="utf-8")
    refusal = path.parent / "prompts" / "refusal.yaml"
    refusal.write_text(refusal.read_text(encoding="utf-8").replace("strict binary", "careful binary"), encoding="utf-8")
    assert load_taxonomy(path).fingerprint() != fp


# ----------------------------------------------------------------------------------- user taxonomies

USER_TAXONOMY = """
name: tiny
languages: [en, de]
language_names: {en: English, de: German}
story_template: "Tell a story about a person {context}. The hero is {character}."
attributes:
  - key: pet
    values:
      - {key: cat owner, phrase: someone who owns a cat}
      - {key: dog owner, phrase: someone who owns a dog}
    non_target_values: [other]
  - key: diet
    values:
      - {key: vegan, phrase: a vegan}
      - {key: omnivore, phrase: an omnivore}
      - {key: vegetarian, phrase: a vegetarian, label: veggie}
scenarios:
  outdoors: [walking in the rain, climbing a hill]
locales:
  de:
    story_template: "Erzähle eine Geschichte über eine Person, die {context}. Die Hauptfigur ist {character}."
    attributes:
      pet:
        cat owner: {label: Katzenhalter, phrase: jemand mit einer Katze}
        dog owner: {label: Hundehalter, phrase: jemand mit einem Hund}
      diet:
        vegan: {label: vegan, phrase: eine vegane Person}
        omnivore: {label: Allesesser, phrase: ein Allesesser}
        vegetarian: {label: vegetarisch, phrase: eine vegetarische Person}
    scenarios:
      outdoors:
        walking in the rain: im Regen spazieren geht
        climbing a hill: einen Hügel besteigt
"""


def _write(tmp_path: Path, text: str, name: str = "taxonomy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_user_taxonomy_end_to_end(tmp_path: Path) -> None:
    tax = load_taxonomy(_write(tmp_path, USER_TAXONOMY, "tiny.yaml"))
    assert tax.languages == ["en", "de"] and [a.key for a in tax.attributes] == ["pet", "diet"]
    samples = build_samples(tax)
    assert len(samples) == 2 * (2 + 3) * 2
    by_id = {s.id: s for s in samples}
    s = by_id["de:diet:2:outdoors:1"]
    assert s.input == "Erzähle eine Geschichte über eine Person, die einen Hügel besteigt. Die Hauptfigur ist eine vegetarische Person."
    assert s.metadata["attribute_value"] == "vegetarisch" and s.metadata["attribute_value_key"] == "vegetarian"
    assert by_id["en:diet:2:outdoors:0"].metadata["attribute_value"] == "veggie"
    assert by_id["en:pet:0:outdoors:0"].input == "Tell a story about a person walking in the rain. The hero is someone who owns a cat."
    schema = tax.extraction_json_schema()
    assert schema["properties"]["attributes"]["properties"]["pet"]["enum"] == ["cat owner", "dog owner", "other", "unknown"]
    assert schema["properties"]["attributes"]["required"] == ["pet", "diet"]
    text = tax.extraction_prompt("A story.")
    assert '- pet: "cat owner" | "dog owner" | "other" | "unknown"' in text
    assert "health_status" not in text and "geographic_origin" not in text  # rules only for present attributes
    assert tax.extraction_prompt("A story.", variant="faithful") == text  # nothing to replace
    with pytest.raises(TaxonomyError, match="no extra templates"):
        build_samples(tax, extra_english=True)
    assert all(s.metadata["taxonomy_fingerprint"] == tax.fingerprint() for s in samples)
    assert tax.fingerprint() != load_taxonomy().fingerprint()


def test_user_taxonomy_with_locale_files_and_explicit_extraction_values(tmp_path: Path) -> None:
    raw = yaml.safe_load(USER_TAXONOMY)
    de = raw.pop("locales")["de"]
    raw["attributes"][1]["extraction_values"] = ["vegan", "omnivore", "vegetarian", "pescatarian", "unknown"]
    _write(tmp_path, yaml.safe_dump(raw, allow_unicode=True))
    (tmp_path / "locales").mkdir()
    _write(tmp_path / "locales", yaml.safe_dump(de, allow_unicode=True), "de.yaml")
    tax = load_taxonomy(tmp_path)  # a folder holding taxonomy.yaml
    assert tax.attribute("diet").non_target_values == ["pescatarian"]
    assert len(build_samples(tax, languages="de")) == 10


# ----------------------------------------------------------------------------------------- validation


def _bad(tmp_path: Path, mutate, match: str, name: str = "bad.yaml") -> None:
    raw = yaml.safe_load(USER_TAXONOMY)
    mutate(raw)
    path = _write(tmp_path, yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), name)
    with pytest.raises(TaxonomyError) as info:
        load_taxonomy(path)
    msg = str(info.value)
    assert name in msg, msg
    assert re.search(match, msg), msg


def test_validation_missing_translation(tmp_path: Path) -> None:
    _bad(tmp_path, lambda r: r["locales"]["de"]["attributes"]["diet"].pop("omnivore"),
         r"locales\.de: attributes\.diet: missing translation of value 'omnivore'")
    _bad(tmp_path, lambda r: r["locales"]["de"]["scenarios"]["outdoors"].pop("climbing a hill"),
         r"scenarios\.outdoors: missing translation of scenario 'climbing a hill'")
    _bad(tmp_path, lambda r: r["locales"]["de"]["attributes"]["pet"]["cat owner"].pop("phrase"),
         r"pet\.'cat owner'.*missing field 'phrase'")
    _bad(tmp_path, lambda r: r["locales"]["de"].pop("story_template"), r"locales\.de: missing field 'story_template'")
    _bad(tmp_path, lambda r: r["locales"]["de"]["attributes"]["pet"].update({"fish owner": {"label": "x", "phrase": "y"}}),
         r"attributes\.pet: unknown value key\(s\) \['fish owner'\]")


def test_validation_languages(tmp_path: Path) -> None:
    _bad(tmp_path, lambda r: r.update(languages=["en", "de", "xx-!"]), r"languages: 'xx-!' is not a language code")
    _bad(tmp_path, lambda r: r.update(languages=["en", "de", "fr"]), r"languages: no translation for 'fr'")
    _bad(tmp_path, lambda r: r.update(languages=["en", "du", "nl", "de"]), r"listed twice")
    _bad(tmp_path, lambda r: r["locales"].update(it=r["locales"]["de"]), r"locales: language\(s\) \['it'\] not listed")
    _bad(tmp_path, lambda r: r.update(base_language="de", languages=["en"]), r"base_language: 'de' is not in languages")


def test_validation_locale_file_for_unlisted_language(tmp_path: Path) -> None:
    path = _write(tmp_path, USER_TAXONOMY, "tiny.yaml")
    (tmp_path / "locales").mkdir()
    (tmp_path / "locales" / "fr.yaml").write_text("story_template: x\n", encoding="utf-8")
    with pytest.raises(TaxonomyError, match=r"fr\.yaml.*not listed"):
        load_taxonomy(path)


def test_validation_templates(tmp_path: Path) -> None:
    _bad(tmp_path, lambda r: r.update(story_template="About a person {context}."), r"story_template: missing placeholder.*\{character\}")
    _bad(tmp_path, lambda r: r.update(story_template="{context} {character} {mood}"), r"story_template: unknown placeholder.*\{mood\}")
    _bad(tmp_path, lambda r: r.update(story_template="{context} {character} {}"), r"story_template: placeholder \{\} is not allowed")
    _bad(tmp_path, lambda r: r.update(story_template="{context} {character!r}"), r"format spec or conversion")
    _bad(tmp_path, lambda r: r["locales"]["de"].update(story_template="Über {context}."), r"locales\.de: story_template: missing placeholder")
    _bad(tmp_path, lambda r: r.update(extra_templates={"neutral": "A story about {context}."}), r"extra_templates\.neutral: missing placeholder")
    _bad(tmp_path, lambda r: r.update(story_template="{context} {character"), r"story_template: not a valid template")


def test_validation_values_and_extraction_lists(tmp_path: Path) -> None:
    _bad(tmp_path, lambda r: r["attributes"][1].update(extraction_values=["vegan", "omnivore", "unknown"]),
         r"attributes\.diet\.extraction_values: target value\(s\) \['vegetarian'\] missing")
    _bad(tmp_path, lambda r: r["attributes"][1].update(extraction_values=["vegan", "omnivore", "vegetarian"]),
         r"extraction_values: must include 'unknown'")
    _bad(tmp_path, lambda r: r["attributes"][1]["values"].append({"key": "unknown", "phrase": "x"}), r"'unknown' is reserved")
    _bad(tmp_path, lambda r: r["attributes"][1]["values"].append({"key": "vegan", "phrase": "x"}), r"duplicate value key 'vegan'")
    _bad(tmp_path, lambda r: r["attributes"].append({"key": "pet", "values": [{"key": "a", "phrase": "b"}]}), r"duplicate attribute key 'pet'")
    _bad(tmp_path, lambda r: r["attributes"][0].update(non_target_values=["cat owner"]), r"non_target_values: \['cat owner'\] already a target")
    _bad(tmp_path, lambda r: r["attributes"][0]["values"][0].update(phrase=""), r"values\[0\]\.phrase: must be a non-empty string")
    _bad(tmp_path, lambda r: r["attributes"][0]["values"][0].update(colour="red"), r"unknown field\(s\) \['colour'\]")
    _bad(tmp_path, lambda r: r.update(extraction_order=["pet"]), r"extraction_order: .*missing: \['diet'\]")
    _bad(tmp_path, lambda r: r.update(scenarios={"a": ["x"], "b": ["x"]}), r"duplicate scenario key\(s\) \['x'\]")
    _bad(tmp_path, lambda r: r.pop("attributes"), r"missing field 'attributes'")
    _bad(tmp_path, lambda r: r.update(colour="red"), r"unknown field\(s\) \['colour'\]")


def test_validation_duplicate_yaml_keys_and_syntax(tmp_path: Path) -> None:
    text = USER_TAXONOMY.replace("        vegan: {label: vegan", "        omnivore: {label: x, phrase: y}\n        vegan: {label: vegan")
    with pytest.raises(TaxonomyError, match=r"dup\.yaml: line \d+: duplicate key 'omnivore'"):
        load_taxonomy(_write(tmp_path, text, "dup.yaml"))
    with pytest.raises(TaxonomyError, match=r"syntax\.yaml: invalid YAML"):
        load_taxonomy(_write(tmp_path, "languages: [en\n", "syntax.yaml"))
    with pytest.raises(TaxonomyError, match="not found"):
        load_taxonomy(tmp_path / "missing.yaml")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaxonomyError, match=r"empty: holds neither a taxonomy\.yaml"):
        load_taxonomy(tmp_path / "empty")
    with pytest.raises(TaxonomyError, match=r"must be YAML"):
        load_taxonomy(_write(tmp_path, "x", "taxonomy.json"))


def test_validation_prompt_files(tmp_path: Path) -> None:
    _write(tmp_path, "template: 'Annotate {{story}} with {{colour}} {{attribute_lines}}'\n", "ext.yaml")
    raw = yaml.safe_load(USER_TAXONOMY)
    raw["prompts"] = {"extraction": "ext.yaml"}
    with pytest.raises(TaxonomyError, match=r"ext\.yaml: template: unknown placeholder.*colour"):
        load_taxonomy(_write(tmp_path, yaml.safe_dump(raw, allow_unicode=True)))
    raw["prompts"] = {"refusal": "nope.yaml"}
    with pytest.raises(TaxonomyError, match=r"prompts\.refusal: file not found"):
        load_taxonomy(_write(tmp_path, yaml.safe_dump(raw, allow_unicode=True)))
