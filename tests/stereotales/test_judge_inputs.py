"""Judge post-processing on real log folders: retries, eval-set folders, bad inputs, task parameters."""

from __future__ import annotations

from functools import partial

import os
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval, eval_set
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.stereotales.judge import association_id
from stereoprobe.stereotales.judge.ratings import read_judge_ratings
from stereoprobe.tasks.stereotales_judge import stereotales_judge as published_stereotales_judge

# mock judges, offline: flare's base settings (temperature 1, 4096 tokens) without the pinned run configuration;
# the per-model settings and the published prompt are checked by tests/conformance/test_stereotales_judge.py
stereotales_judge = partial(published_stereotales_judge, run_settings="none", prompt="bundled")

ROWS = "model,slice,base_attribute,base_value,compared_attribute,compared_value\n" + "\n".join([
    "mockllm/a,all,income_level,low,education,basic",
    "mockllm/a,all,age,child,employment_status,student",
    "mockllm/b,all,religion,Muslim,literacy_status,literate",
]) + "\n"
CHILD = association_id("age", "child", "employment_status", "student")
TABLES = ("judge_ratings", "judge_evaluator_ratings", "judge_summary", "harm_labels", "alignment_agreement",
          "alignment_top_score", "judge_provider_counts")


def judge(fail: set[str] = frozenset()):  # type: ignore[assignment]
    """A mockllm judge rating by the prompt; raises (an errored sample) for associations named in ``fail``."""

    def fn(input, tools, tool_choice, config):  # noqa: A002 — mockllm callable signature
        prompt = input[-1].text.split("In the generated stories")[1]
        if any(k in prompt for k in fail):
            raise RuntimeError("provider unavailable")
        rating = 5 if "Income Level is low" in prompt else 2 if "Age is child" in prompt else 4
        o = ModelOutput.from_content(model="mockllm/a", content=f"Harmful: {rating}\nRealism: Yes")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    return fn


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    d = tmp_path_factory.mktemp("judge_inputs")
    (d / "assoc.csv").write_text(ROWS)
    task = lambda: stereotales_judge(associations=str(d / "assoc.csv"), epochs=2)  # noqa: E731
    # uninterrupted run
    eval(task(), model=get_model("mockllm/a", custom_outputs=judge()), display="none", log_dir=str(d / "full"))
    # an interrupted run (the child association failed), then a retry of the failed samples into the same folder
    eval(task(), model=get_model("mockllm/a", custom_outputs=judge({"Age is child"})), display="none",
         log_dir=str(d / "retried"), fail_on_error=False)
    eval(task(), model=get_model("mockllm/a", custom_outputs=judge()), display="none", log_dir=str(d / "retried"),
         sample_id=[CHILD])
    # only the interrupted run
    eval(task(), model=get_model("mockllm/a", custom_outputs=judge({"Age is child"})), display="none",
         log_dir=str(d / "partial"), fail_on_error=False)
    # an inspect eval-set folder (eval-set.json and logs.json beside the logs)
    ok, _ = eval_set(task(), model=get_model("mockllm/a", custom_outputs=judge()), display="none",
                     log_dir=str(d / "evalset"))
    assert ok
    return d


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    return {t: pd.read_csv(out / f"{t}.csv") for t in TABLES}


def test_retry_gives_the_tables_of_an_uninterrupted_run(folders, tmp_path):
    assert len(list((folders / "retried").glob("*.eval"))) == 2
    assert main(["judge-report", str(folders / "full"), "--out", str(tmp_path / "full")]) == 0
    assert main(["judge-report", str(folders / "retried"), "--out", str(tmp_path / "retried")]) == 0
    full, retried = _tables(tmp_path / "full"), _tables(tmp_path / "retried")
    for name in TABLES:
        pd.testing.assert_frame_equal(full[name], retried[name], check_like=False, obj=name)
    read = read_judge_ratings([folders / "retried"])
    assert read.superseded == 2 and read.errors == {}  # the two errored epochs of CHILD are superseded


def test_interrupted_run_counts_errors_and_never_rates_them(folders, tmp_path):
    read = read_judge_ratings([folders / "partial"])
    assert CHILD not in set(read.table.association_id) and read.errors == {"mockllm/a": 2}
    assert main(["judge-report", str(folders / "partial"), "--out", str(tmp_path / "o")]) == 0
    summary = pd.read_csv(tmp_path / "o" / "judge_summary.csv")
    assert summary.errors.tolist() == [2] and summary.associations.tolist() == [2]
    assert "2 error samples not scored" in (tmp_path / "o" / "judge_report.html").read_text()


def test_eval_set_folder(folders, tmp_path):
    assert (folders / "evalset" / "eval-set.json").is_file()
    assert main(["judge-report", str(folders / "evalset"), "--out", str(tmp_path / "o")]) == 0
    full = pd.read_csv(tmp_path / "o" / "judge_ratings.csv")
    assert len(full) == 3 * 2 and set(full.association_id) == set(read_judge_ratings([folders / "full"]).table.association_id)


BAD_HUMAN = "participant_id,association_id,harm\np1,x,9\n"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--human", "{bad_human}"], "bad_human.csv: row 2: harm='9'"),
        (["--human", "{missing}"], "no such file"),
        (["--associations", "{empty_json}"], "empty.json: not valid JSON"),
        (["--associations", "{no_cols}"], "no_cols.csv: missing column(s)"),
        (["--language-groups", "{bad_groups}"], "groups.yaml: languages.fr"),
        (["--threshold", "nan"], "finite"),
        (["--threshold", "7"], "from 1 to 5"),
        (["--confidence", "1.5"], "strictly between 0 and 1"),
        (["--bootstrap", "0"], "from 1 to"),
        (["--reliability-resamples", "-1"], "from 0 to"),
        (["--dimension", "diagonal"], "invalid choice"),
        (["--human", "{nonutf8}"], "UTF-8"),
        (["--human", "{header_only}"], "no ratings"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(folders, tmp_path, capsys, extra, message):
    files = {
        "bad_human": tmp_path / "bad_human.csv", "missing": tmp_path / "missing.csv", "empty_json": tmp_path / "empty.json",
        "no_cols": tmp_path / "no_cols.csv", "bad_groups": tmp_path / "groups.yaml", "nonutf8": tmp_path / "latin1.csv",
        "header_only": tmp_path / "header.csv",
    }
    files["bad_human"].write_text(BAD_HUMAN)
    files["empty_json"].write_text("")
    files["no_cols"].write_text("a,b\n1,2\n")
    files["bad_groups"].write_text("languages:\n  fr:\n    minority: {religion: [Muslim]}\n")
    files["nonutf8"].write_bytes("participant_id,association_id,harm\np\xe9,x,3\n".encode("latin-1"))
    files["header_only"].write_text("participant_id,association_id,harm\n")
    out = tmp_path / "out"
    args = ["judge-report", str(folders / "full"), "--out", str(out), *[a.format(**files) for a in extra]]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_bad_input_keeps_earlier_results(folders, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["judge-report", str(folders / "full"), "--out", str(out)]) == 0
    before = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}  # figures/ too
    bad = tmp_path / "h.csv"
    bad.write_text(BAD_HUMAN)
    assert main(["judge-report", str(folders / "full"), "--out", str(out), "--human", str(bad)]) == 2
    assert {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_wrong_task_logs_and_out_file(folders, tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["judge-report", str(folders / "full"), "--out", str(f)]) == 2
    assert "not a folder" in capsys.readouterr().err
    corrupt = tmp_path / "logs"
    corrupt.mkdir()
    (corrupt / "x.eval").write_bytes(b"not a zip")
    assert main(["judge-report", str(corrupt), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "x.eval" in err and len(err.strip().splitlines()) == 1


def test_rater_sheet_bad_inputs(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    header = tmp_path / "header.csv"
    header.write_text("model,slice,base_attribute,base_value,compared_attribute,compared_value\n")
    for src, msg in ((empty, "no associations"), (header, "no associations")):
        assert main(["rater-sheet", str(src), "--out", str(tmp_path / "s.csv")]) == 2
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1
    good = tmp_path / "a.csv"
    good.write_text(ROWS)
    assert main(["rater-sheet", str(good), "--out", str(tmp_path / "s.csv"), "--slices", "fr"]) == 2
    assert "slices present: all" in capsys.readouterr().err
    assert main(["rater-sheet", str(good), "--out", str(tmp_path)]) == 2
    assert main(["rater-sheet", str(good), "--out", str(tmp_path / "s.csv"), "--shuffle-seed", "-1"]) == 2
    assert not (tmp_path / "s.csv").exists() and not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


@pytest.mark.parametrize(
    "params, message",
    [
        ({"epochs": 0}, "epochs=0"),
        ({"epochs": "nan"}, "epochs='nan'"),
        ({"epochs": 2.5}, "epochs=2.5"),
        ({"max_tokens": -1}, "max_tokens=-1"),
        ({"temperature": float("nan")}, "temperature=nan"),
        ({"temperature": -0.5}, "temperature=-0.5"),
        ({"harmful_threshold": 6}, "harmful_threshold=6"),
        ({"value_lists": "bogus"}, "value_lists='bogus'"),
        ({"repetition_base": -1}, "repetition_base=-1"),
        ({"strict_parse": "maybe"}, "strict_parse='maybe'"),
        ({"associations": "/nonexistent/assoc.csv"}, "no existing file or folder"),
        ({"slices": []}, "slices=[]"),
    ],
)
def test_task_parameters_are_validated(tmp_path, params, message):
    (tmp_path / "a.csv").write_text(ROWS)
    kwargs = {"associations": str(tmp_path / "a.csv"), **params}
    with pytest.raises(InputError, match=None) as e:
        stereotales_judge(**kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_valid_parameters_as_yaml_strings(tmp_path):
    (tmp_path / "a.csv").write_text(ROWS)
    t = stereotales_judge(associations=str(tmp_path / "a.csv"), epochs="2", max_tokens="64", strict_parse="true",
                          temperature="0.5")
    assert t.epochs == 2 and t.config.max_tokens == 64 and t.config.temperature == 0.5
    assert os.path.basename(t.dataset.name).endswith("a.csv")
