from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from stereoprobe.cli import main
from stereoprobe.globalbias.data import load_names
from stereoprobe.tasks.globalbias_profiles import globalbias_profiles, name_batches


FIRST = name_batches(load_names(), 6, 42)[0][0].name


def _fake_profiles(input, tools, tool_choice, config):  # noqa: A002
    text = input[-1].text
    names = json.loads(re.search(r"(\[.*?\])", text, re.S).group(1))
    if names[0] == FIRST:  # batch 0 of each run answers with prose only: a parse failure
        content = "Sorry, I can't do that."
    else:
        profs = [{"name": n, "age": 30 + len(n), "personality_traits": ["kind", "calm", n[:2].lower()],
                  "negative_traits": ["vain", "shy", "rude"], "hobbies": ["chess", "golf", "tea"],
                  "occupation": "pilot" if n[0] < "L" else "chef",
                  "physical_characteristics": {"height": 5.5, "hair_colour": "red", "eye_colour": "blue",
                                               "skin_colour": "fair", "build": "slim"},
                  "special_move": "spin", "socioeconomic_status": "middle", "sexual_orientation": "gay",
                  "religion": "none"} for n in names]
        content = json.dumps({"characters": profs})
    return ModelOutput.from_content("fake", content) .model_copy(
        update={"usage": ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)})


def test_batches_follow_reference_shuffle():
    names = list(range(400))
    b = name_batches(names, 20, 42)
    # pandas DataFrame.sample(frac=1, random_state=42) order
    ref = pd.DataFrame({"x": names}).sample(frac=1, random_state=42)["x"].tolist()
    assert [x for batch in b for x in batch] == ref and len(b) == 20


def test_profiles_task_and_cli(tmp_path):
    t = globalbias_profiles(source="bundled", batch_size=6, runs=2, max_tokens=100, prompt="stereoprobe")
    assert len(t.dataset) == 2 * 4 and t.dataset[0].id == "run0:batch0"
    assert t.config.temperature is None  # the paper's temperature 1 travels with each request, under the user's
    [log] = inspect_eval(t, model=get_model("mockllm/model", custom_outputs=_fake_profiles),
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success"
    sent = [e.config for s in log.samples for e in s.events if e.event == "model"]
    assert sent and {(c.temperature, c.max_tokens) for c in sent} == {(1.0, 100)}
    failed = [s for s in log.samples if s.scores["profile_parser"].value["parsed"] == 0]
    assert len(failed) == 2
    out = tmp_path / "out"
    assert main(["profiles", str(tmp_path / "logs"), "--out", str(out), "--permutations", "5", "--folds", "2",
                 "--no-feature-ablation"]) == 0
    cls = pd.read_csv(out / "classification.csv")
    assert set(cls.target) == {"gender_ethnicity", "ethnicity", "gender"}
    assert {"accuracy", "chance", "permutation_p"} <= set(cls.columns)
    oc = pd.read_csv(out / "parse_outcomes.csv")
    assert (~oc.parsed).sum() == len(failed)
    assert (out / "top_words.csv").exists() and (out / "report.html").exists()
    assert int(oc.n_profiles.sum()) == 2 * len(load_names()) - 2 * 6
    assert int(oc.n_missing.sum()) == 2 * 6


def test_live_and_final_parse_failure_rates_agree(tmp_path):
    """The live figure over the samples scored so far is the final computation over those samples (issue 42.8:
    the demo's console showed 0.00 live and 0.667 at the end): checked on every prefix of a run's scores, in
    completion order and reversed, against a count of the unparsed responses; with nothing scored yet the
    figure is left out, not "nan"."""
    from inspect_ai.scorer import SampleScore

    from stereoprobe.scorers.globalbias_profiles import profile_coverage, profile_parse_failure_rate

    t = globalbias_profiles(source="bundled", batch_size=6, runs=1, max_tokens=100, prompt="stereoprobe")
    [log] = inspect_eval(t, model=get_model("mockllm/model", custom_outputs=_fake_profiles),
                         log_dir=str(tmp_path / "logs"), display="none")
    scores = [SampleScore(score=s.scores["profile_parser"], sample_id=s.id, sample_metadata=s.metadata)
              for s in sorted(log.samples, key=lambda s: s.completed_at or "")]
    live = profile_parse_failure_rate()
    for order in (scores, scores[::-1]):
        for k in range(1, len(order) + 1):
            unparsed = sum(s.score.value["parsed"] == 0 for s in order[:k])
            assert live(order[:k]) == {"profile_parse_failure_rate": pytest.approx(unparsed / k, abs=1e-12)}
    final = log.results.scores[0].metrics
    assert final["profile_parse_failure_rate"].value == live(scores)["profile_parse_failure_rate"]
    assert final["profile_parse_failure_rate"].value == pytest.approx(1 / 4, abs=1e-12)
    assert live([]) == {} and profile_coverage()([]) == {}
