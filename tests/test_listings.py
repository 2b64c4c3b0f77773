"""The probes' eval.yaml listings beside their tasks, and the one place of a task's version."""

from __future__ import annotations

import importlib

import pytest
import yaml

from stereoprobe.errors import InputError
from stereoprobe.listings import listing_names, listing_path, load_listing, task_version, tasks_dir
from stereoprobe.probes import registered


def test_every_probe_listing_sits_beside_the_tasks():
    assert listing_names() == ["dbb", "globalbias", "stereotales"]
    for probe in listing_names():
        assert listing_path(probe).parent == tasks_dir() and (tasks_dir() / f"{probe}.py").is_file()
    assert {d.listing for d in registered() if d.listing} == set(listing_names())


def test_task_version_is_the_listing_entry_else_the_listing_version():
    for probe in listing_names():
        raw = yaml.safe_load(listing_path(probe).read_text(encoding="utf-8"))  # read here, not through the module
        for entry in raw["tasks"]:
            assert task_version(entry["name"]) == str(entry.get("version", raw["version"])), entry["name"]


@pytest.mark.parametrize("module, task", [("dbb", "dbb"), ("dbb_build", "dbb_build_concepts"),
                                          ("globalbias", "globalbias"), ("globalbias_profiles", "globalbias_profiles"),
                                          ("stereotales", "stereotales"), ("stereotales_judge", "stereotales_judge")])
def test_task_modules_take_their_version_from_the_listing(module, task):
    mod = importlib.import_module(f"stereoprobe.tasks.{module}")
    raw = {e["name"]: e for p in listing_names()
           for e in yaml.safe_load(listing_path(p).read_text(encoding="utf-8"))["tasks"]}
    assert task in raw
    assert mod.TASK_VERSION == task_version(task)


def test_unknown_task_or_listing_is_one_clear_error():
    with pytest.raises(InputError, match="no_such_task"):
        task_version("no_such_task")
    with pytest.raises(InputError, match="no listing"):
        load_listing("no_such_probe")


def test_a_loaded_listing_is_a_copy():
    a = load_listing("dbb")
    a["title"] = "changed"
    assert load_listing("dbb")["title"] != "changed"


def _defaults(task: str) -> dict:
    """The task's own defaults, read from its signature (so the test follows a changed default)."""
    import stereoprobe._registry  # noqa: F401 - registers the tasks
    from inspect_ai._util.registry import registry_find

    from stereoprobe.strict_params import parameters

    # stereoprobe's registered task (another test in the same worker may register a task file of its own that
    # inspect names without the package prefix, e.g. a toy probe's or a file loaded by path)
    [fn] = registry_find(lambda i: i.type == "task" and i.name == f"stereoprobe/{task}")
    return {k: p.default for k, p in parameters(fn).parameters.items()}


def test_listed_parameter_defaults_are_the_task_signatures():
    checked = 0
    for probe in listing_names():
        raw = yaml.safe_load(listing_path(probe).read_text(encoding="utf-8"))
        first = raw["tasks"][0]["name"]
        for entry in raw.get("parameters") or []:
            task = entry.get("task", first)  # a parameter of the listing's first task unless named
            defaults = _defaults(task)
            where = f"{listing_path(probe).name}: parameter {entry['name']} of {task}"
            assert entry["name"] in defaults, f"{where}: the task has no such parameter"
            assert "default" in entry, f"{where}: no default"
            assert entry["default"] == defaults[entry["name"]], (
                f"{where}: listed default {entry['default']!r}, the task's is {defaults[entry['name']]!r}")
            checked += 1
    assert checked >= 10

