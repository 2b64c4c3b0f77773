"""Logs written by a newer release of their task (issue 34.3): a newer first number of ``N-X`` (results this
release may misread) is refused in one line naming the file and both versions; a newer interface only (same N)
is read, and named in the read summary and the console notes. Versions are read through
:mod:`stereoprobe.task_versions` (``N-X``, and the older ``1.2.0`` style placed by the changelog)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "stereotales"))
from _stories_fixtures import story_sample, write_log  # noqa: E402

from stereoprobe.cli import main  # noqa: E402
from stereoprobe.errors import InputError  # noqa: E402
from stereoprobe.inputs import ReadStats, iter_samples, read_headers  # noqa: E402
from stereoprobe.task_versions import current_version  # noqa: E402


def _log(folder: Path, version: object) -> Path:
    s = story_sample("en:gender:woman:1", attribute="gender", value="woman",
                     profile={"gender": "woman", "income_level": "low income", "education": "basic"})
    return write_log(folder / "run.eval", [s], version=version)


def test_a_future_first_number_is_refused_in_one_line(tmp_path, capsys) -> None:
    ours = current_version("stereotales")
    future = f"{ours.comparability + 1}-A"
    log = _log(tmp_path / "logs", future)
    with pytest.raises(InputError) as err:
        read_headers([log], "stereotales")
    assert str(log) in str(err.value) and f"version {future}" in str(err.value) and f"has {ours}" in str(err.value)
    assert main(["associations", str(tmp_path / "logs"), "--out", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"version {future}" in line and "upgrade stereoprobe" in line and not (tmp_path / "out").exists()


def test_a_newer_interface_is_read_with_a_notice(tmp_path) -> None:
    ours = current_version("stereotales")
    newer = f"{ours.comparability}-{ours.interface}A"  # AA after A: same numbers, a newer -T interface
    log = _log(tmp_path, newer)
    stats = ReadStats()
    assert len(list(iter_samples([log], "stereotales", stats=stats))) == 1
    note = f"task 'stereotales' version {newer} is newer than this stereoprobe's {ours}"
    assert note in stats.summary() and any(note in line for line in stats.partial_lines())


@pytest.mark.parametrize("version", ["current", "older", 1, "1.0.0"])
def test_current_older_and_unplaced_versions_read_without_notice(tmp_path, version) -> None:
    ours = current_version("stereotales")
    if version == "current":
        version = str(ours)
    elif version == "older" and ours.comparability > 1:
        version = f"{ours.comparability - 1}-A"
    elif version == "older":
        pytest.skip("no older N-X version")
    stats = ReadStats()
    assert len(list(iter_samples([_log(tmp_path, version)], "stereotales", stats=stats))) == 1
    assert "newer" not in stats.summary() and stats.newer_versions == []
