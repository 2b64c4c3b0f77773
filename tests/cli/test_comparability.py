"""One comparability rule for every command that compares runs (issue 41.6).

``stereoprobe dbb`` (and globalbias, associations, profiles, judge-report) applies the leaderboard's task-version
rule (:mod:`stereoprobe.leaderboard.versions`): logs of one task at versions of different N are refused in one
line naming the runs, before anything is written, unless ``--accept-versions NOTE`` accepts them (the note goes
into ``run_info.json``). Model names are shown with invisible and direction-changing characters escaped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from eval_edit import edit_eval
from inspect_ai import eval as inspect_eval

from stereoprobe.cli import main
from stereoprobe.cli._versions import COMPARING

sys.path.insert(0, str(Path(__file__).parents[1] / "stereotales"))

RLO = "\u202e"


@pytest.fixture(scope="module")
def dbb_logs(tmp_path_factory) -> dict[str, Path]:
    """One dbb log as run (version 3-A), a copy of it recorded at 2-A by another model, and a copy whose model
    name holds a right-to-left override."""
    from fake_model import fake_model

    from stereoprobe.tasks.dbb import dbb

    raw = tmp_path_factory.mktemp("raw")
    inspect_eval(dbb(source="bundled", prompt="stereoprobe", faithful=False, categories="ses", limit_templates=2,
                     mode="logprob"), model=fake_model(), log_dir=str(raw), display="none")
    [log] = sorted(raw.glob("*.eval"))
    out = tmp_path_factory.mktemp("logs")

    def header(version: str | None, model: str) -> Any:
        def edit(h: dict[str, Any]) -> dict[str, Any]:
            if version is not None:
                h["eval"]["task_version"] = version
            h["eval"]["model"] = model
            return h
        return edit

    current = edit_eval(log, out / "current" / "a.eval", header=header(None, "fake/model-a"))
    older = edit_eval(log, out / "older" / "b.eval", header=header("2-A", "fake/model-b"))
    bidi = edit_eval(log, out / "bidi" / "c.eval", header=header(None, f"fake/gpt{RLO}4o"))
    return {"current": current, "older": older, "bidi": bidi}


def test_every_comparing_command_takes_the_option() -> None:
    from stereoprobe.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in COMPARING:
        assert "--accept-versions" in sub.choices[name].format_help(), name


def test_dbb_refuses_runs_of_different_task_versions_in_one_line(dbb_logs, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["dbb", str(dbb_logs["current"]), str(dbb_logs["older"]), "--out", str(out), "--n-boot", "20"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not comparable" in err and "--accept-versions" in err
    assert "fake/model-b (2-A, b.eval)" in err and "fake/model-a (3-A, a.eval)" in err
    assert not out.exists()


def test_dbb_compares_them_with_a_note_in_run_info(dbb_logs, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["dbb", str(dbb_logs["current"]), str(dbb_logs["older"]), "--out", str(out), "--n-boot", "20",
                 "--accept-versions", "pilot only"]) == 0
    info = json.loads((out / "run_info.json").read_text())
    assert "accepted with the note: pilot only" in info["version_note"]
    assert "accepted with the note: pilot only" in capsys.readouterr().out


def test_the_same_version_needs_no_note(dbb_logs, tmp_path) -> None:
    out = tmp_path / "out"
    assert main(["dbb", str(dbb_logs["current"]), "--out", str(out), "--n-boot", "20"]) == 0
    assert "version_note" not in json.loads((out / "run_info.json").read_text())


def test_a_right_to_left_override_in_a_model_name_is_shown_escaped(dbb_logs, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["dbb", str(dbb_logs["bidi"]), str(dbb_logs["current"]), "--out", str(out), "--n-boot", "20"]) == 0
    err = capsys.readouterr().err
    written = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*")
                      if p.is_file() and p.suffix in (".csv", ".json", ".html"))
    assert RLO not in written and "gpt\\u202e4o" in written
    assert "notice" in err and "gpt\\u202e4o" in err


def test_visible_escapes_invisible_and_bidi_characters_only() -> None:
    from stereoprobe.model_labels import model_label

    assert model_label(f"org/a{RLO}b\u200bc\u2066d\ufeff") == "org/a\\u202eb\\u200bc\\u2066d\\ufeff"
    assert model_label("org/Llama-3.1-8B-Instruct") == "org/Llama-3.1-8B-Instruct"
    assert model_label("org/modèle-日本") == "org/modèle-日本"  # letters of any script are kept
