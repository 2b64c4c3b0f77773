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
