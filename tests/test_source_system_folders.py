"""A ``-T source=`` (or ``local=``, ``taxonomy=``) path at a system folder is refused in one line before any
look-up (issue 34.6: a system folder hung), and a file where a folder is expected is named as such."""

from __future__ import annotations

import pytest

from stereoprobe.upstream import UpstreamDataError, check_local_folder, fetch, sources


@pytest.mark.parametrize("folder", ["/", "/proc", "/usr", "/sys", "/dev", "/proc/self", "/proc/../usr/"])
def test_system_folders_are_refused(folder) -> None:
    key = next(iter(sources()))
    path = next(iter(sources()[key].files))
    with pytest.raises(UpstreamDataError) as err:
        fetch(key, path, local=folder)
    assert "is a system folder" in str(err.value) and "\n" not in str(err.value)


def test_a_file_is_not_a_folder(tmp_path) -> None:
    f = tmp_path / "x.csv"
    f.write_text("a\n")
    with pytest.raises(UpstreamDataError, match="is not a folder"):
        check_local_folder(f, "GlobalBias")
    check_local_folder(tmp_path, "GlobalBias")  # an ordinary folder passes


@pytest.mark.parametrize("task,folder", [("globalbias", "/usr"), ("dbb", "/")])
def test_tasks_refuse_a_system_folder_source(task, folder) -> None:
    import importlib

    make = getattr(importlib.import_module(f"stereoprobe.tasks.{task}"), task)
    with pytest.raises(Exception) as err:
        make(source=folder)
    assert "is a system folder" in str(err.value) and "\n" not in str(err.value).strip()
