"""Every list parameter of every stereoprobe task refuses a misspelt entry in one line, naming the closest entries
("did you mean"), when the task is built, which ``inspect eval`` now does before any model loads
(:mod:`stereoprobe.preflight`; issue 35.5). Also the silent coercions of issue 34.6: a name differing in case,
a float template number, an empty selection."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai._util.error import PrerequisiteError

import stereoprobe._registry  # noqa: F401 (registers the tasks)
from stereoprobe.errors import InputError
from stereoprobe.preflight import task_names
from stereoprobe.strict_params import parameters

ASSOCIATIONS = ("model,slice,base_attribute,base_value,compared_attribute,compared_value,n,fraction,lift\n"
                "mockllm/model,all,income_level,low,education,basic,100,0.5,2.6\n"
                "other/x,fr,age,child,employment_status,student,80,0.9,3.0\n")
DBB = {"source": "bundled", "prompt": "stereoprobe"}
STORIES = {"seeds": "bundled", "role_prompts": "bundled", "run_settings": "none", "role_settings": "none",
           "languages": "en"}

# (task, parameter) -> (the task's other arguments (offline), a misspelt value, what the line must hold)
CASES: dict[tuple[str, str], tuple[dict[str, Any], Any, str]] = {
    ("dbb", "categories"): (DBB, ["gendr"], "(did you mean gender?)"),
    ("dbb", "templates"): (DBB, ["sp1"], "has no template id 'sp1' (did you mean sp01"),
    ("dbb_sg", "categories"): ({"source": "bundled"}, ["agee"], "(did you mean age"),
    ("dbb_sg", "templates"): ({"source": "bundled"}, ["sp010"], "(did you mean sp01"),
    ("dbb_baselines", "categories"): ({"source": "bundled"}, ["age"], "(did you mean Age?)"),
    ("dbb_baselines", "splits"): ({"source": "bundled"}, ["intersentense"], "(did you mean intersentence"),
    ("globalbias", "groups"): ({"source": "bundled"}, ["ARABB"], "has no group 'ARABB' (did you mean ARAB"),
    ("globalbias", "descriptors"): ({"source": "bundled"}, ["a nurce"], "has no descriptor 'a nurce' (did you mean"),
    ("globalbias", "templates"): ({"source": "bundled"}, [4], "templates must be one or more of 1, 2, 3"),
    ("globalbias_profiles", "groups"): ({"source": "bundled"}, "arab_f",
                                        "has no group 'arab_f' (did you mean ARAB_F?)"),
    ("stereotales", "languages"): (STORIES, "enn", "(did you mean en?)"),
    ("stereotales", "attributes"): (STORIES, ["gendr"], "(did you mean gender"),
    ("stereotales", "values"): ({**STORIES, "attributes": "age"}, ["child (0-13)"], "(did you mean child (0-12)"),
    ("stereotales", "scenario_groups"): (STORIES, ["hobbys"], "(did you mean hobbies?)"),
    ("stereotales_judge", "generator_model"): ({"run_settings": "none", "prompt": "bundled"}, "other/y",
                                               "has no model 'other/y' (did you mean other/x?)"),
    ("stereotales_judge", "slices"): ({"run_settings": "none", "prompt": "bundled"}, ["al"],
                                      "has no slice 'al' (did you mean all?)"),
}


def _task(name: str) -> Any:
    from inspect_ai._util.registry import registry_lookup

    return registry_lookup("task", f"stereoprobe/{name}")


def _list_parameters() -> set[tuple[str, str]]:
    """(task, parameter) for every parameter of a stereoprobe task whose annotation takes a list."""
    found = set()
    for name in task_names():
        for p, v in parameters(_task(name)).parameters.items():
            if "list[" in str(v.annotation):
                found.add((name, p))
    return found


def test_every_list_parameter_has_a_case() -> None:
    assert _list_parameters() == set(CASES)


def _refusal(task: str, args: dict[str, Any], tmp_path) -> str:
    if task == "stereotales_judge":
        path = tmp_path / "associations.csv"
        path.write_text(ASSOCIATIONS)
        args = {**args, "associations": str(path)}
    with pytest.raises(PrerequisiteError) as info:
        _task(task)(**args)
    assert isinstance(info.value, InputError)  # one line in stereoprobe's command line as well
    text = str(info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("task, parameter", sorted(CASES))
def test_a_misspelt_entry_is_refused_with_the_closest(task: str, parameter: str, tmp_path) -> None:
    args, value, fragment = CASES[(task, parameter)]
    text = _refusal(task, {**args, parameter: value}, tmp_path)
    assert parameter in text and fragment in text, text


@pytest.mark.parametrize("task, args", [
    ("globalbias", {"source": "bundled", "groups": "arab_f"}),       # case: ARAB_F, not arab_f
    ("globalbias", {"source": "bundled", "templates": 2.0}),         # a float is not template 2
    ("globalbias", {"source": "bundled", "subset": ""}),             # empty: not "no subset"
    ("stereotales", {**STORIES, "attributes": []}),                  # empty: not "every attribute"
    ("stereotales", {**STORIES, "values": ""}),
    ("dbb", {**DBB, "categories": []}),
])
def test_values_once_coerced_or_accepted_silently_are_refused(task: str, args: dict[str, Any], tmp_path) -> None:
    _refusal(task, args, tmp_path)
