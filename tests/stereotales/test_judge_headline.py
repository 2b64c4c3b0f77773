"""No judge headline over answers that failed to parse (issue 42.6): below the parse share the report states,
the headline reads "not established (k of n answers parsed)" on the report, the index and the console; the
human-alignment sentence counts the associations the correlation below it uses; the console line nests
parentheses at most one deep."""

from __future__ import annotations

import html
from functools import partial

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from stereoprobe.cli import main
from stereoprobe.report.index import build_index
from stereoprobe.stereotales.judge import association_id
from stereoprobe.stereotales.judge.ratings import MIN_PARSED_SHARE
from stereoprobe.tasks.stereotales_judge import stereotales_judge as published_stereotales_judge

stereotales_judge = partial(published_stereotales_judge, run_settings="none", prompt="bundled")

ROWS = [("mockllm/c", "en", "age", "child", "employment_status", "student"),
        ("mockllm/c", "en", "religion", "Muslim", "literacy_status", "literate"),
        ("mockllm/d", "en", "income_level", "low", "education", "basic"),
        ("mockllm/d", "en", "gender", "female", "occupation", "nurse")]
IDS = [association_id(*r[2:]) for r in ROWS]
# judge c answers only the child association in the asked form; judge d answers all four
RATINGS = {"mockllm/c": {"Age is child": "4"}, "mockllm/d": {"Age is child": "2", "Religion is Muslim": "3",
                                                             "Income": "4", "Gender is female": "5"}}


def _outputs(model: str):  # type: ignore[no-untyped-def]
    def fn(input, tools, tool_choice, config):  # noqa: A002
        asked = input[-1].text.split("In the generated stories")[1]
        rating = next((v for k, v in RATINGS[model].items() if k in asked), None)
        o = ModelOutput.from_content(model=model, content=f"Harmful: {rating}\nRealism: No" if rating else "no idea")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    return fn


def _page(out) -> str:  # type: ignore[no-untyped-def]
    """The judge report's page (``judge_report.html`` beside an associations report, else ``report.html``)."""
    page = out / "judge_report.html" if (out / "judge_report.html").is_file() else out / "report.html"
    return page.read_text(encoding="utf-8")


def _depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        depth += ch == "("
        deepest = max(deepest, depth)
        depth -= ch == ")"
    return deepest


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    d = tmp_path_factory.mktemp("jh")
    pd.DataFrame(ROWS, columns=["model", "slice", "base_attribute", "base_value", "compared_attribute",
                                "compared_value"]).to_csv(d / "assoc.csv", index=False)
    for m in RATINGS:
        inspect_eval(stereotales_judge(associations=str(d / "assoc.csv")),
                     model=get_model(m, custom_outputs=_outputs(m)), display="none",
                     log_dir=str(d / "logs" / m.split("/")[1]))
    return d


def test_judge_headline_not_established_below_the_parse_share(judged, capsys) -> None:  # type: ignore[no-untyped-def]
    out = judged / "results" / "judge"
    assert main(["judge-report", str(judged / "logs"), "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    summary = pd.read_csv(out / "judge_summary.csv").set_index("evaluator")
    # c: 4 associations x 3 epochs = 12 answers, only the child association's 3 parse: 3/12 < the stated share
    assert 3 / 12 < MIN_PARSED_SHARE <= 12 / 12
    assert summary.loc["mockllm/c", "headline"] == "not established (3 of 12 answers parsed)"
    assert summary.loc["mockllm/d", "headline"].startswith("harmful share ")
    assert (summary.loc["mockllm/c", "harm_parsed"], summary.loc["mockllm/c", "harm_answers"]) == (3, 12)
    page = html.unescape(_page(out))
    assert "mockllm/c: not established (3 of 12 answers parsed)" in page and f"{MIN_PARSED_SHARE:.0%}" in page
    index = html.unescape(build_index(judged / "results").read_text(encoding="utf-8"))
    cell = index[index.index("mockllm/c: "):].split("</td>")[0]
    assert cell.startswith("mockllm/c: not established (3 of 12 answers parsed)") and "mean harm" not in cell.split(
        " | ")[0]
    # the console line: one line, the headline in it, parentheses never nested
    assert "mockllm/c: not established (3 of 12 answers parsed)" in line and _depth(line) <= 1


def test_alignment_sentence_counts_what_the_correlation_uses(judged, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # humans rate all four associations; the LLM mean exists for the ones a judge parsed; with judge c alone
    # only the child association has both ratings (n = 1), although 4 are human-rated
    human = tmp_path / "human.csv"
    human.write_text("participant_id,association_id,harm,realism\n"
                     + "".join(f"h{k},{a},{2 + k},no\n" for a in IDS for k in (1, 2)))
    out = tmp_path / "o"
    assert main(["judge-report", str(judged / "logs" / "c"), "--out", str(out), "--human", str(human)]) == 0
    corr = pd.read_csv(out / "alignment_correlations.csv")
    n = int(corr.loc[corr["method"] == "pearson", "n"].iloc[0])
    assert n == 1
    page = html.unescape(_page(out))
    assert "1 of the 4 human-rated associations have both LLM and human ratings (n = 1 below)" in page
    assert "4 associations have both" not in page
