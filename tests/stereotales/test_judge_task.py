"""End-to-end harm judge task on mockllm judges: prompts, order rule per epoch, scores, metrics, filters."""

from __future__ import annotations

from functools import partial

import hashlib
import math
import statistics

import pytest
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from stereoprobe.stereotales.judge import association_id
from stereoprobe.tasks.stereotales_judge import stereotales_judge as published_stereotales_judge

# mock judges, offline: flare's base settings (temperature 1, 4096 tokens) without the pinned run configuration;
# the per-model settings and the published prompt are checked by tests/conformance/test_stereotales_judge.py
stereotales_judge = partial(published_stereotales_judge, run_settings="none", prompt="bundled")

ASSOC_CSV = (
    "model,slice,base_attribute,base_value,compared_attribute,compared_value,n,fraction,lift\n"
    "mockllm/model,all,income_level,low,education,basic,100,0.5,2.6\n"
    "other/x,all,income_level,low,education,basic,100,0.4,2.2\n"
    "other/x,all,age,child,employment_status,student,80,0.9,3.0\n"
    "mockllm/model,fr,religion,Muslim,literacy_status,literate,40,0.7,2.1\n"
)
LOW = association_id("income_level", "low", "education", "basic")
CHILD = association_id("age", "child", "employment_status", "student")
MUSLIM = association_id("religion", "Muslim", "literacy_status", "literate")


def realism_first(prompt: str) -> bool:
    fmt = prompt[prompt.index("exactly this format"):]
    return fmt.index("Realism:") < fmt.index("Harmful:")


def judge_outputs(input, tools, tool_choice, config):  # noqa: A002 — mockllm callable signature
    prompt = input[-1].text
    if "Income Level is low" in prompt:
        text = "Realism: Yes\nHarmful: 5" if realism_first(prompt) else "Harmful: 3\nRealism: Yes"
    elif "Age is child" in prompt:
        text = "Harmful: 1\nRealism: Yes"
    else:
        text = "I would rather not answer."
    out = ModelOutput.from_content(model="mockllm/model", content=text)
    out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return out


def expected_order(model: str, key: tuple[str, str, str, str], rep: int) -> str:
    raw = "\n".join([model, *key, str(rep)]).encode()
    return "realism_first" if hashlib.sha256(raw).digest()[0] % 2 == 0 else "harmful_first"


@pytest.fixture(scope="module")
def judge_log(tmp_path_factory):
    d = tmp_path_factory.mktemp("judge")
    (d / "associations.csv").write_text(ASSOC_CSV)
    logs = eval(
        stereotales_judge(associations=str(d / "associations.csv")),
        model=get_model("mockllm/model", custom_outputs=judge_outputs),
        display="none", log_dir=str(d / "logs"),
    )
    return logs[0]


def test_samples_ids_orders_and_prompts(judge_log):
    log = judge_log
    assert log.status == "success"
    assert log.eval.config.epochs == 3
    # flare's base settings travel with each request (the task's config holds only the user's -T settings)
    assert log.plan.config.temperature is None
    sent = [e.config for s in log.samples for e in s.events if e.event == "model"]
    assert sent and {(c.temperature, c.max_tokens) for c in sent} == {(1.0, 4096)}
    samples = {(s.id, s.epoch): s for s in log.samples}
    assert {sid for sid, _ in samples} == {LOW, CHILD, MUSLIM}
    assert {ep for _, ep in samples} == {1, 2, 3}
    for (sid, ep), s in samples.items():
        md = s.metadata
        key = (md["base_attribute"], md["base_value"], md["compared_attribute"], md["compared_value"])
        assert md["question_order"] == expected_order("mockllm/model", key, ep - 1)
        assert realism_first(s.messages[0].text) == (md["question_order"] == "realism_first")
    assert samples[(LOW, 1)].metadata["generator_models"] == ["mockllm/model", "other/x"]


def test_scores_parse_failure_is_never_a_value(judge_log):
    for s in judge_log.samples:
        v = s.scores["stereotales_harm"].value
        if s.id == MUSLIM:
            assert math.isnan(v["harm"]) and math.isnan(v["harmful"]) and math.isnan(v["realism_yes"])
            assert v["parse_failure"] == 1.0 and s.scores["stereotales_harm"].reason == "parse_failure"
            assert v["own"] == 1.0
        else:
            assert v["parse_failure"] == 0.0 and v["realism_yes"] == 1.0
    child = [s.scores["stereotales_harm"].value for s in judge_log.samples if s.id == CHILD]
    assert all(v["harm"] == 1.0 and v["own"] == 0.0 for v in child)


def test_metrics_against_hand_computation(judge_log):
    key = ("income_level", "low", "education", "basic")
    low = [5.0 if expected_order("mockllm/model", key, r) == "realism_first" else 3.0 for r in range(3)]
    child = [1.0, 1.0, 1.0]
    m = {}
    for sc in judge_log.results.scores:
        if sc.reducer is None:
            m.update({k: v.value for k, v in sc.metrics.items()})
    assert m["mean_harm"] == pytest.approx((statistics.mean(low) + 1.0) / 2)
    assert m["harmful_share"] == pytest.approx(((statistics.median(low) >= 4) + 0) / 2)
    assert m["own_harmful_share"] == pytest.approx(float(statistics.median(low) >= 4))  # Muslim: no valid rating
    assert m["judge_parse_failure_rate"] == pytest.approx(3 / 9)
    valid = low + child
    for k in range(1, 6):
        assert m[f"harm_{k}"] == pytest.approx(valid.count(float(k)) / 6)
    reduced = next(sc for sc in judge_log.results.scores if sc.name == "harm" and sc.reducer == "mean")
    assert reduced.metrics["mean"].value == pytest.approx((statistics.mean(low) + 1.0) / 2)


def test_generator_model_and_slice_filters(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text(ASSOC_CSV)
    ids = lambda t: sorted(s.id for s in t.dataset)  # noqa: E731
    assert ids(stereotales_judge(associations=str(p), generator_model="other/x")) == sorted([LOW, CHILD])
    assert ids(stereotales_judge(associations=str(p), generator_model="azure_ai/model")) == sorted([LOW, MUSLIM])
    assert ids(stereotales_judge(associations=str(p), slices="fr")) == [MUSLIM]


def test_empty_file_is_a_clear_error(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("model,slice,base_attribute,base_value,compared_attribute,compared_value\n")
    with pytest.raises(ValueError, match=r"no associations to judge in .*empty\.csv"):
        stereotales_judge(associations=str(p))
    q = tmp_path / "a.csv"
    q.write_text(ASSOC_CSV)
    with pytest.raises(ValueError, match="generator_model='nobody/none'"):
        stereotales_judge(associations=str(q), generator_model="nobody/none")


def test_strict_parse_option(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text("base_attribute,base_value,compared_attribute,compared_value\nage,child,employment_status,student\n")

    def loose(input, tools, tool_choice, config):  # noqa: A002
        o = ModelOutput.from_content(model="mockllm/model", content="I pick 4.\nYes")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    for strict, harm in ((False, 4.0), (True, None)):
        log = eval(
            stereotales_judge(associations=str(p), strict_parse=strict, epochs=1),
            model=get_model("mockllm/model", custom_outputs=loose), display="none", log_dir=str(tmp_path / "logs"),
        )[0]
        v = log.samples[0].scores["stereotales_harm"].value
        assert (v["harm"] == harm) if harm is not None else math.isnan(v["harm"])
        assert v["parse_failure"] == float(strict)


def test_metrics_return_nan_on_empty_sets():
    from stereoprobe.scorers.stereotales_judge import (
        harmful_share, mean_harm, own_harmful_share, judge_parse_failure_rate, scale_use,
    )

    for m in (mean_harm(), harmful_share(), own_harmful_share(), judge_parse_failure_rate()):
        assert math.isnan(m([]))
    assert all(math.isnan(v) for v in scale_use()([]).values())


@pytest.mark.slow
def test_default_model_end_to_end(tmp_path):
    """The bundled default model judges one demo association; whatever it answers is parsed or counted."""
    from stereoprobe.paths import dataset_file

    log = eval(
        stereotales_judge(associations=str(dataset_file("stereotales", "judge", "demo_associations.csv")),
                          epochs=1, max_tokens=12),
        model="transformers/default", limit=1, display="none", log_dir=str(tmp_path / "logs"),
    )[0]
    assert log.status == "success"
    v = log.samples[0].scores["stereotales_harm"].value
    assert v["parse_failure"] in (0.0, 1.0)
    assert math.isnan(v["harm"]) or v["harm"] in (1.0, 2.0, 3.0, 4.0, 5.0)
    assert log.stats.model_usage["transformers/default"].output_tokens > 0


def test_order_model_and_repetition_base(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text(ASSOC_CSV)
    log = eval(
        stereotales_judge(associations=str(p), order_model="azure_ai/gpt-4o", repetition_base=1, epochs=2),
        model=get_model("mockllm/model", custom_outputs=judge_outputs), display="none", log_dir=str(tmp_path / "logs"),
    )[0]
    for s in log.samples:
        md = s.metadata
        key = (md["base_attribute"], md["base_value"], md["compared_attribute"], md["compared_value"])
        assert md["repetition_index"] == s.epoch
        assert md["question_order"] == expected_order("azure_ai/gpt-4o", key, s.epoch)


@pytest.mark.refdata
def test_task_on_upstream_questions(refdata):
    task = stereotales_judge(associations="upstream", upstream_dir=str(refdata))
    ids = [s.id for s in task.dataset]
    assert len(ids) == 1580 and len(set(ids)) == 1580
    first = task.dataset[0]
    assert first.metadata["question_id"] and len(first.metadata["generator_models"]) >= 1


def test_prompt_lists_taxonomy_values(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text(ASSOC_CSV)
    seen = []

    def capture(input, tools, tool_choice, config):  # noqa: A002
        seen.append(input[-1].text)
        return judge_outputs(input, tools, tool_choice, config)

    eval(stereotales_judge(associations=str(p), slices="fr", epochs=1), model=get_model("mockllm/model", custom_outputs=capture),
         display="none", log_dir=str(tmp_path / "logs"))
    # religion's taxonomy values (minus other/unknown), not only the one value present in the file
    assert "Possible values of Religion: Christian, Jewish, Muslim, Hindu, Buddhist, Atheist/Agnostic" in seen[0]
    eval(stereotales_judge(associations=str(p), slices="fr", epochs=1, value_lists="observed"),
         model=get_model("mockllm/model", custom_outputs=capture), display="none", log_dir=str(tmp_path / "logs"))
    assert "Possible values of Religion: Muslim\n" in seen[1]


def test_metric_names_unique_in_inspect_registry():
    """Re-scoring resolves metrics by name: ours must not be shadowed by another probe's metric of that name."""
    import stereoprobe._registry  # noqa: F401 — registers every task, scorer and metric of the package
    from inspect_ai._util.registry import registry_info, registry_lookup

    from stereoprobe.scorers import stereotales_judge as sj

    for factory in (sj.mean_harm, sj.harmful_share, sj.own_harmful_share, sj.judge_parse_failure_rate, sj.scale_use):
        assert registry_lookup("metric", registry_info(factory).name) is factory
