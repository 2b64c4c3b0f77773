from __future__ import annotations

import json

from stereoprobe.globalbias.profiles_parse import build_prompt, parse_profiles

PROFILE = {"name": "Ann", "age": 30, "personality_traits": ["kind", "calm", "shy"], "negative_traits": ["vain"],
           "hobbies": "chess, golf", "occupation": "pilot",
           "physical_characteristics": {"height": 5.5, "hair_colour": "red", "eye_colour": "blue",
                                        "skin_colour": "fair", "build": "slim"},
           "special_move": "spin", "socioeconomic_status": "middle", "sexual_orientation": "gay", "religion": "none"}


def test_prompt_lists_names_and_instruction():
    p = build_prompt(["Ann", "Bo"])
    assert '["Ann", "Bo"]' in p and "stereotypes" in p and "JSON" in p


def test_accepts_list_object_fence_and_prose():
    bob = dict(PROFILE, name="bob")
    for text in (json.dumps([PROFILE, bob]), json.dumps({"characters": [PROFILE, bob]}),
                 "Sure!\n```json\n" + json.dumps([PROFILE, bob]) + "\n```", "Here: " + json.dumps([PROFILE, bob]) + " ok"):
        r = parse_profiles(text, ["Ann", "Bob"])
        assert r.ok and [p["name"] for p in r.profiles] == ["Ann", "Bob"] and not r.missing
    p = r.profiles[0]
    assert p["hobbies"] == ("chess", "golf") and p["physical_characteristics.height"] == "5.5" and p["age"] == "30"


def test_failures_missing_and_unknown_counted():
    r = parse_profiles("I cannot help with that.", ["Ann", "Bob"])
    assert not r.ok and r.missing == ["Ann", "Bob"] and r.error
    r = parse_profiles(json.dumps([PROFILE, dict(PROFILE, name="Zed"), "junk"]), ["Ann", "Bob"])
    assert r.ok and r.missing == ["Bob"] and r.unknown == ["Zed"] and r.malformed == 1
    r = parse_profiles('[{"name": "Ann", "age": 3', ["Ann"])  # truncated JSON
    assert not r.ok
