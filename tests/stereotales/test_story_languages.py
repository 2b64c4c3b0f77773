"""Stories in a language their run does not cover (issue 34.3: such logs gave an empty analysis with exit 0):
each is counted as ``language_not_in_taxonomy`` and not analysed, with a notice on the console; when no story
is left the command ends with one line. The run's languages are its ``-T languages``, else the languages of
the taxonomy it recorded (``taxonomy_source``, when its fingerprint is the samples')."""

from __future__ import annotations

from pathlib import Path

from _stories_fixtures import ATTRS, planted_stories, story_sample, write_log
from eval_edit import edit_eval, set_path

from stereoprobe.cli import main
from stereoprobe.stereotales.mining.stories_logs import read_stories_from_logs
from stereoprobe.stereotales.taxonomy import load_taxonomy


def _log(folder: Path, languages: dict[str, int], header, fingerprint: str = "fp-1") -> Path:
    samples = []
    for lang, n in languages.items():
        frame = planted_stories(models=("mockllm/a",), languages=(lang,), per_cell=5).head(n)
        samples += [story_sample(f"{lang}:{r['sample_id']}", attribute=r["target_attribute"],
                                 value=r["attribute_value_key"], profile={a: r[a] for a in ATTRS}, language=lang,
                                 fingerprint=fingerprint) for r in frame.to_dict("records")]
    raw = write_log(folder / "raw" / "run.eval", samples)
    return edit_eval(raw, folder / "logs" / "run.eval", header=header)


def _languages(h, value):
    return set_path(h, "eval.task_args", {"languages": value})


def test_stories_outside_the_run_languages_are_counted(tmp_path) -> None:
    log = _log(tmp_path, {"en": 30, "xx": 4}, lambda h: _languages(h, ["en", "fr"]))
    st = read_stories_from_logs([log])
    assert len(st.frame) == 30 and set(st.frame["language"].astype(str)) == {"en"}
    assert st.issues["kind"].tolist() == ["language_not_in_taxonomy"] * 4
    assert "'xx' is not among the run's languages (en, fr)" in st.issues["detail"].iloc[0]


def test_the_taxonomy_recorded_by_the_run_gives_its_languages(tmp_path) -> None:
    taxonomy = load_taxonomy("bundled")
    assert "xx" not in taxonomy.languages and "en" in taxonomy.languages
    log = _log(tmp_path, {"en": 10, "xx": 2},
               lambda h: set_path(h, "eval.metadata", {"taxonomy_source": "bundled"}), taxonomy.fingerprint())
    assert read_stories_from_logs([log]).issues["kind"].tolist() == ["language_not_in_taxonomy"] * 2


def test_without_a_known_taxonomy_the_language_is_not_checked(tmp_path) -> None:
    log = _log(tmp_path, {"xx": 6}, lambda h: set_path(h, "eval.metadata", {"taxonomy_source": "bundled"}))
    assert len(read_stories_from_logs([log]).frame) == 6  # fingerprint fp-1 is not the bundled taxonomy's


def test_console_notice_and_one_line_when_nothing_is_left(tmp_path, capsys) -> None:
    some = _log(tmp_path / "a", {"en": 30, "xx": 3}, lambda h: _languages(h, "en"))
    assert main(["associations", str(some.parent), "--out", str(tmp_path / "out"), "--resamples", "200",
                 "--no-report"]) == 0
    assert "3 sample(s) not analysed (language_not_in_taxonomy: 3" in capsys.readouterr().out
    none = _log(tmp_path / "b", {"xx": 5}, lambda h: _languages(h, "en"))
    assert main(["associations", str(none.parent), "--out", str(tmp_path / "out2")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "no usable stories" in line and "language_not_in_taxonomy" in line and not (tmp_path / "out2").exists()


def test_associations_compares_runs_of_two_task_versions_with_the_note(tmp_path, capsys) -> None:
    """``stereoprobe associations`` applies the one comparability rule (issue 41.6): logs at 3-A and 4-A are
    refused in one line without ``--accept-versions``, analysed with it (the note in run_info.json)."""
    import json

    for name, version in (("a", "3-A"), ("b", "4-A")):  # two models (one model's two versions: one run twice)
        _log(tmp_path / name, {"en": 30},
             lambda h, v=version, m=name: set_path(set_path(h, "eval.task_version", v), "eval.model", f"mockllm/{m}"))
    logs = [str(tmp_path / "a" / "logs"), str(tmp_path / "b" / "logs")]
    assert main(["associations", *logs, "--out", str(tmp_path / "refused")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "not comparable" in line and "(3-A, run.eval)" in line and "(4-A, run.eval)" in line
    out = tmp_path / "out"
    assert main(["associations", *logs, "--out", str(out), "--resamples", "200", "--no-report",
                 "--accept-versions", "pilot only"]) == 0
    info = json.loads((out / "run_info.json").read_text())
    assert "accepted with the note: pilot only" in info.get("version_note", ""), (info, capsys.readouterr())
