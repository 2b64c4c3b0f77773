"""Every integer parameter of every stereoprobe task has a bound that its one-line refusal states (issue 41.4):
``-T runs=10**30`` is refused when the task is built (before any model loads, through the check before the
run), never a ``SystemError`` or ``OverflowError`` after the model is built. The parameters are found from the
tasks' signatures, so a new one is covered without an edit here."""

from __future__ import annotations

from typing import Any

import pytest

import stereoprobe._registry  # noqa: F401 (registers the tasks)
from stereoprobe.errors import InputError
from stereoprobe.preflight import task_names
from stereoprobe.strict_params import parameters

HUGE = 10**30
DBB = {"source": "bundled", "prompt": "stereoprobe"}
STORIES = {"seeds": "bundled", "role_prompts": "bundled", "run_settings": "none", "role_settings": "none",
           "languages": "en"}
ASSOCIATIONS = ("model,slice,base_attribute,base_value,compared_attribute,compared_value,n,fraction,lift\n"
                "mockllm/model,all,income_level,low,education,basic,100,0.5,2.6\n")
#: the other arguments each task needs offline (its defaults read upstream files)
OFFLINE: dict[str, dict[str, Any]] = {
    "dbb": DBB, "dbb_sg": DBB, "dbb_baselines": {"source": "bundled"}, "globalbias": {"source": "bundled"},
    "globalbias_profiles": {"source": "bundled", "prompt": "stereoprobe"}, "stereotales": STORIES,
    "stereotales_judge": {"run_settings": "none", "prompt": "bundled"},
    "dbb_build_variations": {"source": "bundled"},
}


def _task(name: str) -> Any:
    from inspect_ai._util.registry import registry_lookup

    return registry_lookup("task", f"stereoprobe/{name}")


def _integer_parameters() -> list[tuple[str, str]]:
    found = []
    for name in task_names():
        for p, v in parameters(_task(name)).parameters.items():
            text = str(v.annotation)
            if "int" in text and "list" not in text and "bool" not in text:
                found.append((name, p))
    return sorted(found)


def test_the_walk_finds_the_parameters() -> None:
    found = _integer_parameters()
    assert ("globalbias_profiles", "runs") in found and ("stereotales", "stories_per_prompt") in found
    assert len(found) >= 15


@pytest.mark.parametrize("task, parameter", _integer_parameters())
def test_a_huge_integer_is_refused_in_one_line_stating_the_bound(task: str, parameter: str, tmp_path) -> None:
    args = dict(OFFLINE.get(task, {}))
    if task == "stereotales_judge":
        (tmp_path / "a.csv").write_text(ASSOCIATIONS)
        args["associations"] = str(tmp_path / "a.csv")
    if task == "dbb_baselines":
        args["source"] = str(tmp_path)  # a folder (its files are read after the parameters are checked)
    if task == "dbb_build_questions":
        (tmp_path / "c.csv").write_text("concept\nx\n")
        args["concepts"] = str(tmp_path / "c.csv")
    with pytest.raises(InputError) as info:
        _task(task)(**{**args, parameter: HUGE})
    text = str(getattr(info.value, "message", None) or info.value)
    assert "\n" not in text and parameter in text and "<=" in text, text
