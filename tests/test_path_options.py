"""Every path-or-keyword option of every task refuses a value that is neither a keyword nor an existing path, in
one line with the closest keyword, before anything is read or downloaded (issue 42.2: ``-T source=bundeld`` on
GlobalBias loaded the model, then printed a 285-line traceback). The options are found from the tasks'
signatures and docstrings: each text option whose description names a path, file or folder is checked."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

import stereoprobe._registry  # noqa: F401 (registers the tasks)
from stereoprobe.errors import InputError
from stereoprobe.preflight import task_names
from stereoprobe.preflight.path_options import NOT_CHECKED, OPTIONS

PATHLIKE = re.compile(r"\b(path|file|folder|director|csv|yaml|local copy)\b", re.I)


def _function(name: str) -> Any:
    from inspect_ai._util.registry import registry_lookup

    fn = registry_lookup("task", f"stereoprobe/{name}")
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


def _described_as_paths() -> set[tuple[str, str]]:
    """(task, option) for every text option whose docstring entry names a path, file or folder."""
    found = set()
    for name in task_names():
        fn = _function(name)
        doc = inspect.getdoc(fn) or ""
        for p, v in inspect.signature(fn).parameters.items():
            if "str" not in str(v.annotation) or "list" in str(v.annotation):
                continue
            m = re.search(rf"^\s*{p}:(.*?)(?=^\s*\w+:|\Z)", doc, re.M | re.S)
            if m and PATHLIKE.search(m.group(1)):
                found.add((name, p))
    return found


def test_every_option_described_as_a_path_is_checked_or_says_why_not() -> None:
    described = _described_as_paths()
    assert ("globalbias", "source") in described and ("stereotales", "seeds") in described
    assert described - set(OPTIONS) - set(NOT_CHECKED) == set()


def test_every_listed_option_is_an_option_of_its_task() -> None:
    for name, option in [*OPTIONS, *NOT_CHECKED]:
        assert option in inspect.signature(_function(name)).parameters, (name, option)


def _typo(keyword: str) -> str:
    return keyword[:-2] + keyword[-1] + keyword[-2]  # the last two letters swapped: bundled -> bundeld


@pytest.mark.parametrize("task, option", sorted(OPTIONS))
def test_a_misspelt_keyword_or_a_missing_path_is_refused_with_the_closest(task: str, option: str, tmp_path,
                                                                          monkeypatch) -> None:
    from inspect_ai._util.registry import registry_lookup

    monkeypatch.chdir(tmp_path)  # no file of the misspelt name here
    keywords = OPTIONS[(task, option)]
    value = _typo(keywords[-1]) if keywords else "no-such-file.csv"
    with pytest.raises(InputError) as info:
        registry_lookup("task", f"stereoprobe/{task}")(**{option: value})
    text = str(info.value)
    assert "\n" not in text and f"-T {option}={value!r}" in text, text
    if keywords:
        assert f"(did you mean {keywords[-1]}" in text, text


def test_globalbias_source_through_the_check_before_the_run() -> None:
    from stereoprobe import preflight

    params = {"tasks": ("stereoprobe/globalbias",), "t": ("source=bundeld",), "task_config": None, "epochs": None,
              "run_config": None, "model": "transformers/default"}
    with pytest.raises(preflight.Refused, match=r"source='bundeld' .*\(did you mean bundled\?\)"):
        preflight.check("eval", params)


def test_plan_refuses_the_typo_with_did_you_mean(capsys) -> None:
    from stereoprobe.cli import main

    assert main(["plan", "globalbias", "-T", "source=bundeld", "--model", "transformers/default"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "(did you mean bundled?)" in err[0], err
