"""The paper's term-based comparison (Tables 1 and 6) read from lm-eval results files and inspect logs."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai import Task, task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match

from stereoprobe.cli import main
from stereoprobe.dbb.term_based import paper_table, read_term_based


@task
def bbq() -> Task:  # stands in for inspect_evals' bbq: the reader only needs the task name and metrics
    return Task(dataset=[Sample(input="Who was bad at math? Answer A.", target="A")], scorer=match())


def _answer(*_):
    o = ModelOutput.from_content("mockllm/model", "A")
    o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken download
    return o


def _lm_eval_results(folder, model="hf-model"):
    folder.mkdir(parents=True)
    # values of the paper's Table 1 row for Llama-3.2-11B: BBQ-ambig .0107, BBQ-disambig 65.39, CS 66.51
    data = {"model_name": model, "results": {
        "bbq": {"alias": "bbq", "acc,none": 0.7, "acc_stderr,none": 0.01, "amb_bias_score,none": 0.0107,
                "accuracy_disamb,none": 0.6539},
        "crows_pairs_english": {"alias": "crows_pairs_english", "pct_stereotype,none": 0.6651,
                                "likelihood_diff,none": 3.2},
        "hellaswag": {"acc,none": 0.5}}}
    (folder / "results_2025-01-01T00-00-00.json").write_text(json.dumps(data))


def test_lm_eval_results_and_inspect_logs(tmp_path):
    _lm_eval_results(tmp_path / "lm")
    [log] = inspect_eval(bbq(), model=get_model("mockllm/model", custom_outputs=_answer), display="none",
                         log_dir=str(tmp_path / "insp"))
    assert log.status == "success", log.error
    t = read_term_based([tmp_path / "lm", tmp_path / "insp"])
    assert set(t["benchmark"]) == {"BBQ", "CrowS-Pairs"} and "hellaswag" not in set(t["task"])
    assert not t["metric"].str.endswith("_stderr").any()
    wide = paper_table(t).set_index("model")
    assert wide.loc["hf-model", "BBQ-ambig (0)"] == pytest.approx(0.0107)
    assert wide.loc["hf-model", "BBQ-disambig (↑)"] == pytest.approx(65.39)
    assert wide.loc["hf-model", "CS (50)"] == pytest.approx(66.51)
    ins = t[t["source"] == "inspect"]
    assert len(ins) >= 1 and set(ins["task"]) == {"bbq"} and set(ins["model"]) == {"mockllm/model"}


def test_cli_term_based_section(tmp_path):
    from fake_model import fake_model

    from stereoprobe.tasks.dbb import dbb

    logs = tmp_path / "logs"
    inspect_eval(dbb(source="bundled", prompt="stereoprobe", faithful=False,
                     categories="ses", limit_templates=1, mode="logprob"),
                 model=fake_model(always_first=True), display="none", log_dir=str(logs))
    _lm_eval_results(tmp_path / "lm")
    out = tmp_path / "out"
    assert main(["dbb", str(logs), "--out", str(out), "--n-boot", "20", "-q",
                 "--term-based", str(tmp_path / "lm")]) == 0
    assert set(pd.read_csv(out / "term_based.csv")["benchmark"]) == {"BBQ", "CrowS-Pairs"}
    assert "Term-based benchmarks" in (out / "report.html").read_text()
    (tmp_path / "nothing").mkdir()
    assert main(["dbb", str(logs), "--out", str(tmp_path / "o2"), "--term-based", str(tmp_path / "nothing")]) == 2
    assert not (tmp_path / "o2").exists()
