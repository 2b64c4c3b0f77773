"""Conformance of the DBB builder's default requests with upstream ``src/concept_analysis.py`` and
``src/q_generate.py``, byte for byte.

Expected side, without the project's code: each upstream request is an f-string of those files (found here with
``ast`` by the name it is assigned to, in ``analyze_concept``'s branch for the dataset or in ``qa_generate``) and
evaluated here by Python itself (after checking it holds nothing but text and names), its names bound to the
instruction file's text (``src/prompt_instructions/*.txt``, after ``q_generate.py``'s ``.replace`` of its
markers) and the call's data as upstream passes it (replies as ``getOutput`` returns them, concepts as
``reply.split(';')`` gives them, sentences as ``q_generate.py`` splits them). Per CrowS-Pairs pair upstream asks
its generator (``ChatGPT``, temperature 0.2, the script's default) ``filter_ins``, ``prompt_summ`` and
``prompt_conepts``, then its grader (``ChatGPT("gpt-4o")``, temperature 0.3) ``prompt``; SOFA (``prompt_exp``,
``prompt``, ``prompt_refine``) and BBQ (``prompt``, ``prompt_exp``, ``prompt_refine``) likewise; per concept
pair ``q_generate.py`` asks ``prompt1``, ``prompt2`` (temperature 0.3) and its grader ``prompt``. The DBB-SG
variations are ``qa_generate2_more_sentences.txt`` with its markers filled (no code of the pinned commit reads
that file: row D18). Every call sends the system message "You are a useful assistant." with ``max_tokens=2048,
top_p=1, frequency_penalty=0.6, presence_penalty=0`` (``src/llm_utils.py`` ``ChatGPT.getOutput``).
"""

from __future__ import annotations

import ast
import csv
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput

from stereoprobe.tasks.dbb_build import dbb_build_concepts, dbb_build_questions, dbb_build_variations
from tests.conformance._render import assert_allowed, capture_model, refdata_file, render, text_reply
from tests.conformance.test_dbb import ROOT, SYSTEM

pytestmark = pytest.mark.refdata

CHATGPT = {"max_tokens": 2048, "top_p": 1.0, "frequency_penalty": 0.6, "presence_penalty": 0.0}
TEMPERATURE = {"generator": 0.2, "grader": 0.3}
EXPLANATION, PAIR = "EXPLANATION\n", "doctor ; nurse"  # replies as they come: upstream neither strips nor parses
N_PAIRS = 6
INSTRUCTIONS = "src/prompt_instructions/"
DEPARTURES = {"D18": "the DBB-SG variation prompt (qa_generate2_more_sentences.txt) is read by no upstream code: "
                     "its markers are filled with the context and each concept"}


def _read(refdata: Path, rel: str) -> str:
    return refdata_file(refdata, f"{ROOT}/{rel}").read_text(encoding="utf-8")


def _assigned(refdata: Path, module: str, function: str, branch: str | None, target: str) -> ast.expr:
    """The expression assigned to ``target`` in ``function`` of upstream ``module`` (in the ``if`` whose test
    compares ``data`` with ``branch``); exactly one."""
    tree = ast.parse(_read(refdata, module))
    [fn] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    scope: ast.AST = fn
    if branch is not None:
        [scope] = [n for n in ast.walk(fn) if isinstance(n, ast.If) and any(
            isinstance(c, ast.Compare) and isinstance(c.comparators[0], ast.Constant)
            and c.comparators[0].value == branch for c in ast.walk(n.test))][:1]
        scope = ast.Module(body=scope.body, type_ignores=[])  # type: ignore[attr-defined]
    [value] = [n.value for n in ast.walk(scope) if isinstance(n, ast.Assign)
               and [getattr(t, "id", None) for t in n.targets] == [target]]
    return value


def _fstring(refdata: Path, module: str, function: str, branch: str | None, target: str, /, **names: str) -> str:
    """Upstream's f-string evaluated by Python with ``names`` (it may hold only text and plain names)."""
    node = _assigned(refdata, module, function, branch, target)
    allowed = (ast.JoinedStr, ast.Constant, ast.FormattedValue, ast.Name, ast.Load)
    assert all(isinstance(n, allowed) for n in ast.walk(node)), ast.dump(node)
    return eval(compile(ast.Expression(node), module, "eval"), {"__builtins__": {}}, dict(names))  # noqa: S307


def _check(reqs: list, want: list[tuple[str, str]], temperature: dict[str, float]) -> None:
    """The requests of one item: upstream's roles and texts in upstream's order, system message, settings."""
    assert [(r.role, r.messages[1][1]) for r in reqs] == want  # byte for byte
    for r in reqs:
        assert r.prefill is None and [m[0] for m in r.messages] == ["system", "user"]
        assert r.messages[0][1] == SYSTEM
        assert r.config == {**CHATGPT, "temperature": temperature[r.role]}, (r.role, r.config)


def _by_sample(got: list) -> dict[str, list]:
    out: dict[str, list] = defaultdict(list)
    for r in got:
        out[str(r.sample_id)].append(r)
    return out


def _concept_roles(refdata: Path, first: tuple[str, ...]) -> dict:
    """Capturing generator and grader: the generator answers "False" to a request starting with an instruction
    of ``first`` (the filter), the pair to one asking for concepts, else the explanation; the grader the pair."""
    pair_steps = tuple(_read(refdata, INSTRUCTIONS + f) for f in ("analysis_2.txt", "analysis_sofa.txt",
                                                                  "analysis_bbq.txt"))

    def generator(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        text = messages[-1].text
        answer = "False" if text.startswith(first) else PAIR if text.startswith(pair_steps) else EXPLANATION
        return text_reply(answer)(messages, config)

    received: list = []
    return {"generator": capture_model("generator", generator, received),
            "grader": capture_model("grader", text_reply(PAIR), received)}


def test_concept_roles_requests_crows_pairs(refdata: Path) -> None:
    pairs = pd.read_csv(refdata_file(refdata, f"{ROOT}/data/crows_pairs_anonymized.csv"), index_col=0)
    task = dbb_build_concepts(source="crows_pairs", local=str(refdata / ROOT))
    samples = list(task.dataset)[:N_PAIRS]
    models = _concept_roles(refdata, (_read(refdata, INSTRUCTIONS + "filter_questions.txt"),))
    got = render(task, model=models["generator"], model_roles=models, sample_id=[s.id for s in samples])
    assert len(got) == 4 * N_PAIRS  # filter, explanation, pair, grader per kept pair
    c1, c2 = PAIR.split(";")
    for s in samples:
        row = pairs[pairs["sent_more"] == s.input].iloc[0]
        pair = {"sent_more": row["sent_more"], "sent_less": row["sent_less"]}
        f = "src/concept_analysis.py", "analyze_concept", "crows"
        want = [("generator", _fstring(refdata, *f, "filter_ins",
                                       instruction=_read(refdata, INSTRUCTIONS + "filter_questions.txt"), **pair)),
                ("generator", _fstring(refdata, *f, "prompt_summ",
                                       instruction=_read(refdata, INSTRUCTIONS + "analysis_1.txt"), **pair)),
                ("generator", _fstring(refdata, *f, "prompt_conepts",
                                       instruction=_read(refdata, INSTRUCTIONS + "analysis_2.txt"),
                                       response1=EXPLANATION)),
                ("grader", _fstring(refdata, *f, "prompt", response1=EXPLANATION, concept1=c1, concept2=c2))]
        _check(_by_sample(got)[str(s.id)], want, TEMPERATURE)


def _write(path: Path, rows: list[dict[str, str]]) -> str:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return str(path)


def test_concept_roles_requests_sofa_and_bbq(refdata: Path, tmp_path: Path, monkeypatch) -> None:
    """SOFA and BBQ records (local exports with the datasets' own columns), upstream files through
    ``$STEREOPROBE_UPSTREAM_DIR``."""
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    sofa = _write(tmp_path / "sofa.csv", [{"id": "1", "category": "disabled", "target": "deaf people",
                                            "stereotype": "are the butt of jokes"}])
    bbq = _write(tmp_path / "bbq.csv", [{"example_id": "3", "category": "Age", "question_polarity": "neg",
                                          "context_condition": "ambig", "question": "Who was forgetful?",
                                          "context": "The grandson and the grandfather met for lunch."}])
    c1, c2 = PAIR.split(";")
    f = "src/concept_analysis.py", "analyze_concept"
    grade = {"summ_bias": EXPLANATION, "concept1": c1, "concept2": c2}
    want = {
        "sofa": [("generator", _fstring(refdata, *f, "sofa", "prompt_exp", category="disability",
                                        target="deaf people", stereotype="are the butt of jokes")),
                 ("generator", _fstring(refdata, *f, "sofa", "prompt",
                                        instruction=_read(refdata, INSTRUCTIONS + "analysis_sofa.txt"),
                                        summ_bias=EXPLANATION, target="deaf people",
                                        stereotype="are the butt of jokes")),
                 ("grader", _fstring(refdata, *f, "sofa", "prompt_refine", **grade))],
        "bbq": [("generator", _fstring(refdata, *f, "bbq", "prompt", q="Who was forgetful?",
                                       instruction=_read(refdata, INSTRUCTIONS + "analysis_bbq.txt"))),
                ("generator", _fstring(refdata, *f, "bbq", "prompt_exp", q="Who was forgetful?",
                                       instruction=_read(refdata, INSTRUCTIONS + "summarize_bias.txt"),
                                       context="The grandson and the grandfather met for lunch.")),
                ("grader", _fstring(refdata, *f, "bbq", "prompt_refine", **grade))]}
    for source, local in (("sofa", sofa), ("bbq", bbq)):
        models = _concept_roles(refdata, ())
        got = render(dbb_build_concepts(source=source, local=local), model=models["generator"], model_roles=models)
        _check(got, want[source], TEMPERATURE)


SENTENCES = ("Sentence 1: [[X]] sat on the bench.\nSentence 2: [[X]] smiled.", "Sentence: [[X]] frowned.",
             "Sentence 1: [[X]] sat on the bench.\nSentence 2: [[X]] smiled.\nSentence 3: [[X]] frowned.")


def _question_models() -> dict:
    def generator(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        text = messages[-1].text
        answer = ("Sentence: [[X]] one.\nSentence: [[X]] two." if "different sentences" in text
                  else SENTENCES[1] if "[[X]] sat on the bench." in text else SENTENCES[0])
        return text_reply(answer)(messages, config)

    received: list = []
    return {"generator": capture_model("generator", generator, received),
            "grader": capture_model("grader", text_reply(SENTENCES[2]), received)}


def test_question_roles_requests(refdata: Path, tmp_path: Path, monkeypatch) -> None:
    """``dbb_build_questions``: q_generate.py's three requests, then the variations of each option."""
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    concepts = _write(tmp_path / "concepts.csv", [{"concept_id": "c1", "concept_a": "nurse", "concept_b": "doctor",
                                                   "explanation": "Nurses are assumed to be women."}])
    models = _question_models()
    got = render(dbb_build_questions(concepts=concepts), model=models["generator"], model_roles=models)
    # upstream's own splitting of the replies (q_generate.py)
    sentence_1 = SENTENCES[0].split("Sentence 1:")[1].split("Sentence 2:")[0].strip()
    v1, v2 = SENTENCES[0].split("Sentence 2:")[1].strip(), SENTENCES[1].split("Sentence:")[1].strip()
    graded_1 = SENTENCES[2].split("Sentence 1:")[1].split("Sentence 2:")[0].strip()
    q = "src/q_generate.py", "qa_generate", None
    more = _read(refdata, INSTRUCTIONS + "qa_generate2_more_sentences.txt")
    want = [("generator", _fstring(refdata, *q, "prompt1", instruction1=_read(
                refdata, INSTRUCTIONS + "qa_generate1.txt").replace("[[picked_concept1]]", "nurse"))),
            ("generator", _fstring(refdata, *q, "prompt2", instruction2=_read(
                refdata, INSTRUCTIONS + "qa_generate2.txt").replace("[[picked_concept2]]", "doctor").replace(
                "[[sentence1_generated]]", sentence_1))),
            ("grader", _fstring(refdata, *q, "prompt", picked_concept1="nurse", picked_concept2="doctor",
                                explanation="Nurses are assumed to be women.", sentence_1=sentence_1,
                                sentence_2_v1=v1, sentence_2_v2=v2))]
    want += [("generator", more.replace("[[picked_concept2]]", c).replace("[[sentence1_generated]]", graded_1))
             for c in ("nurse", "doctor")]
    _check(got, want, {"generator": 0.3, "grader": 0.3})


def test_variation_requests(refdata: Path, tmp_path: Path, monkeypatch) -> None:
    """``dbb_build_variations`` on an upstream template: qa_generate2_more_sentences.txt per concept."""
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    row = pd.read_csv(refdata_file(refdata, f"{ROOT}/Questions/20241122-2120_all_data_questions074.csv")).iloc[0]
    models = _question_models()
    got = render(dbb_build_variations(source=str(refdata / ROOT), limit_templates=1), model=models["generator"],
                 model_roles=models)
    more = _read(refdata, INSTRUCTIONS + "qa_generate2_more_sentences.txt")
    want = [("generator", more.replace("[[picked_concept2]]", c).replace("[[sentence1_generated]]", row["Context"]))
            for c in (row["bias type1"], row["bias type2"])]
    assert [(r.role, r.messages[1][1]) for r in got] == want


def test_departures_name_fidelity_rows() -> None:
    assert_allowed(DEPARTURES)
