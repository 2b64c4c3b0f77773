"""One split of a command's inputs (``inputs.partition``), unreadable subfolders reported, and lm-eval files
of the wrong shape refused in one line (documents and results files that are not objects, fields of the
wrong type, positive log-likelihoods)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stereoprobe.errors import InputError
from stereoprobe.inputs import find_logs, iter_lm_eval_samples, partition, read_results_file

SAMPLES = "samples_globalbias_2024-01-01T00-00-00.1.jsonl"
RECORD = {"doc_id": 0, "doc": {"text": "My name is Ana, I am kind."}, "target": 0, "resps": [["-12.5", "False"]],
          "filtered_resps": ["-12.5"], "filter": "none", "metrics": ["loglikelihood"], "loglikelihood": -12.5}


def _tree(root: Path) -> dict[str, Path]:
    (root / "run" / "model").mkdir(parents=True)
    (root / ".hidden").mkdir()
    files = {
        "log": root / "run" / "a.eval",
        "json_log": root / "run" / "b.json",
        "samples": root / "run" / "model" / SAMPLES,
        "results": root / "run" / "model" / "results_2024-01-01T00-00-00.1.json",
        "csv": root / "run" / "t.csv",
        "parquet": root / "run" / "t.parquet",
        "notes": root / "run" / "notes.txt",
        "other_json": root / "run" / "config.json",
        "hidden": root / ".hidden" / "c.eval",
        "index": root / "run" / "logs.json",
    }
    files["log"].write_bytes(b"PK")
    files["json_log"].write_text('{"version": 2, "eval": {}}')
    files["samples"].write_text(json.dumps(RECORD) + "\n")
    files["results"].write_text('{"results": {}}')
    for k in ("csv", "parquet", "notes", "hidden"):
        files[k].write_text("x")
    files["other_json"].write_text('{"a": 1}')
    files["index"].write_text('{"version": 2, "eval": {}}')
    return files


def test_folders_are_split_once_by_kind(tmp_path) -> None:
    f = _tree(tmp_path)
    part = partition([tmp_path])
    assert part.logs == [f["log"], f["json_log"]]  # not the eval-set index, other JSON or dot folders
    assert part.lm_eval == [f["samples"]] and part.lm_eval_results == [f["results"]]
    assert part.tables == [f["csv"], f["parquet"]] and not part.explicit
    only = partition([tmp_path], ("logs", "tables"))
    assert only.lm_eval == only.lm_eval_results == [] and len(only.tables) == 2
    with pytest.raises(InputError, match="no DBB inputs"):
        partition([tmp_path], ("lm_eval",), lm_eval_task="dbb_mc", what="DBB inputs")


@pytest.mark.parametrize("key,kinds,fragment", [
    ("notes", ("logs", "tables"), "not one of the"),
    ("csv", ("logs", "lm_eval"), "not one of the"),
    ("samples", ("logs", "tables"), "not one of the"),
    ("index", ("logs",), "eval-set"),
])
def test_an_explicit_file_of_another_kind_is_one_line(tmp_path, key, kinds, fragment) -> None:
    f = _tree(tmp_path)
    with pytest.raises(InputError) as err:
        partition([f[key]], kinds)
    msg = str(err.value)
    assert "\n" not in msg and f[key].name in msg and fragment in msg, msg


def test_a_missing_path_is_one_line(tmp_path) -> None:
    with pytest.raises(InputError, match=r"absent: no such file or folder"):
        partition([tmp_path / "absent"])


def test_an_unreadable_subfolder_is_reported_not_skipped(tmp_path, monkeypatch) -> None:
    """chmod does not stop root, so the listing error is raised where the operating system would."""
    _tree(tmp_path)
    locked = tmp_path / "run" / "model"
    real_scandir = os.scandir

    def scandir(path=".", *a, **kw):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path, *a, **kw)

    monkeypatch.setattr(os, "scandir", scandir)
    for read in (lambda: partition([tmp_path]), lambda: find_logs([tmp_path])):
        with pytest.raises(InputError) as err:
            read()
        assert str(err.value) == f"{locked}: folder cannot be read (Permission denied)"


# ------------------------------------------------------------------------------------ lm-eval file shapes

# (case id, the samples file's first line, fragment of the one error line)
BAD_RECORDS = [
    ("document-a-list", json.dumps([RECORD]), "line 1: an lm-eval sample record is an object, this one is a list"),
    ("document-a-string", json.dumps("doc"), "line 1: an lm-eval sample record is an object"),
    ("document-not-json", "{doc_id: 0", "line 1: not an lm-eval sample record"),
    ("no-doc_id", json.dumps({k: v for k, v in RECORD.items() if k != "doc_id"}), "no field 'doc_id'"),
    ("doc_id-a-list", json.dumps({**RECORD, "doc_id": [0]}), "field 'doc_id' is a list"),
    ("resps-a-string", json.dumps({**RECORD, "resps": "-12.5"}), "field 'resps' is a str"),
    ("doc-a-list", json.dumps({**RECORD, "doc": ["My name is Ana"]}), "field 'doc' is a list"),
    ("positive-loglikelihood", json.dumps({**RECORD, "resps": [["3.5", "False"]]}), "log-likelihood 3.5 > 0"),
]


@pytest.mark.parametrize("case,line,fragment", BAD_RECORDS, ids=[c[0] for c in BAD_RECORDS])
def test_lm_eval_records_of_the_wrong_shape(tmp_path, case, line, fragment) -> None:
    p = tmp_path / case / SAMPLES
    p.parent.mkdir()
    p.write_text(line + "\n")
    with pytest.raises(InputError) as err:
        list(iter_lm_eval_samples([p]))
    msg = str(err.value)
    assert "\n" not in msg and str(p) in msg and fragment in msg, msg


@pytest.mark.parametrize("content,fragment", [
    ("[1, 2]", "is a JSON object, this one is a list"),
    ('"results"', "is a JSON object, this one is a str"),
    ('{"results": [1]}', "field 'results' of an lm-eval results file is a list"),
    ('{"results": {}, "config": "pretrained=x"}', "field 'config' of an lm-eval results file is a str"),
    ("{not json", "not a readable lm-eval results file"),
])
def test_lm_eval_results_files_of_the_wrong_shape(tmp_path, content, fragment) -> None:
    p = tmp_path / "results_2024-01-01T00-00-00.1.json"
    p.write_text(content)
    with pytest.raises(InputError) as err:
        read_results_file(p)
    assert "\n" not in str(err.value) and str(p) in str(err.value) and fragment in str(err.value)
    samples = tmp_path / SAMPLES  # the samples file of the same run names its model through the results file
    samples.write_text(json.dumps(RECORD) + "\n")
    with pytest.raises(InputError, match=fragment.split(",")[0].replace("(", r"\(")):
        list(iter_lm_eval_samples([samples]))
