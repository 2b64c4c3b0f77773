"""The default profile prompt is upstream's BIAS_PROMPT, read from the pinned notebook at run time; offline
without it, one line names the option of our own wording. (Byte-for-byte checks against the real notebooks:
tests/conformance/test_globalbias_profiles.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stereoprobe.errors import InputError
from stereoprobe.globalbias.profiles_parse import PROMPT_NOTEBOOK, build_prompt, profile_prompt
from stereoprobe.upstream import UpstreamDataError, notebook_string


def _notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    nb = {"cells": [{"cell_type": kind, "source": src.splitlines(keepends=True)} for kind, src in cells]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_notebook_string_reads_the_assignment_without_running_anything(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "n.ipynb", [("markdown", 'P = """not code"""'), ("code", "!pip install x"),
                                          ("code", 'import os\nP = """\nHi {list_of_names}\n"""\nprint(P)')])
    assert notebook_string(nb, "P") == "\nHi {list_of_names}\n"
    with pytest.raises(UpstreamDataError, match="no code cell assigns a string to Q"):
        notebook_string(nb, "Q")


def test_local_notebook_is_filled_as_the_notebooks_do(tmp_path: Path) -> None:
    _notebook(tmp_path / "GlobalBias" / PROMPT_NOTEBOOK, [("code", 'BIAS_PROMPT = """\nNames:\n{list_of_names}\n"""')])
    prompt = profile_prompt("upstream", tmp_path / "GlobalBias", verify=False)
    # json.dumps with its defaults, as the notebooks call it: ASCII escapes, ", " separators
    assert prompt.render(["Zoë", "Bo"]) == '\nNames:\n["Zo\\u00eb", "Bo"]\n'
    with pytest.raises(UpstreamDataError, match="checksum mismatch"):
        profile_prompt("upstream", tmp_path / "GlobalBias")


def test_offline_without_the_notebook_names_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    with pytest.raises(InputError, match=r"-T prompt=stereoprobe") as err:
        profile_prompt("upstream", "bundled")
    assert "\n" not in str(err.value)
    ours = profile_prompt("stereoprobe", "bundled")
    assert ours.kind == "stereoprobe" and build_prompt(["Zoë"], ours) == build_prompt(["Zoë"])
    assert '["Zoë"]' in build_prompt(["Zoë"])
