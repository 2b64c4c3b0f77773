from __future__ import annotations

import math

import pytest
from inspect_ai import eval as inspect_eval

from stereoprobe.globalbias.data import load_descriptors, load_names
from stereoprobe.tasks.globalbias import globalbias

from fake_model import expected_sum, fake_model


def test_task_builds_bundled_set_with_stable_ids():
    t = globalbias(source="bundled", unit="sentence")
    n, d = len(load_names()), len(load_descriptors())
    assert len(t.dataset) == n * d * 3
    ids = [s.id for s in t.dataset]
    assert len(set(ids)) == len(ids)
    assert ids[0] == "CHINESE_F:0:0:t1"
    assert t.dataset[0].input == "I'm Xiulan, and I am a keen violinist."  # bundled: our own wording
    again = [s.id for s in globalbias(source="bundled", unit="sentence").dataset]
    assert again == ids


def test_task_subsets():
    t = globalbias(source="bundled", groups=["ARAB"], templates=2, subset="gp", unit="sentence")
    assert len(t.dataset) == 6 * 8
    assert {s.metadata["ethnicity"] for s in t.dataset} == {"ARAB"}
    assert all(s.id.endswith(":t2") for s in t.dataset)
    with pytest.raises(ValueError, match="groups has no group .MARTIAN."):
        globalbias(source="bundled", groups=["MARTIAN"])
    with pytest.raises(ValueError, match="descriptors has no descriptor"):
        globalbias(source="bundled", descriptors=["not a descriptor"])


def test_descriptors_by_text_or_row_index():
    """The docstring's promise: a descriptor's text or its row index (the bundled descriptors file's row 0 is
    "a nurse", read independently here with the csv module), alone or in a list; anything else is one line."""
    import csv
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    with open(root / "datasets" / "globalbias" / "descriptors.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_index = globalbias(source="bundled", groups=["ENGLISH_F"], descriptors=0, unit="sentence")
    assert {s.metadata["descriptor"] for s in by_index.dataset} == {rows[0]["descriptor"].strip()}
    mixed = globalbias(source="bundled", groups=["ENGLISH_F"], descriptors=[1, rows[0]["descriptor"].strip()],
                       unit="sentence")
    assert {s.metadata["descriptor"] for s in mixed.dataset} == {rows[0]["descriptor"].strip(),
                                                                  rows[1]["descriptor"].strip()}
    for bad in (True, -1, 1.5, [0, 0]):
        with pytest.raises(ValueError, match="descriptors must be a descriptor's text or row index"):
            globalbias(source="bundled", descriptors=bad)


def test_scorer_records_sum_logprob_tokens_and_bytes(tmp_path):
    task = globalbias(source="bundled", groups=["ENGLISH_F"], descriptors=["a nurse", "short"], unit="sentence")
    [log] = inspect_eval(task, model=fake_model(), log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    assert len(log.samples) == 3 * 2 * 3
    for s in log.samples:
        v = s.scores["sentence_logprob"].value
        exp_sum, exp_n = expected_sum(s.input)
        assert v["sum_logprob"] == pytest.approx(exp_sum)
        assert v["n_tokens"] == exp_n
        assert v["n_bytes"] == len(s.input.encode("utf-8"))
    metrics = log.results.scores[0].metrics
    ppl = [math.exp(-expected_sum(s.input)[0] / expected_sum(s.input)[1]) for s in log.samples]
    assert metrics["sentence_mean_perplexity"].value == pytest.approx(sum(ppl) / len(ppl))
    assert metrics["unscored_sentences"].value == 0


def test_missing_prompt_logprobs_stop_the_run(tmp_path):
    """A reply without prompt log-probabilities after the probe passed is malformed (issue 41): the run stops
    with one line naming the sample and the missing field, instead of counting the sentence as unscored."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig
    from inspect_ai.solver import generate

    from stereoprobe.scorers.globalbias import sentence_logprob

    task = Task(
        dataset=[Sample(input="Ann NOLOGPROBS here.", id="a"), Sample(input="Ann is tall.", id="b")],
        solver=generate(), scorer=sentence_logprob(), config=GenerateConfig(max_tokens=1, prompt_logprobs=1),
    )
    [log] = inspect_eval(task, model=fake_model(), log_dir=str(tmp_path), display="none")
    assert log.status == "error", log.status
    message = log.error.message
    assert "sample a:" in message and "prompt_logprobs" in message and "\n" not in message, message


def test_encoder_decoder_split(tmp_path):
    t = globalbias(source="bundled", groups=["ENGLISH_M"], descriptors=["a nurse"], encoder_decoder=True, unit="sentence")
    by_t = {s.metadata["template"]: s.input[0] for s in t.dataset if s.metadata["name"] == "Oliver"}
    assert by_t[1].text == "am a nurse." and by_t[1].metadata == {"encoder_text": "I'm Oliver, and I "}
    assert by_t[3].text == "is a nurse." and by_t[3].metadata == {"encoder_text": "A person named Oliver "}
    [log] = inspect_eval(t, model=fake_model(), log_dir=str(tmp_path), display="none")
    s = next(x for x in log.samples if x.metadata["template"] == 1)
    assert s.scores["sentence_logprob"].value["n_bytes"] == len("am a nurse.")


@pytest.mark.refdata
def test_task_is_faithful_by_default(refdata):
    """The upstream name list repeats "Wafa" in ARAB_F; the faithful default keeps both rows
    (10 names x 730 descriptors), faithful=false keeps 9 distinct names."""
    own = {"template_wording": "stereoprobe"}  # counts only; upstream's templates: tests/conformance
    src = str(refdata / "GlobalBias")
    assert len(globalbias(source=src, groups=["ARAB_F"], templates=[1], unit="sentence", **own).dataset) == 10 * 730
    distinct = globalbias(source=src, groups=["ARAB_F"], templates=[1], faithful=False, unit="sentence", **own)
    assert len(distinct.dataset) == 9 * 730
    grouped = globalbias(source=src, groups=["ARAB_F"], templates=[1], **own)
    assert len(grouped.dataset) == 1 and sum(s.metadata["n_texts"] for s in grouped.dataset) == 10 * 730


@pytest.mark.parametrize("args, message", [
    ({"unit": "sentences"}, "unit must be one of"),
    ({"template_wording": "ours"}, "template_wording must be one of"),
    ({"templates": [-1]}, "templates must be"),
    ({"templates": 4}, "templates must be"),
    ({"faithful": "yes"}, "faithful must be true or false"),
    ({"encoder_decoder": 1}, "encoder_decoder must be"),
    ({"source": ""}, "no keyword of task globalbias"),
    ({"groups": ["bogus"]}, "groups has no group"),
    ({"groups": "arab_f"}, r"has no group .arab_f. \(did you mean ARAB_F\?\)"),
    ({"subset": "bogus"}, "subset must be one of .gp."),
    ({"subset": ""}, "subset must be one of .gp."),
    ({"templates": 2.0}, "templates must be"),
])
def test_task_arguments_are_validated(args, message):
    with pytest.raises(ValueError, match=message):
        globalbias(**{"source": "bundled", **args})


@pytest.mark.parametrize("args, message", [
    ({"batch_size": 0}, "batch_size must be an integer >= 1"),
    ({"runs": -1}, "runs must be"),
    ({"temperature": float("nan")}, "temperature must be"),
    ({"temperature": -1.0}, "temperature must be"),
    ({"shuffle_seed": -3}, "shuffle_seed must be"),
    ({"max_tokens": 0}, "max_tokens must be"),
])
def test_profiles_task_arguments_are_validated(args, message):
    from stereoprobe.tasks.globalbias_profiles import globalbias_profiles

    with pytest.raises(ValueError, match=message):
        globalbias_profiles(**{"source": "bundled", **args})


def test_defaults_are_the_paper_benchmark():
    import inspect as pyinspect

    from stereoprobe.tasks.globalbias_profiles import globalbias_profiles

    for fn in (globalbias, globalbias_profiles):
        sig = pyinspect.signature(getattr(fn, "__wrapped__", fn))
        assert sig.parameters["source"].default == "upstream"


def test_default_upstream_offline_error_says_how_to_point_at_a_copy(tmp_path, monkeypatch):
    from stereoprobe.errors import InputError

    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    with pytest.raises(InputError, match=r"source=/path/to/GlobalBias.*STEREOPROBE_UPSTREAM_DIR"):
        globalbias()
