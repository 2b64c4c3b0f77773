"""``stereoprobe profiles`` on real log folders: an interrupted run plus its eval-retry equals an uninterrupted
run; an ``inspect eval-set`` folder; bad options end with one line and exit code 2."""

from __future__ import annotations

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import eval_retry, eval_set
from inspect_ai.model import GenerateConfig, ModelAPI, modelapi

from stereoprobe.cli import main
from stereoprobe.tasks.globalbias_profiles import globalbias_profiles

from .test_profiles_task import _fake_profiles

FAIL = {"on": False}
ARGS = {"source": "bundled", "batch_size": 6, "runs": 2, "max_tokens": 100, "prompt": "stereoprobe"}
OPTS = ["--permutations", "5", "--folds", "2", "--no-feature-ablation"]


class ProfilesModel(ModelAPI):
    """Answers with the test profiles; fails (not retryable) on the second batch while ``FAIL["on"]``."""

    def __init__(self, model_name: str = "m", base_url=None, api_key=None, config=GenerateConfig(), **kw) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)

    async def generate(self, input, tools, tool_choice, config):  # noqa: A002
        if FAIL["on"] and _is_batch1(input):
            raise RuntimeError("connection reset (simulated interruption)")
        return _fake_profiles(input, tools, tool_choice, config)


def _is_batch1(input) -> bool:  # noqa: A002
    from stereoprobe.globalbias.data import load_names
    from stereoprobe.globalbias.samples import name_batches

    second = name_batches(load_names(), ARGS["batch_size"], 42)[1][0].name
    return second in input[-1].text


@modelapi(name="gb-profiles")
def _profiles_model() -> type[ProfilesModel]:
    return ProfilesModel


def _tables(out) -> dict[str, pd.DataFrame]:
    return {n: pd.read_csv(out / f"{n}.csv").drop(columns="model")
            for n in ("classification", "top_words", "parse_outcomes")}


def _same(a, b) -> None:
    ta, tb = _tables(a), _tables(b)
    for name in ta:
        x = ta[name].sort_values(list(ta[name].columns)).reset_index(drop=True)
        y = tb[name].sort_values(list(tb[name].columns)).reset_index(drop=True)
        pd.testing.assert_frame_equal(x, y, obj=name)


def test_interrupted_profiles_run_plus_retry_equals_uninterrupted(tmp_path):
    [full] = inspect_eval(globalbias_profiles(**ARGS), model="gb-profiles/m", log_dir=str(tmp_path / "full"),
                          display="none")
    assert full.status == "success"
    FAIL["on"] = True
    try:
        [first] = inspect_eval(globalbias_profiles(**ARGS), model="gb-profiles/m", log_dir=str(tmp_path / "mixed"),
                               display="none")
    finally:
        FAIL["on"] = False
    assert first.status == "error"
    [retry] = eval_retry(first, log_dir=str(tmp_path / "mixed"), display="none")
    assert retry.status == "success"
    assert main(["profiles", str(tmp_path / "mixed"), "--out", str(tmp_path / "o1"), *OPTS]) == 0
    assert main(["profiles", str(tmp_path / "full"), "--out", str(tmp_path / "o2"), *OPTS]) == 0
    _same(tmp_path / "o1", tmp_path / "o2")
    assert len(pd.read_csv(tmp_path / "o1" / "parse_outcomes.csv")) == len(full.samples)


def test_profiles_on_an_eval_set_folder(tmp_path):
    ok, _ = eval_set(globalbias_profiles(**ARGS), model="gb-profiles/m", log_dir=str(tmp_path / "set"),
                     display="none")
    assert ok
    assert main(["profiles", str(tmp_path / "set"), "--out", str(tmp_path / "o1"), *OPTS]) == 0
    [plain] = inspect_eval(globalbias_profiles(**ARGS), model="gb-profiles/m", log_dir=str(tmp_path / "plain"),
                           display="none")
    assert main(["profiles", str(tmp_path / "plain"), "--out", str(tmp_path / "o2"), *OPTS]) == 0
    _same(tmp_path / "o1", tmp_path / "o2")


@pytest.mark.parametrize("command, extra", [
    ("globalbias", ["--alpha", "nan"]),
    ("globalbias", ["--alpha", "1.5"]),
    ("globalbias", ["--permutations", "-1"]),
    ("globalbias", ["--permutations", "0"]),
    ("globalbias", ["--validation-templates", "4"]),
    ("globalbias", ["--seed", "-2"]),
    ("profiles", ["--folds", "0"]),
    ("profiles", ["--folds", "1"]),
    ("profiles", ["--permutations", "-1"]),
    ("profiles", ["--seed", "nan"]),
])
def test_bad_options_one_line_exit_2(tmp_path, capsys, command, extra):
    p = tmp_path / "t.csv"
    pd.DataFrame({"group": ["A_F"], "descriptor": ["d"], "template": [1], "ppl": [2.0]}).to_csv(p, index=False)
    assert main([command, str(p), "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["globalbias", "profiles"])
def test_missing_empty_and_foreign_inputs(tmp_path, capsys, command):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "latin1.csv").write_bytes("group,descriptor\n\xe9,\xe8\n".encode("latin-1"))
    for bad in [tmp_path / "missing.eval", tmp_path / "empty.csv", tmp_path / "latin1.csv"]:
        assert main([command, str(bad), "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()


def test_profiles_with_apx_scores_writes_religion_table(tmp_path):
    inspect_eval(globalbias_profiles(**ARGS), model="gb-profiles/m", log_dir=str(tmp_path / "logs"), display="none")
    apx = tmp_path / "bias_scores.csv"
    pd.DataFrame([{"model": "m", "group": "ARAB_F", "descriptor": "a Muslim", "axis": "religion", "score": 0.1,
                   "flagged": True}]).to_csv(apx, index=False)
    assert main(["profiles", str(tmp_path / "logs"), "--out", str(tmp_path / "o"), "--apx", str(apx), *OPTS]) == 0
    rc = pd.read_csv(tmp_path / "o" / "religion_consistency.csv")
    assert list(rc.columns)[:3] == ["model", "apx_model", "word"]
    assert "Table 8" in (tmp_path / "o" / "report.html").read_text()


def test_a_profile_for_a_name_never_requested_is_one_line(tmp_path, capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from eval_edit import edit_eval

    [log] = inspect_eval(globalbias_profiles(**{**ARGS, "runs": 1}), model="gb-profiles/m",
                         log_dir=str(tmp_path / "logs"), display="none")

    def rename(name, s):  # the first profile of every sample now names someone the sample never asked about
        profiles = s["scores"]["profile_parser"]["metadata"]["profiles"]
        if profiles:
            profiles[0]["name"] = "Nobody Requested"
        return s

    edit_eval(Path(log.location), tmp_path / "edited" / "x.eval", sample=rename)
    assert main(["profiles", str(tmp_path / "edited"), "--out", str(tmp_path / "out"), *OPTS]) != 0
    err = capsys.readouterr().err
    assert "a profile for 'Nobody Requested', a name the sample never requested" in err and "Traceback" not in err
