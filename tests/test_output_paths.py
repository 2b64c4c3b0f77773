"""``stereoprobe.output_paths``: which output paths are refused, and label-derived file names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stereoprobe.errors import InputError
from stereoprobe.output_paths import (
    MAX_NAME,
    check_not_an_input,
    check_output_dir,
    check_output_file,
    safe_file_name,
)

# ------------------------------------------------------------------------------------- label -> file name

HOSTILE = [
    "..", ".", "../..", "../../etc/passwd", "/etc/passwd", "/", "a/../../b", "./x", ".hidden", "a\0b", "\0",
    "x" * 300, "ü" * 300, "é/" * 150, "", " ", "model\n", "con", "a\\..\\b", "C:\\Windows", "$x^2$", "a" + "/" * 40,
    "a//b", "org/", "/org", "a_/b", "a/_b", "a__b", "a/b", "a.b/c-d", "~", "~/x", "-rf", "*", "?", "%2e%2e",
]


@pytest.mark.parametrize("label", HOSTILE, ids=[repr(x)[:30] for x in HOSTILE])
def test_a_label_becomes_a_name_inside_its_folder(label: str, tmp_path: Path) -> None:
    name = safe_file_name(label)
    assert name and len(name) <= MAX_NAME
    assert "/" not in name and "\\" not in name and "\0" not in name and not name.startswith((".", "-"))
    assert name not in (".", "..")
    p = (tmp_path / f"{name}.json").resolve()
    assert p.parent == tmp_path.resolve()
    p.write_text("{}")  # the file system takes it (no "file name too long")
    assert safe_file_name(label) == name  # stable


def test_distinct_labels_get_distinct_names() -> None:
    labels = HOSTILE + ["a/b", "a__b", "a_b", "a b", "a:b", "A/b", "x" * 299, "x" * 301, "org/model", "org__model"]
    names = {safe_file_name(x) for x in set(labels)}
    assert len(names) == len(set(labels))


@pytest.mark.parametrize("label, name", [("openai/gpt-4o", "openai__gpt-4o"), ("m1", "m1"),
                                         ("hf/Org/Model-7B.v2", "hf__Org__Model-7B.v2")])
def test_plain_model_ids_keep_their_readable_name(label: str, name: str) -> None:
    assert safe_file_name(label) == name


# ----------------------------------------------------------------------------------------- output paths


@pytest.fixture
def place(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_dir").mkdir()
    os.symlink(tmp_path / "a_dir", tmp_path / "link_to_dir")
    os.symlink(tmp_path / "a_file", tmp_path / "link_to_file")
    os.symlink(tmp_path / "absent", tmp_path / "dangling")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    return tmp_path


DIR_REFUSED = [
    ("", "empty path"), ("   ", "empty path"), ("/", "file-system root"), (".", "current folder"),
    ("..", "current folder"), ("{T}", "current folder"), ("{T}/a_file", "not a folder"),
    ("{T}/a_file/sub", "is a file, not a folder"), ("/dev/null", "device"), ("{T}/fifo", "named pipe"),
    ("{T}/dangling", "symbolic link to nothing"), ("bad\0name", "NUL"),
]
FILE_REFUSED = [
    ("", "empty path"), ("/", "file-system root"), (".", "current folder"), ("{T}/a_dir", "is a folder"),
    ("{T}/link_to_file", "symbolic link"), ("{T}/dangling", "symbolic link"), ("/dev/full", "device"),
    ("/dev/null", "device"), ("{T}/fifo", "named pipe"), ("{T}/a_file/x.csv", "is a file, not a folder"),
]


@pytest.mark.parametrize("text, message", DIR_REFUSED, ids=[t for t, _ in DIR_REFUSED])
def test_output_folders_refused(text: str, message: str, place: Path) -> None:
    with pytest.raises(InputError, match=message):
        check_output_dir(text.replace("{T}", str(place)))


@pytest.mark.parametrize("text, message", FILE_REFUSED, ids=[t for t, _ in FILE_REFUSED])
def test_output_files_refused(text: str, message: str, place: Path) -> None:
    with pytest.raises(InputError, match=message):
        check_output_file(text.replace("{T}", str(place)))


def test_a_link_to_a_folder_is_followed(place: Path) -> None:
    assert check_output_dir(place / "link_to_dir") == (place / "a_dir").resolve()
    assert check_output_dir(place / "new" / "deep") == place / "new" / "deep"
    assert check_output_file(place / "a_file") == place / "a_file"


@pytest.mark.parametrize("out, inputs, ok_inside, message", [
    ("{T}/a_dir", ["{T}/a_dir"], False, "is also an input"),
    ("{T}/a_file", ["{T}/a_file"], True, "is also an input"),
    ("{T}/link_to_dir", ["{T}/a_dir"], False, "is also an input"),  # the same folder through a link
    ("{T}/a_dir/res", ["{T}/a_dir"], False, "inside the input folder"),
    ("{T}/link_to_dir/res", ["{T}/a_dir"], False, "inside the input folder"),
    ("{T}/a_dir/x/y", ["{T}/a_file", "{T}/a_dir"], False, "inside the input folder"),
    ("{T}/a_dir", ["{T}/a_dir"], True, "is also an input"),  # equal is refused even where inside is fine
])
def test_outputs_that_are_inputs(out, inputs, ok_inside, message, place: Path) -> None:
    fill = [i.replace("{T}", str(place)) for i in inputs]
    with pytest.raises(InputError, match=message):
        check_not_an_input(out.replace("{T}", str(place)), fill, inside_inputs_ok=ok_inside)


def test_inputs_inside_the_output_and_siblings_are_fine(place: Path) -> None:
    check_not_an_input(place / "a_dir", [place / "a_dir" / "logs", place / "a_file"])
    check_not_an_input(place / "out", [place / "a_dir"])
    check_not_an_input(place / "a_dir" / "lb", [place / "a_dir"], inside_inputs_ok=True)
