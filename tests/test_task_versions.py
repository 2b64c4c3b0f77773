"""Task versions follow inspect_evals' N-X scheme and every listed task has a changelog placing older logs."""

from __future__ import annotations

import pytest

from stereoprobe.listings import listing_names, load_listing, task_version
from stereoprobe.task_versions import (
    TaskVersion, changelog, comparability, current_version, log_version, parse_version, version_status,
)


def _tasks() -> list[str]:
    return [e["name"] for p in listing_names() for e in load_listing(p)["tasks"]]


@pytest.mark.parametrize("task", _tasks())
def test_every_task_is_n_x_and_heads_its_changelog(task: str) -> None:
    ours = current_version(task)
    log = changelog(task)
    assert log, task
    assert log[0]["version"] == task_version(task) == str(ours)
    versions = [parse_version(e["version"]) for e in log]
    assert None not in versions and versions == sorted(versions, reverse=True), task
    for newer, older in zip(log, log[1:]):
        moved = parse_version(newer["version"]).comparability != parse_version(older["version"]).comparability
        assert (newer["numbers"] == "changed") == moved, (task, newer)
    assert log[-1]["numbers"] == "first" and all(e["numbers"] != "first" for e in log[:-1]), task
    assert all(e.get("note") for e in log)


def test_parse_and_order() -> None:
    assert parse_version("2-C") == TaskVersion(2, "C")
    for bad in ("1.2.0", "2", "2-c", "-A", "0-A", 3, None, "2-A-1"):
        assert parse_version(bad) is None, bad
    assert TaskVersion(2, "Z") < TaskVersion(2, "AA") < TaskVersion(3, "A")


def test_older_logs_are_placed_by_the_changelog() -> None:
    # the stereotales releases before the N-X scheme recorded 1.0.0, 1.1.0, 1.2.0 (listing history)
    assert [comparability("stereotales", v) for v in ("1.0.0", "1.1.0", "1.2.0")] == [1, 2, 3]
    assert log_version("globalbias", "1.1.0") == TaskVersion(1, "B")
    assert comparability("globalbias", "1.0.0") == comparability("globalbias", "1-B") == 1
    assert comparability("stereotales", "7.7.7") is None


def test_status_current_older_future_unknown() -> None:
    ours = current_version("dbb")
    assert version_status("dbb", str(ours)) == "current"
    assert version_status("dbb", "2.0.0") == "older"
    assert version_status("dbb", f"{ours.comparability + 1}-A") == "future"
    assert version_status("dbb", f"{ours.comparability}-{ours.interface}A") == "future"
    assert version_status("dbb", 0) == "unknown"
    assert version_status("no_such_task", "1-A") == "unknown"


def test_the_docs_page_lists_every_changelog_entry() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "versions.md").read_text(encoding="utf-8")
    for task in _tasks():
        section = page[page.index(f"### `{task}`"):]
        section = section[:section.index("\n### ")] if "\n### " in section else section
        for entry in changelog(task):
            was = entry.get("was") or "—"
            row = f"| {entry['version']} | {was} | {entry['numbers']} | {entry['note']} |"
            assert row in section, (task, row)
