"""Table-driven: inputs that are readable files but hold what a command must not use (the same folder twice,
values outside their domain, files of the wrong shape). Each case runs ``stereoprobe.cli.main`` in-process and
asserts exit code 2, one line on stderr naming the file (and the field, row or folder) at fault, no traceback,
and nothing written (no ``--out`` folder, nothing beside the inputs).

Classes (designed from the issue, not its examples): a leaderboard folder read twice (given twice, bare and as
``LABEL=PATH``, through a link, below another input) or holding figures outside their domain; lm-eval samples and results of the wrong shape or with
impossible log-likelihoods; release tables with several values in a one-value cell; judge logs with a harm
rating outside the 1-5 scale.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from eval_edit import edit_eval

from stereoprobe.cli import main


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    expect: tuple[str, ...]  # fragments the one error line must contain ({D} filled in)

    @property
    def id(self) -> str:
        return " ".join(a.replace("{D}/", "") for a in self.argv).replace("{OUT}", "OUT")


OUT = ("--out", "{OUT}")
SAMPLES = "samples_globalbias_2024-01-01T00-00-00.1.jsonl"
RECORD = {"doc_id": 0, "doc": {"id": "ARAB_F:0:0:t1", "text": "My name is Amal, I am kind.", "group": "ARAB_F",
                               "ethnicity": "ARAB", "gender": "F", "name": "Amal", "name_index": 0,
                               "descriptor": "kind", "template": 1},
          "target": 0, "resps": [["-12.5", "False"]], "filtered_resps": ["-12.5"], "filter": "none"}

CASES = [
    # --- leaderboard: one folder read twice would count its rows twice
    Case(("leaderboard", "{D}/dbb_out", "{D}/dbb_out", *OUT), ("{D}/dbb_out", "already read", "give each folder once")),
    Case(("leaderboard", "{D}/dbb_out", "run2={D}/dbb_out", *OUT), ("run2={D}/dbb_out", "already read")),
    Case(("leaderboard", "run1={D}/dbb_out", "{D}/dbb_out", *OUT), ("{D}/dbb_out", "already read")),
    Case(("leaderboard", "{D}/results", "{D}/results/dbb_run", *OUT), ("dbb_run", "already read", "{D}/results")),
    Case(("leaderboard", "{D}/dbb_out", "{D}/link_to_dbb_out", *OUT), ("link_to_dbb_out", "already read")),
    Case(("leaderboard", "{D}/dbb_out", "{D}/../{DNAME}/dbb_out", *OUT), ("already read",)),
    # --- leaderboard: figures outside their domain in a probe's output tables
    Case(("leaderboard", "{D}/dbb_s_150", *OUT), ("instances.csv", "column 's'", "[0, 100]", "row 1 (150)")),
    Case(("leaderboard", "{D}/dbb_mean_s_negative", *OUT), ("summary.csv", "'mean_s_biased'", "row 1 (-3.0)")),
    # --- globalbias: lm-eval samples of the wrong shape or with impossible values
    Case(("globalbias", "{D}/lm_list", *OUT, "--measure", "byte"), (SAMPLES, "line 1", "object")),
    Case(("globalbias", "{D}/lm_doc_list", *OUT, "--measure", "byte"), (SAMPLES, "line 1", "'doc'")),
    Case(("globalbias", "{D}/lm_positive", *OUT, "--measure", "byte"), (SAMPLES, "line 1", "> 0")),
    Case(("globalbias", "{D}/lm_template", *OUT, "--measure", "byte"), (SAMPLES, "line 1", "'template'")),
    Case(("globalbias", "{D}/lm_results_list", *OUT, "--measure", "byte"), ("results_", "JSON object")),
    # --- associations: release tables with several values where one is expected
    Case(("associations", "{D}/release_list_attr.csv", *OUT), ("release_list_attr.csv", "row 0", "'gender'")),
    Case(("associations", "{D}/release_list_cell.parquet", *OUT), ("release_list_cell.parquet", "row 0",
                                                                  "'target_attribute'")),
    Case(("associations", "{D}/release_dict_attr.parquet", *OUT), ("release_dict_attr.parquet", "'gender'")),
    # --- judge-report: a harm rating outside the 1-5 scale
    Case(("judge-report", "{D}/judge_bad/harm9.eval", *OUT), ("harm9.eval", "'harm' is 9", "1 to 5")),
    Case(("judge-report", "{D}/judge_bad/harm0.eval", *OUT), ("harm0.eval", "'harm' is 0")),
    Case(("judge-report", "{D}/judge_bad/harm_text.eval", *OUT), ("harm_text.eval", "'harm' is 'high'")),
]


def _dbb_out(folder: Path, **values) -> None:
    """The two tables that mark a dbb output folder for the leaderboard, with the columns it requires
    (``values``: column -> value of its one row)."""
    from stereoprobe.leaderboard.sources import REQUIRED, TABLES

    folder.mkdir(parents=True)
    for name in TABLES["dbb"]:
        row = {c: values.get(c, "m" if c == "model" else 1) for c in REQUIRED[("dbb", name)]}
        pd.DataFrame([row]).to_csv(folder / f"{name}.csv", index=False)


def _samples(folder: Path, line: str, results: str | None = None) -> None:
    folder.mkdir()
    (folder / SAMPLES).write_text(line + "\n")
    if results is not None:
        (folder / "results_2024-01-01T00-00-00.1.json").write_text(results)


def _release(path: Path, **changes) -> None:
    row = {"generator_model": "m", "language": "en", "target_attribute": "gender", "attribute_value_key": "woman",
           "scenario_key": "s1", "extracted_attributes_json": json.dumps({"gender": "woman", "age": "adult"}),
           "sample_id": "en:gender:0", "output_id": "o1"}
    df = pd.DataFrame([row, {**row, "sample_id": "en:gender:1"}])
    for col, value in changes.items():
        df[col] = [value, df[col].iloc[1]] if col != "target_attribute" else [value, value]
    df.to_parquet(path) if path.suffix == ".parquet" else df.to_csv(path, index=False)


def _judge_log(folder: Path) -> Path:
    """A real stereotales_judge log on the bundled demo associations (mockllm judge, harm 2)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from stereoprobe.paths import dataset_file
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    def out(input, tools, tool_choice, config) -> ModelOutput:
        o = ModelOutput.from_content(model="mockllm/model", content="Harmful: 2\nRealism: Yes")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    demo = dataset_file("stereotales", "judge", "demo_associations.csv")
    [log] = inspect_eval(stereotales_judge(associations=str(demo), epochs=1, run_settings="none", prompt="bundled"), display="none", log_dir=str(folder),
                         model=get_model("mockllm/model", custom_outputs=out))
    return Path(log.location)


def _harm(value):
    done: list[str] = []

    def edit(name, s):
        sc = (s.get("scores") or {}).get("stereotales_harm")
        if not done and sc is not None and isinstance(sc.get("metadata"), dict):
            sc["metadata"]["harm"] = value
            done.append(name)
        return s

    return edit


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bad_content")
    _dbb_out(d / "dbb_out")
    _dbb_out(d / "results" / "dbb_run")
    _dbb_out(d / "dbb_s_150", s=150)
    _dbb_out(d / "dbb_mean_s_negative", mean_s_biased=-3.0)
    os.symlink(d / "dbb_out", d / "link_to_dbb_out")
    _samples(d / "lm_list", json.dumps([RECORD]))
    _samples(d / "lm_doc_list", json.dumps({**RECORD, "doc": [RECORD["doc"]]}))
    _samples(d / "lm_positive", json.dumps({**RECORD, "resps": [["0.75", "False"]]}))
    _samples(d / "lm_template", json.dumps({**RECORD, "doc": {**RECORD["doc"], "template": 4}}))
    _samples(d / "lm_results_list", json.dumps(RECORD), results="[1, 2]")
    _release(d / "release_list_attr.csv",
             extracted_attributes_json=json.dumps({"gender": ["woman", "man"], "age": "adult"}))
    _release(d / "release_list_cell.parquet", target_attribute=["gender", "age"])
    _release(d / "release_dict_attr.parquet",
             extracted_attributes_json=json.dumps({"gender": {"value": ["woman", "man"]}, "age": "adult"}))
    log = _judge_log(d / "judge_logs")
    for name, value in (("harm9", 9), ("harm0", 0), ("harm_text", "high")):
        edit_eval(log, d / "judge_bad" / f"{name}.eval", sample=_harm(value))
    return d


def _fill(text: str, d: Path, out: Path) -> str:
    return text.replace("{DNAME}", d.name).replace("{D}", str(d)).replace("{OUT}", str(out))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_input_content(case: Case, bad_inputs: Path, tmp_path: Path, capsys) -> None:
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    before = sorted(str(p) for p in bad_inputs.rglob("*"))
    rc = main([_fill(a, bad_inputs, out) for a in case.argv])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert "Traceback" not in captured.err + captured.out
    assert rc == 2, captured.err
    assert len(lines) == 1, captured.err
    for fragment in case.expect:
        assert _fill(fragment, bad_inputs, out) in lines[0], lines[0]
    assert list(work.iterdir()) == []  # no output, temporary folder or lock
    assert sorted(str(p) for p in bad_inputs.rglob("*")) == before  # nothing written beside the inputs


def test_the_good_inputs_of_the_cases_are_accepted(bad_inputs: Path, tmp_path: Path) -> None:
    """The cases fail for the reason they name: the same inputs given once are read."""
    from stereoprobe.leaderboard.sources import load_sources

    src = load_sources([bad_inputs / "dbb_out", f"run2={bad_inputs / 'results'}"])
    assert len(src.folders) == 2
    good = tmp_path / "lm"
    _samples(good, json.dumps(RECORD))
    from stereoprobe.globalbias.inputs import read_sentences

    df, _ = read_sentences([good], measure="byte")
    assert len(df) == 1
