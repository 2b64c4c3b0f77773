"""``stereoprobe tasks`` (issue 35.10): every inspect task of stereoprobe, one line each with its -T parameters,
read from the task modules without importing them; its parameters are the ones inspect sees."""

from __future__ import annotations

import re

import pytest

from stereoprobe.cli import main


def _registered() -> dict[str, list[str]]:
    import stereoprobe._registry  # noqa: F401 (registers the tasks with inspect)
    from inspect_ai._util.registry import registry_lookup

    from stereoprobe.preflight import task_names
    from stereoprobe.strict_params import parameters

    return {n: list(parameters(registry_lookup("task", f"stereoprobe/{n}")).parameters) for n in task_names()}


def test_the_listing_names_every_task_with_inspects_parameters(capsys) -> None:
    assert main(["tasks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = {}
    for text in lines:
        name, _, params = text.partition("  -T ")
        listed[name.removeprefix("stereoprobe/")] = [p.split("=", 1)[0] for p in params.split()]
    assert listed == _registered()
    assert not any(re.search(r"=[A-Z]+\.\w", text) for text in lines), lines  # defaults shown as values


def test_one_task_shows_each_parameter_with_its_default_and_description(capsys) -> None:
    assert main(["tasks", "stereoprobe/globalbias"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("stereoprobe/globalbias: GlobalBias")
    groups = next(x for x in out if x.strip().startswith("-T groups="))
    assert "restrict to groups" in groups
    source = next(x for x in out if x.strip().startswith("-T source=upstream"))
    assert "the paper's data" in source


def test_a_misspelt_task_gets_the_closest(capsys) -> None:
    assert main(["tasks", "globalbais"]) == 2
    err = capsys.readouterr().err
    assert "no task 'globalbais' (did you mean globalbias" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("name", ["dbb", "stereotales"])
def test_module_constants_are_shown_as_their_values(capsys, name: str) -> None:
    assert main(["tasks", name]) == 0
    out = capsys.readouterr().out
    assert "-T source=upstream" in out or "-T languages=all" in out
