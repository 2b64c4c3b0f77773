"""Bad input to ``stereoprobe associations`` and ``stereoprobe taxonomy``: one line naming the file, field or
option, exit code 2, no traceback, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from stereoprobe.cli import main

HEADER = "generator_model,language,target_attribute,attribute_value_key,scenario_key,extracted_attributes_json\n"


def _files(d: Path) -> None:
    (d / "garbage.eval").write_bytes(b"not a zip")
    (d / "latin1.csv").write_bytes(b"\xff\xfe\x00bad")
    (d / "empty.csv").write_bytes(b"")
    (d / "bad_json.csv").write_text(HEADER + "m,en,gender,man,s,{bad\n", encoding="utf-8")
    (d / "few_columns.csv").write_text("generator_model,language\nm,en\n", encoding="utf-8")
    (d / "empty_value.csv").write_text(HEADER + 'm,en,gender,,s,"{""gender"": ""man""}"\n', encoding="utf-8")
    (d / "not.parquet").write_bytes(b"PAR0 not parquet")
    (d / "notes.txt").write_text("hello", encoding="utf-8")
    (d / "a_file").write_text("x", encoding="utf-8")
    (d / "latin1.yaml").write_bytes(b"\xff\xfe")
    (d / "list.yaml").write_text("- a\n- b\n", encoding="utf-8")
    es = d / "eval_set"
    es.mkdir()
    (es / "eval-set.json").write_text("{}", encoding="utf-8")
    (es / "logs.json").write_text("{}", encoding="utf-8")


CASES = [
    (["associations", "garbage.eval"], "garbage.eval"),
    (["associations", "latin1.csv"], "latin1.csv: not UTF-8"),
    (["associations", "empty.csv"], "empty.csv: empty file"),
    (["associations", "bad_json.csv"], "bad_json.csv: row 0"),
    (["associations", "few_columns.csv"], "few_columns.csv: release table lacks column"),
    (["associations", "empty_value.csv"], "empty 'attribute_value_key'"),
    (["associations", "not.parquet"], "not.parquet: not a readable Parquet file"),
    (["associations", "notes.txt"], "notes.txt: not an eval log"),
    (["associations", "missing.eval"], "missing.eval: no such file"),
    (["associations", "eval_set"], "no StereoTales inputs (inspect logs .eval/.json, tables .csv/.parquet) in eval_set"),
    (["associations", "eval_set/eval-set.json"], "eval-set.json: an 'inspect eval-set' index file"),
    (["associations", "bad_json.csv", "--alpha", "nan"], "--alpha"),
    (["associations", "bad_json.csv", "--alpha", "1.5"], "--alpha"),
    (["associations", "bad_json.csv", "--min-row-sum", "0"], "--min-row-sum"),
    (["associations", "bad_json.csv", "--resamples", "-1"], "--resamples"),
    (["associations", "bad_json.csv", "--bootstrap", "-2"], "--bootstrap"),
    (["associations", "bad_json.csv", "--examples", "-1"], "--examples"),
    (["associations", "bad_json.csv", "--excerpt-chars", "0"], "--excerpt-chars"),
    (["associations", "bad_json.csv", "--min-lift", "nan"], "--min-lift"),
    (["associations", "bad_json.csv", "--max-p-by", "0"], "--max-p-by"),
    (["associations", "bad_json.csv", "--ci-level", "1"], "--ci-level"),
    (["associations", "bad_json.csv", "--jobs", "0"], "--jobs"),
    (["associations", "bad_json.csv", "--effects", "huge"], "--effects"),
    (["associations", "bad_json.csv", "--p-method", "magic"], "--p-method"),
    (["associations", "bad_json.csv", "--family", "world"], "--family"),
    (["taxonomy", "missing_taxonomy.yaml"], "missing_taxonomy.yaml"),
    (["taxonomy", "latin1.yaml"], "latin1.yaml: not UTF-8"),
    (["taxonomy", "list.yaml"], "list.yaml: expected a mapping"),
    (["taxonomy", "notes.txt"], "notes.txt: a taxonomy file must be YAML"),
    (["taxonomy", "bundled", "--languages", "xx"], "language 'xx'"),
    (["taxonomy", "bundled", "--languages", ","], "--languages"),
    (["taxonomy", "bundled", "--show-prompt", "nope"], "no sample 'nope'"),
    (["taxonomy", "bundled", "--show-extraction-prompt", "other"], "--show-extraction-prompt"),
    (["taxonomy", "bundled", "--prompts", "eval_set"], "is a folder"),
]


@pytest.mark.parametrize("argv, needle", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, monkeypatch, capsys, argv, needle) -> None:
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    if argv[0] == "associations":
        argv = [*argv, "--out", "out"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured.err
    assert needle in lines[0] and "Traceback" not in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no output folder, no lock or temp files


def test_out_that_is_a_file_is_refused(tmp_path: Path, monkeypatch, capsys) -> None:
    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["associations", "bad_json.csv", "--out", "a_file"]) == 2
    err = capsys.readouterr().err.strip()
    assert "a_file" in err and "not a folder" in err and len(err.splitlines()) == 1
