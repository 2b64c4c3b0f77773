"""Conformance of ``dbb``'s default requests (sampled) and of its log-probability mode with upstream's files.

Expected side, from upstream's files in ``../shared/refdata/Hidden-Bias-Benchmark`` and the paper only (never
the project's code): the Table 11 instruction as the bytes of ``src/prompt_instructions/evaluate_probs.txt``;
the question of each request as the template's own row of ``Questions/20241122-2120_all_data_questions074.csv``
(its ``Context`` with ``[[X]]`` filled by a description of ``data/descriptors.json`` for the question's
category, as written there, alone or after a base name or its possessive; options a) and b) its ``s1`` and
``s2`` sentences with ``[[X]]`` filled by one pronoun pair of that file, all compared byte for byte; option a)
the ``s1`` sentence, the first concept, in every epoch); upstream's system message (every
``getOutput`` of ``src/llm_utils.py`` sends "You are a useful assistant."); the paper's settings (Appendix A)
and counts (§3.2: 50 questions per template; §5: at least 10 answers per question).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, Logprob, Logprobs, ModelOutput, ModelUsage
from inspect_ai.model import TopLogprob

from stereoprobe.tasks.dbb import dbb
from tests.conformance._render import Request, assert_allowed, refdata_file, render, text_reply

pytestmark = pytest.mark.refdata

ROOT = "Hidden-Bias-Benchmark"
QUESTIONS = f"{ROOT}/Questions/20241122-2120_all_data_questions074.csv"
#: upstream src/llm_utils.py, every getOutput (a43f17f); the file is not among the reference copies
SYSTEM = "You are a useful assistant."
#: paper Appendix A: the generation settings of every experiment; no top-k, no seed
SAMPLED = {"temperature": 0.8, "top_p": 1.0, "frequency_penalty": 0.6, "max_tokens": 2048}
EPOCHS = 10  # paper §5: each question answered at least 10 times
PER_TEMPLATE = 50  # paper §3.2: 1,547 templates, 77,350 questions
TEMPLATES = ["0", "777", "1546"]  # first, middle, last row of the questions file (each has all five categories)
SAMPLED_TEMPLATES = ["777"]  # 50 questions x 10 epochs
CATEGORY_KEYS = {"age": "age", "gender": "gender_and_sex", "race": "race_ethnicity", "ses": "socioeconomic_class",
                 "religion": "religions"}
#: how each question is laid out after the instruction (the upstream code does not say)
LAYOUT = re.compile(r"\A(?P<instruction>.*)\n\nContext: (?P<context>.*)\nChoices:\na\) (?P<a>.*)\nb\) (?P<b>.*)\Z",
                    re.S)
DEPARTURES = {
    "D3": "names=draw: the published name draws (data/Bias-Dataset.csv) are not among the reference copies",
    "D6": "logprob mode (both option orders, top-20 log-probabilities of one token) is stereoprobe's extension",
    "D7": "the question's layout after the Table 11 instruction (Context:/Choices:) is ours",
    "G20": "logprob mode: one capability probe request per run and model before the first question",
}
PROBE_TEXT = "The sky is blue."  # G20's probe request: one user message, both kinds of log-probabilities asked
PROBE = {"logprobs": True, "top_logprobs": 20, "prompt_logprobs": 1, "max_tokens": 1, "temperature": 0.0}


def _descriptions(refdata: Path) -> dict[str, list[str]]:
    raw = json.loads(refdata_file(refdata, f"{ROOT}/data/descriptors.json").read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    for cat, key in CATEGORY_KEYS.items():
        entries = [e for group in raw[key].values() for e in group]
        out[cat] = sorted({(e[0] if isinstance(e, list) else e).strip(" ,") for e in entries})
    return out


def _fillers(refdata: Path) -> dict[str, set[str]]:
    """What may stand for ``[[X]]`` in a question's context, per category, byte for byte: a description of
    ``data/descriptors.json`` as it is written there, alone, after a base name (``name`` entries: "Lee, a
    Christian,") or after a base name's possessive ("Lee's grandmother, ...")."""
    raw = json.loads(refdata_file(refdata, f"{ROOT}/data/descriptors.json").read_text(encoding="utf-8"))
    names = [e[0] if isinstance(e, list) else e for group in raw["name"].values() for e in group]
    out: dict[str, set[str]] = {}
    for cat, key in CATEGORY_KEYS.items():
        texts = {e[0] if isinstance(e, list) else e for group in raw[key].values() for e in group}
        out[cat] = texts | {n + t for n in names for t in texts} | {f"{n}'s {t}" for n in names for t in texts}
    return out


def _pronouns(refdata: Path) -> list[tuple[str, str]]:
    """Every (subject, possessive) pronoun pair of ``data/descriptors.json`` (its ``[text, subject, possessive]``
    entries), in first-appearance order."""
    raw = json.loads(refdata_file(refdata, f"{ROOT}/data/descriptors.json").read_text(encoding="utf-8"))
    pairs = [(e[1], e[2]) for cat in raw.values() for group in cat.values() for e in group
             if isinstance(e, list) and len(e) == 3]
    return list(dict.fromkeys(pairs))


def _fill_option(sentence: str, pronouns: tuple[str, str]) -> str:
    """An option sentence as upstream's notebook fills it for one question: ``[[X]]'s`` with the possessive
    pronoun when the sentence holds it (then only that form), else ``[[X]]`` with the subject pronoun."""
    subject, possessive = pronouns
    if "[[X]]'s" in sentence:
        return sentence.replace("[[X]]'s", possessive)
    return sentence.replace("[[X]]", subject)


def _options(row: pd.Series, pronouns: list[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """{(s1 text, s2 text) of one question: option A first} for every pronoun pair a question may take; the
    sent options must be one of these byte for byte (a) and b) filled with the same person's pronouns)."""
    return {p[0]: (_fill_option(row["s1"], p), _fill_option(row["s2"], p)) for p in pronouns}


def _check_question(req: Request, row: pd.Series, fillers: set[str], instruction: str) -> tuple[str, str]:
    """Check one request's text against the template's upstream row; (option a, option b) as sent."""
    assert req.prefill is None and [r for r, _ in req.messages] == ["system", "user"]
    assert req.messages[0][1] == SYSTEM
    m = LAYOUT.match(req.messages[1][1])
    assert m, req.messages[1][1]
    assert m["instruction"] == instruction  # byte for byte: evaluate_probs.txt
    before, after = row["Context"].split("[[X]]", 1)
    ctx = m["context"]
    assert ctx.startswith(before) and ctx.endswith(after), (ctx, row["Context"])
    assert ctx[len(before):len(ctx) - len(after)] in fillers, (ctx, req.sample_id)  # byte for byte
    return m["a"], m["b"]


@pytest.fixture(scope="module")
def upstream(refdata: Path) -> tuple[pd.DataFrame, dict[str, set[str]], str]:
    rows = pd.read_csv(refdata_file(refdata, QUESTIONS))
    instruction = refdata_file(refdata, f"{ROOT}/src/prompt_instructions/evaluate_probs.txt").read_text(
        encoding="utf-8")
    return rows, _fillers(refdata), instruction


def _category(req: Request) -> str:
    return str(req.sample_id).split(":")[1]


@pytest.mark.slow  # 500 requests through inspect (about a minute on a shared CPU)
def test_sampled_default_requests(refdata: Path, upstream) -> None:
    rows, fillers, instruction = upstream
    pronouns = _pronouns(refdata)
    task = dbb(source=str(refdata / ROOT), names="draw", templates=SAMPLED_TEMPLATES)
    got = render(task, reply=text_reply("a)"))
    assert len(got) == len(SAMPLED_TEMPLATES) * PER_TEMPLATE * EPOCHS
    epochs: dict[str, list[int]] = defaultdict(list)
    for req in got:
        tid = str(req.sample_id).split(":")[0]
        row = rows.iloc[int(tid)]
        a, b = _check_question(req, row, fillers[_category(req)], instruction)
        assert req.config == SAMPLED, req.config
        # option A (the first concept, s1) is choice a) in every epoch: the paper shows no shuffled order; both
        # options byte for byte the row's sentences filled with one pronoun pair of descriptors.json
        assert (a, b) in _options(row, pronouns).values(), (a, b)
        epochs[str(req.sample_id)].append(req.epoch)
    assert all(sorted(e) == list(range(1, EPOCHS + 1)) for e in epochs.values())
    per_category = Counter(_category(Request(k, 1, None, (), None)) for k in epochs)
    assert per_category == Counter({c: n * len(SAMPLED_TEMPLATES) for c, n in _per_template(refdata).items()})


def _per_template(refdata: Path) -> dict[str, int]:
    """Questions per template and category: one per description of ``descriptors.json`` (group x type), age
    without its child group (the paper compares young with old: Table 5, 3 test instances per template)."""
    raw = json.loads(refdata_file(refdata, f"{ROOT}/data/descriptors.json").read_text(encoding="utf-8"))
    counts = {c: sum(len(v) for g, v in raw[k].items() if not (c == "age" and g == "child"))
              for c, k in CATEGORY_KEYS.items()}
    assert sum(counts.values()) == PER_TEMPLATE
    return counts


def _logprob_reply(messages, config) -> ModelOutput:  # type: ignore[no-untyped-def]
    top = [TopLogprob(token="a", logprob=math.log(0.6)), TopLogprob(token="b", logprob=math.log(0.4))]
    choice = ChatCompletionChoice(message=ChatMessageAssistant(content="a", source="generate"), stop_reason="max_tokens",
                                  logprobs=Logprobs(content=[Logprob(token="a", logprob=top[0].logprob,
                                                                     top_logprobs=top)]))
    return ModelOutput(model="capture", choices=[choice], usage=ModelUsage(input_tokens=1, output_tokens=1,
                                                                           total_tokens=2))


def test_logprob_mode_requests(refdata: Path, upstream) -> None:
    rows, fillers, instruction = upstream
    pronouns = _pronouns(refdata)
    task = dbb(source=str(refdata / ROOT), names="draw", templates=TEMPLATES, mode="logprob")
    got = render(task, reply=_logprob_reply)
    probes = [r for r in got if r.messages == (("user", PROBE_TEXT),)]
    assert len(probes) == 1 and probes[0].config == PROBE, probes  # G20
    got = [r for r in got if r not in probes]
    assert len(got) == len(TEMPLATES) * PER_TEMPLATE * 2
    orders: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for req in got:
        row = rows.iloc[int(str(req.sample_id))]
        a, b = _check_question(req, row, set().union(*fillers.values()), instruction)
        assert req.config == {"logprobs": True, "top_logprobs": 20, "max_tokens": 1, "temperature": 0.0}
        options = _options(row, pronouns).values()
        s1_first, s2_first = (a, b) in options, (b, a) in options  # byte for byte, in either order
        assert s1_first != s2_first, (a, b)
        orders[(req.messages[1][1].split("\nChoices:")[0], "|".join(sorted((a, b))))].append(s1_first)
    # every question twice, once in each option order
    assert all(sorted(o) == [False, True] for o in orders.values())


def test_departures_name_fidelity_rows() -> None:
    assert_allowed(DEPARTURES)


def test_default_instruction_is_read_from_the_upstream_mirror(refdata: Path, tmp_path: Path, monkeypatch) -> None:
    """The default instruction comes from upstream's file at run time, whatever the templates' source: with our
    bundled templates and upstream's repository found through ``$STEREOPROBE_UPSTREAM_DIR``, every request's
    user message starts with the bytes of ``evaluate_probs.txt`` (outer whitespace stripped) and a blank line;
    ``-T prompt=stereoprobe`` sends none of them."""
    from stereoprobe.tasks.dbb import dbb_sg

    instruction = refdata_file(refdata, f"{ROOT}/src/prompt_instructions/evaluate_probs.txt").read_text(
        encoding="utf-8").strip()
    story = refdata_file(refdata, f"{ROOT}/src/prompt_instructions/evaluate_perplexity.txt").read_text(
        encoding="utf-8").strip()
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))  # never a cached copy
    task = dbb(source="bundled", faithful=False, names="draw", categories="ses", limit_templates=1, mode="logprob",
               unit="question")
    assert task.metadata["prompt"] == "upstream"
    users = [s.input[-1].text for s in task.dataset]
    assert users and all(u.startswith(instruction + "\n\nContext: ") for u in users)
    sg = dbb_sg(source="bundled", faithful=False, names="draw", categories="ses", limit_templates=1, unit="question")
    assert all(str(s.input).startswith(story + "\n\nContext: ") for s in sg.dataset)
    own = dbb(source="bundled", faithful=False, names="draw", categories="ses", limit_templates=1, mode="logprob",
              unit="question", prompt="stereoprobe")
    first_line = instruction.splitlines()[0]
    assert all(first_line not in s.input[-1].text for s in own.dataset)
