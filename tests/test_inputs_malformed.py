"""Malformed values end in one line naming the file, field or row, never a traceback (issue 28.4), and a
stories release with 10,000 attribute keys is refused at once instead of mining for hours (issue 28.5)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.errors import InputError


def _run(argv: list[str], capsys) -> tuple[int, str]:
    rc = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


def test_a_perplexity_of_1e308_names_the_sentence():
    from stereoprobe.globalbias.apx import apx

    df = pd.DataFrame({"group": ["A", "A", "B", "B"], "template": [1] * 4, "name": ["x", "y", "z", "w"],
                       "descriptor": ["kind"] * 4, "ppl": [10.0, 12.0, 1e308, 11.0]})
    with pytest.raises(InputError, match=r"group 'A', template 1: .* 1e\+308 \(group 'B', name 'z', descriptor 'kind'\)"):
        apx(df)


def test_a_wide_and_a_long_table_mixed_is_one_line(tmp_path, capsys):
    table = tmp_path / "mixed.csv"
    table.write_text("group,descriptor,template,ppl,ppl_1,name\nARAB_F,kind,1,10,11,a\n", encoding="utf-8")
    rc, err = _run(["globalbias", str(table), "--out", str(tmp_path / "out")], capsys)
    assert rc != 0 and "mixes the wide layout (columns ppl_1) with the long one (column(s) template, ppl)" in err
    assert not (tmp_path / "out").exists()


def test_truncated_dbb_score_lists_are_one_line():
    from stereoprobe.dbb import contract as C
    from stereoprobe.dbb.results import _group_rows

    meta = {C.GROUP_IDS: ["q1", "q2", "q3"], C.GROUP_A: [0.1, 0.2], C.GROUP_ERRORS: [None, None, None]}
    with pytest.raises(InputError, match=r"x.eval: sample 't1': score metadata lists differ in length "
                                         r"\(question_ids 3, a 2, valid 3, errors 3\)"):
        _group_rows(meta, "m", "sg", {}, 1, {"ids": set()}, "x.eval: sample 't1'")
    meta = {C.GROUP_IDS: ["q1"], C.GROUP_A: [[0.1, 0.2]], C.GROUP_VALID: [[1.0]], C.GROUP_ERRORS: [None]}
    with pytest.raises(InputError, match=r"question 'q1': score metadata lists 'a' \(2\) and 'valid' \(1\)"):
        _group_rows(meta, "m", "mcq-logprob", {}, 2, {"ids": set(), "responses": 0}, "x.eval: sample 't1'")


def test_a_deeply_nested_json_log_is_refused_before_parsing(tmp_path):
    from stereoprobe.inputs import iter_samples

    depth = 80_000  # a 400 kB file: inspect's streaming reader exhausted 3 GB on it
    log = tmp_path / "deep.json"
    log.write_text('{"version": 2, "eval": {"task": "tiny", "x": ' + '{"a":' * depth + "1" + "}" * depth + "}}",
                   encoding="utf-8")
    with pytest.raises(InputError, match=r"deep.json: JSON nested deeper than 512 levels at byte"):
        list(iter_samples([log], "tiny"))


def test_the_depth_scan_follows_strings_and_escapes(tmp_path):
    from stereoprobe.logs import json_depth_exceeds

    p = tmp_path / "x.json"
    p.write_text(json.dumps({"s": "[[[[ \\\" {{{{", "t": [[["\\\\"]]]}), encoding="utf-8")
    assert json_depth_exceeds(p, 4) is None and json_depth_exceeds(p, 3) is not None  # {, [, [, [


def test_run_info_whose_models_is_a_number_is_one_line(tmp_path):
    from stereoprobe.report.run_info import read_run_info

    (tmp_path / "run_info.json").write_text(json.dumps({"probe": "dbb", "models": 3}), encoding="utf-8")
    with pytest.raises(InputError, match=r"run_info.json: field 'models' is 3, expected a list of model names"):
        read_run_info(tmp_path)


def test_a_non_utf8_byte_in_out_is_one_line(tmp_path, capsys):
    table = tmp_path / "long.csv"
    table.write_text("group,descriptor,template,ppl,name\nARAB_F,kind,1,10,a\n", encoding="utf-8")
    out = str(tmp_path) + "/o\udcffut"  # os.fsdecode(b"o\xffut")
    rc, err = _run(["globalbias", str(table), "--out", out], capsys)
    assert rc != 0 and "holds a byte that is not UTF-8" in err and len(err.strip().splitlines()) == 1


def test_ten_thousand_attribute_keys_are_refused_at_once(tmp_path):
    from stereoprobe.stereotales.mining.stories_release import _release_file_stories

    keys = {f"k{i}": "v" for i in range(10_000)}
    df = pd.DataFrame({"generator_model": ["m"] * 3, "language": ["en"] * 3, "target_attribute": ["k0"] * 3,
                       "attribute_value_key": ["v"] * 3, "scenario_key": ["s"] * 3,
                       "extracted_attributes_json": [json.dumps(keys)] * 3, "sample_id": ["a", "b", "c"]})
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"release.csv: the stories' extracted_attributes_json use 10,000 attribute "
                                         r"keys .* at most 100"):
        _release_file_stories(tmp_path / "release.csv", df)
    assert time.perf_counter() - start < 30


def test_mining_refuses_more_attributes_than_the_bound():
    from stereoprobe.stereotales.mining.associations import mine_associations

    attrs = [f"a{i}" for i in range(101)]
    frame = pd.DataFrame({"model": ["m"], "target_attribute": ["a0"], **{a: ["x"] for a in attrs}})
    with pytest.raises(InputError, match=r"101 attribute keys .* at most 100"):
        mine_associations(frame, attrs)
