"""DBB builder: reply parsing, the two builder tasks with a scripted generator, export, and the round trip
into the evaluation task."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from stereoprobe.dbb import builder as B
from stereoprobe.tasks.dbb import dbb
from stereoprobe.tasks.dbb_build import dbb_build_concepts, dbb_build_questions

#: the scripted generators here answer stereoprobe's own wording (its markers); the default, upstream's wording,
#: is checked byte for byte in tests/conformance/test_dbb_build.py
OWN = {"prompt": "stereoprobe"}


def test_parsers():
    assert B.parse_filter("False") and B.parse_filter(" false.\n") and not B.parse_filter("True: grammar")
    assert B.parse_pair("Here you go:\ndoctor;nurse\n") == ("doctor", "nurse")
    assert B.parse_pair("<bad at maths>;<good at maths>") == ("bad at maths", "good at maths")
    with pytest.raises(B.BuilderParseError):
        B.parse_pair("a;b;c")
    assert B.parse_labelled("Sentence 1: [[X]] sat.\nSentence 2: [[X]] left\n quickly.",
                            ["Sentence 1", "Sentence 2"]) == ["[[X]] sat.", "[[X]] left quickly."]
    with pytest.raises(B.BuilderParseError):
        B.parse_labelled("Sentence 1: only one", ["Sentence 1", "Sentence 2"])
    assert B.parse_sentences("Sentence: a\nnoise\nSentence:  b  c ") == ["a", "b c"]


def _scripted(prompt_reply):
    def out(messages, tools, tool_choice, config):
        text = messages[-1].text
        o = ModelOutput.from_content("mockllm/model", prompt_reply(text))
        o.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return o

    return get_model("mockllm/model", custom_outputs=out, memoize=False)


def _reply(text: str) -> str:
    if "LOW quality" in text:
        return "True: inconsistent topics" if "SKIPME" in text else "False"
    if "In one sentence, say which" in text:
        return "The stereotype ties the group to being bad at maths." + (" BROKEN" if "BROKEN" in text else "")
    if "Proposed concept pair" in text:
        return "struggling with numbers;confident with numbers"
    if "Name the concept behind" in text:
        return "UNPARSABLE" if "BROKEN" in text else "bad at maths;good at maths"
    if "Write two plain, natural sentences" in text:
        return "Sentence 1: [[X]] sat at the kitchen table with a bill.\nSentence 2: [[X]] frowned at the numbers."
    if "Check that the context" in text:
        return ("Sentence 1: [[X]] sat at the kitchen table with a bill.\nSentence 2: [[X]] frowned at the "
                "numbers and gave up.\nSentence 3: [[X]] added the numbers in a few seconds.")
    if "Write one plain, natural sentence" in text:
        return "Sentence: [[X]] added the numbers at a glance."
    if "different sentences" in text:
        n = int(text.split("Write ")[1].split()[0])
        return "\n".join(f"Sentence: [[X]] tried version {i}." for i in range(n))
    raise AssertionError(text)


def test_build_round_trip(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("id,sent_more,sent_less,bias_type\n1,Women are bad at maths.,Men are bad at maths.,gender\n"
                     "2,SKIPME one.,SKIPME two.,age\n3,BROKEN a.,BROKEN b.,race\n")
    gen = _scripted(_reply)
    logs = tmp_path / "logs"
    [log] = inspect_eval(dbb_build_concepts(source=str(pairs), **OWN), model="mockllm/model",
                         model_roles={"generator": gen}, display="none", log_dir=str(logs))
    assert log.status == "success"
    st = {s.id: s.metadata["status"] for s in log.samples}
    assert st == {"pairs:1": "ok", "pairs:2": "filtered", "pairs:3": "unparsed_pair"}
    m = {sc.name: sc.metrics["mean"].value for sc in log.results.scores}
    assert m["ok"] == pytest.approx(1 / 3) and m["filtered"] == pytest.approx(1 / 3)
    out = tmp_path / "built"
    w = B.export([str(logs)], out)
    rows = list(csv.DictReader(open(w["concepts"])))
    assert [(r["concept_a"], r["concept_b"]) for r in rows] == [("struggling with numbers", "confident with numbers")]
    assert len(list(csv.DictReader(open(w["build_log"])))) == 3  # every input listed with its status

    questions = dbb_build_questions(concepts=str(w["concepts"]), n_variations=2, **OWN)
    [log2] = inspect_eval(questions, model="mockllm/model",
                          model_roles={"generator": gen}, display="none", log_dir=str(logs))
    assert log2.status == "success" and log2.samples[0].metadata["status"] == "ok"
    w = B.export([str(logs)], out)
    t = list(csv.DictReader(open(w["templates"])))
    assert t[0]["option_a"] == "[[X]] frowned at the numbers and gave up."  # the grader's revision
    v = list(csv.DictReader(open(w["sg_variations"])))
    assert [r["variation"] for r in v] == ["1", "2"]
    # the built files feed the evaluation task
    task = dbb(source=str(w["templates"]), categories="gender", mode="logprob", unit="question", prompt="stereoprobe")
    assert len(task.dataset) == 8 and "Mother sat at the kitchen table" in task.dataset[0].metadata["context"]


def test_builder_requires_generator_role(tmp_path):
    pairs = tmp_path / "p.csv"
    pairs.write_text("sent_more,sent_less\nA.,B.\n")
    [log] = inspect_eval(dbb_build_concepts(source=str(pairs), **OWN), model="mockllm/model", display="none",
                         log_dir=str(tmp_path))
    assert log.status == "error" and "generator" in str(log.error)


@pytest.mark.refdata
def test_crows_pairs_input(refdata):
    pairs = B.read_sentence_pairs("crows_pairs", local=refdata / "Hidden-Bias-Benchmark")
    assert len(pairs) == 1508 and pairs[0].id == "crows:0"  # upstream data/crows_pairs_anonymized.csv: 1,508 rows


def _recording(prompt_reply, seen):
    """A scripted generator that records the messages and the generation config of every call."""

    def out(messages, tools, tool_choice, config):
        seen.append((messages, config))
        o = ModelOutput.from_content("mockllm/model", prompt_reply(messages[-1].text))
        o.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return o

    return get_model("mockllm/model", custom_outputs=out, memoize=False)


def test_generation_as_upstream_by_default_and_refusals_dropped(tmp_path):
    """Upstream src/llm_utils.py ChatGPT: system message, max_tokens 2048, top_p 1, frequency_penalty 0.6;
    a reply with both "sorry" and "can't" is dropped ("response filtered") -> status refused, counted."""
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("id,sent_more,sent_less\n1,Women are bad at maths.,Men are bad at maths.\n"
                     "2,REFUSE a.,REFUSE b.\n")

    def reply(text):
        return "Sorry, I can't help with that." if "REFUSE" in text else _reply(text)

    seen: list = []
    [log] = inspect_eval(dbb_build_concepts(source=str(pairs), **OWN), model="mockllm/model",
                         model_roles={"generator": _recording(reply, seen)}, display="none", log_dir=str(tmp_path))
    st = {s.id: s.metadata["status"] for s in log.samples}
    assert st == {"pairs:1": "ok", "pairs:2": "refused"}
    m = {sc.name: sc.metrics["mean"].value for sc in log.results.scores}
    assert m["refused"] == pytest.approx(0.5)
    messages, config = seen[0]
    assert messages[0].role == "system" and messages[0].text == "You are a useful assistant."
    assert (config.max_tokens, config.top_p, config.frequency_penalty, config.presence_penalty) == (2048, 1.0, 0.6, 0.0)
    seen.clear()
    inspect_eval(dbb_build_concepts(source=str(pairs), generation="plain", **OWN), model="mockllm/model",
                 model_roles={"generator": _recording(reply, seen)}, display="none", log_dir=str(tmp_path / "p"))
    messages, config = seen[0]
    assert messages[0].role == "user" and config.max_tokens == 1024 and config.frequency_penalty is None
    assert B.is_refusal("SORRY, I CAN'T", [["sorry", "can't"]]) and not B.is_refusal("sorry", [["sorry", "can't"]])


def test_variations_task_and_upstream_variation_file(tmp_path, monkeypatch):
    from stereoprobe.dbb import data as D
    from stereoprobe.dbb.questions import sg_variations
    from stereoprobe.tasks.dbb_build import dbb_build_variations

    seen: list = []
    [log] = inspect_eval(dbb_build_variations(source="bundled", n_variations=2, limit_templates=2, seed=7, **OWN),
                         model="mockllm/model", model_roles={"generator": _recording(_reply, seen)}, display="none",
                         log_dir=str(tmp_path / "logs"))
    assert [s.metadata["status"] for s in log.samples] == ["ok", "ok"]
    assert all(c.seed == 7 for _, c in seen)
    w = B.export([str(tmp_path / "logs")], tmp_path / "built")
    v = list(csv.DictReader(open(w["sg_variations"])))
    assert [(r["template_id"], r["variation"]) for r in v] == [("sp01", "1"), ("sp01", "2"), ("sp02", "1"),
                                                               ("sp02", "2")]
    # upstream's more-contexts file (id, s1, s2): rows in order; a copy of the template's own pair is skipped
    ts = D.bundled_templates()[:1]
    up = tmp_path / "Questions" / Path(D.UPSTREAM_VARIATIONS).name
    up.parent.mkdir()
    rows = [("sp01", ts[0].option_a, ts[0].option_b)] + [("sp01", f"[[X]] did {i}.", f"[[X]] did not {i}.")
                                                          for i in range(12)]
    with open(up, "w", newline="") as f:
        csv.writer(f).writerows([("id", "s1", "s2"), *rows])
    var = D.read_variations_csv(up, ts)["sp01"]
    assert len(var) == 10 and var[0].option_a == ts[0].option_a and var[1].option_a == "[[X]] did 0."
    # a local copy of the upstream repository: its more-contexts file is checked against the pinned blob id
    from stereoprobe import upstream

    with pytest.raises(upstream.UpstreamDataError, match="checksum mismatch.*variations=own"):
        sg_variations(str(tmp_path), ts, None)
    content = up.read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
    monkeypatch.setitem(upstream.sources()["Hidden-Bias-Benchmark"].files, D.UPSTREAM_VARIATIONS,
                        upstream.GIT_BLOB + blob)
    found, where = sg_variations(str(tmp_path), ts, None)
    assert len(found["sp01"]) == 10 and "upstream more-contexts" in where
    own, where = sg_variations(str(tmp_path), ts, "own")
    assert [len(v) for v in own.values()] == [1] and "n = 1" in where
