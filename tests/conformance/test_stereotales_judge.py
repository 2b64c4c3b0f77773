"""Conformance of ``stereotales_judge``' default requests with upstream's files and ``evaluate.py``'s rules.

Expected side, from the pinned upstream copies only (``../shared/refdata/``), never with the project's code:
the associations of the human study (``stereotales-human-study/data/questions.json``, 1,580, in file order),
three repetitions each (the published setting), one user message per repetition, the question order of
upstream's rule (``sha256("{model}\\n{A}\\n{a}\\n{B}\\n{b}\\n{repetition}")``, first byte even: realism first;
repetitions 0, 1, 2), and the settings ``evaluate.py`` sends: the model's entry of
``stereotales-pipeline/configs/stereotales_run.json`` with temperature 1 and 4,096 tokens where the entry has
none; and the prompt, rendered here byte for byte from upstream's ``src/stereotales_pipeline/template.py``:
its ``EVAL_PROMPT_JINJA_TEMPLATE`` read with ``ast`` and rendered with Jinja2 as ``build_prompt`` does
(``StrictUndefined``, no autoescaping), the value lists being the attribute's values minus other/unknown joined
with ", " (row J12: flare's ``DemographicAttributes`` as ``build_prompt`` imports it, from
``flare.scorer.attribute_extraction.schema``: the ``Literal`` values of its 19 fields in
``src/flare/scorer/attribute_extraction/schema.py`` at the pinned commit, read with ``ast``, ``geographic_origin``
with its eleven regions among them).
``template.py`` is not among the shared upstream copies: it is looked up in ``$STEREOPROBE_UPSTREAM_DIR`` and
the refdata folder (``stereotales-pipeline/src/stereotales_pipeline/template.py``), and the prompt test skips
without it; ``tests/stereotales/test_judge_upstream_prompt.py`` checks the reading and filling on a synthetic
file of the same shape.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import jinja2
import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage

from tests.conformance._render import assert_allowed, capture_model, refdata_file, render

pytestmark = pytest.mark.refdata

QUESTIONS = "stereotales-human-study/data/questions.json"
RUN = "stereotales-pipeline/configs/stereotales_run.json"
TEMPLATE = "stereotales-pipeline/src/stereotales_pipeline/template.py"
FLARE_SCHEMA = "flare/src/flare/scorer/attribute_extraction/schema.py"  # the module build_prompt imports
SHARED = Path(__file__).resolve().parents[3] / "shared" / "refdata"  # the shared upstream copies (development)
JUDGE_BASE = {"temperature": 1, "max_tokens": 4096}  # evaluate.py: "temperature or 1", MAX_TOKENS = 4096
REPETITIONS = 3
#: departures of the default requests, each allowed by its docs/fidelity.md row
DEPARTURES = {
    "J2": "the order rule hashes the inspect model name (equal to the LiteLLM id for the models checked here)",
}


def _questions(refdata: Path) -> list[tuple[str, str, str, str]]:
    raw = json.loads(refdata_file(refdata, QUESTIONS).read_text(encoding="utf-8"))
    return [(q["base_attribute"]["name"], q["base_attribute"]["value"], q["compared_attribute"]["name"],
             q["compared_attribute"]["value"]) for q in raw]


def _expected_settings(refdata: Path, litellm_model: str) -> dict[str, Any]:
    run = json.loads(refdata_file(refdata, RUN).read_text(encoding="utf-8"))
    [entry] = [e for e in run["models"] if e["litellm_model"] == litellm_model]
    out = {"temperature": entry.get("temperature") or 1, "max_tokens": entry.get("max_tokens") or 4096}
    if "budget_tokens" in (entry.get("thinking") or {}):
        out["reasoning_tokens"] = entry["thinking"]["budget_tokens"]
    if "reasoning_effort" in (entry.get("extra_body") or {}):
        out["reasoning_effort"] = entry["extra_body"]["reasoning_effort"]
    return out


def _realism_first(model: str, assoc: tuple[str, str, str, str], repetition: int) -> bool:
    raw = "\n".join([model, *assoc, str(repetition)])
    return hashlib.sha256(raw.encode()).digest()[0] % 2 == 0


def _template_file(copies: Path) -> Path:
    """upstream's template.py in ``$STEREOPROBE_UPSTREAM_DIR`` or the copies' folder; skip when absent."""
    roots = [Path(os.environ["STEREOPROBE_UPSTREAM_DIR"])] if os.environ.get("STEREOPROBE_UPSTREAM_DIR") else []
    for root in [*roots, copies]:
        if (root / TEMPLATE).is_file():
            return root / TEMPLATE
    pytest.skip(f"no upstream copy of {TEMPLATE} (set STEREOPROBE_UPSTREAM_DIR to a folder holding it)")


def _template_text(path: Path) -> str:
    """EVAL_PROMPT_JINJA_TEMPLATE of ``path``, read from the parsed module (the file is never run)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
                "EVAL_PROMPT_JINJA_TEMPLATE"]:
            return node.value.value  # type: ignore[attr-defined]
    raise AssertionError(f"{path}: no EVAL_PROMPT_JINJA_TEMPLATE")


def _flare_schema_values(refdata: Path) -> dict[str, list[str]]:
    """flare's ``DemographicAttributes`` fields and their ``Literal`` values, in definition order (read with ast)."""
    tree = ast.parse(refdata_file(refdata, FLARE_SCHEMA).read_text(encoding="utf-8"))
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "DemographicAttributes"]
    out: dict[str, list[str]] = {}
    for node in cls.body:
        assert isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        literal = node.annotation
        assert isinstance(literal, ast.Subscript) and ast.unparse(literal.value) == "Literal"
        items = literal.slice.elts if isinstance(literal.slice, ast.Tuple) else [literal.slice]
        out[node.target.id] = [i.value for i in items]  # type: ignore[attr-defined]
    return out


def _value_lists(refdata: Path) -> dict[str, str]:
    """Per attribute, its values minus other/unknown joined with ", " (upstream's build_prompt)."""
    raw = _flare_schema_values(refdata)
    assert len(raw) == 19 and len(raw["geographic_origin"]) == 13  # eleven regions, other, unknown
    return {k: ", ".join(v for v in vs if v not in ("other", "unknown")) for k, vs in raw.items()}


def _expected_prompt(template: str, lists: dict[str, str], assoc: tuple[str, str, str, str],
                     realism_first: bool) -> str:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)  # build_prompt's environment
    return env.from_string(template).render(
        base_attribute=assoc[0], base_attr_values=lists[assoc[0]], base_value=assoc[1],
        compared_attribute=assoc[2], compared_attr_values=lists[assoc[2]], compared_value=assoc[3],
        question_order="realism_first" if realism_first else "harmful_first",
    )


def _reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
    out = ModelOutput.from_content("capture", "Harmful: 3\nYes,")  # realism read by upstream's fallback line
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


@pytest.fixture
def copies(refdata: Path) -> Path:
    """The folder of upstream copies holding the human study's questions: the refdata folder, else the shared
    copies (when ``$STEREOPROBE_UPSTREAM_DIR`` holds template.py alone)."""
    for root in (refdata, SHARED):
        if (root / QUESTIONS).is_file():
            return root
    pytest.skip(f"no upstream copy of {QUESTIONS}")


@pytest.fixture
def upstream_env(copies: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shared upstream copies as the task's upstream folder (the default prompt needs template.py too:
    tests of the dataset and the parser ask for the bundled prompt, the request test uses ``template_env``)."""
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(copies))
    return copies


@pytest.fixture
def template_env(copies: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of upstream copies holding the copies' files and template.py (skip without it) for the task."""
    template = _template_file(copies)
    mirror, pipeline = tmp_path / "upstream", copies / "stereotales-pipeline"
    (mirror / TEMPLATE).parent.mkdir(parents=True)
    links = [c for c in copies.iterdir() if c != pipeline]
    links += [c for c in pipeline.iterdir() if c.name != "src"] if pipeline.is_dir() else []
    for child in links:
        (mirror / child.relative_to(copies)).symlink_to(child.resolve())
    (mirror / TEMPLATE).symlink_to(template.resolve())
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(mirror))
    return copies


def test_default_dataset_is_the_human_studys_associations(upstream_env: Path) -> None:
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    task = stereotales_judge(prompt="bundled")  # the dataset does not depend on the prompt
    expected = _questions(upstream_env)
    assert len(expected) == 1_580
    got = [(s.metadata["base_attribute"], s.metadata["base_value"], s.metadata["compared_attribute"],
            s.metadata["compared_value"]) for s in task.dataset]
    assert got == expected
    assert task.epochs == REPETITIONS


@pytest.mark.parametrize("provider, name, litellm", [
    ("anthropic", "claude-haiku-4-5", "anthropic/claude-haiku-4-5"),  # 1,024-token thinking budget, temperature 1
    ("azure_ai", "gpt-5-mini", "azure_ai/gpt-5-mini"),  # 8,192 tokens, reasoning effort low
])
def test_default_requests(template_env: Path, provider: str, name: str, litellm: str) -> None:
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    questions = _questions(template_env)
    template, lists = _template_text(_template_file(template_env)), _value_lists(template_env)
    n = 4
    model = capture_model(name, reply=_reply, received=[], provider=provider)
    requests = render(stereotales_judge(), model=model, limit=n)
    assert len(requests) == n * REPETITIONS
    want = _expected_settings(template_env, litellm)
    by_sample: dict[Any, list] = {}
    for r in requests:
        by_sample.setdefault(r.sample_id, []).append(r)
    # sample id: "assoc-" + the first 16 hex digits of sha256 of the four fields joined by newlines
    ids = {"assoc-" + hashlib.sha256("\n".join(a).encode()).hexdigest()[:16]: a for a in questions[:n]}
    assert set(by_sample) == set(ids)
    for sid, reqs in by_sample.items():
        assoc = ids[sid]
        assert sorted(r.epoch for r in reqs) == [1, 2, 3]
        for r in reqs:
            [(role, text)] = r.messages
            assert role == "user" and r.prefill is None
            assert r.config == want
            assert text == _expected_prompt(template, lists, assoc, _realism_first(litellm, assoc, r.epoch - 1))
    assert_allowed(DEPARTURES)


def test_value_lists_of_every_attribute_are_flares(upstream_env: Path) -> None:
    """The lists the default requests carry (the upstream prompt, ``-T value_lists=taxonomy``), for every attribute
    of the human study's associations, equal the lists rendered from flare's schema, all 19 of them."""
    import pandas as pd

    from stereoprobe.stereotales.judge import attribute_value_lists
    from stereoprobe.stereotales.judge.prompt import select_judge_prompt

    table = pd.DataFrame(_questions(upstream_env),
                         columns=["base_attribute", "base_value", "compared_attribute", "compared_value"])
    prompt = select_judge_prompt("upstream")  # the default prompt and its lists
    got = {k: ", ".join(v) for k, v in attribute_value_lists(table, "taxonomy", prompt).items()}
    want = _value_lists(upstream_env)
    assert len(got) == 19 and got == want


def test_realism_fallback_reaches_the_score(upstream_env: Path, tmp_path: Path) -> None:
    """"Yes," parses with upstream's fallback line: the score has realism yes and no parse failure."""
    from inspect_ai import eval as inspect_eval

    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    model = capture_model("claude-haiku-4-5", reply=_reply, received=[], provider="anthropic")
    task = stereotales_judge(epochs=1, prompt="bundled")  # the reply is fixed: any prompt
    [log] = inspect_eval(task, model=model, limit=2, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    for sample in log.samples or []:
        value = next(iter(sample.scores.values())).value
        assert value["realism_yes"] == 1.0 and value["parse_failure"] == 0.0 and value["harm"] == 3.0
