"""Conformance of ``stereotales``' default requests (story, refusal detector, extractors) with upstream's files.

Expected side, rendered here from the pinned upstream copies only (``../shared/refdata/``), never with the
project's code:

- story prompts as ``step_00_generate_samples.py`` of Giskard-AI/stereotales-pipeline builds them from
  ``configs/stereotales_seeds``: per language, for each base attribute (upstream's ``BASE_ATTRIBUTES`` order),
  for each scenario (YAML order, groups flattened), for each value with a template choice,
  ``prompts.<lang>.yaml["scenario_based"].format(context=scenario, character=choice)``; 2,844 per language;
  one user message, temperature 1 and 4,096 tokens, overridden by the model's entry of
  ``configs/stereotales_run.json``;
- the refusal request as flare's ``detect_refusal``: ``REFUSAL_JUDGE_PROMPT_TEMPLATE.format(language=<upstream
  code>, scenario_key=<English scenario>, attribute_value_key=<English seed value>, assistant_output=<the story
  as that call's argument transforms it>)``; the extraction request as flare's ``extract_attributes``: the
  template's ``.replace(<marker>, <story as that call passes it>)``. Both calls are read from flare's
  ``src/flare/scorer/attribute_extraction/scorer.py`` with ``ast`` (``story.strip()`` at the pinned commit);
  each role's settings: flare's scorer defaults (temperature 0, 4,096 tokens; ``ScorerParams`` in flare
  ``src/flare/schema.py``) overridden by its ``generation_kwargs``.

flare's two prompt texts, as its ``prompts.py`` evaluates them at import time (the extraction one an f-string
filled from ``DemographicAttributes.model_json_schema()``), are recorded below by SHA-256: the hashes of the
renderings made with flare's own module when the reference copies were taken. The task's reading of the pinned
``prompts.py``/``schema.py`` must give these exact bytes (and equal the renderings themselves where the reference
copies still hold them); the request tests then use the texts so verified.

Rendered side: the task's default requests as capturing models named like the published models receive them.
"""

from __future__ import annotations

import ast
import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage

from tests.conformance._render import Request, _key, _split, assert_allowed, capture_model, refdata_file, settings

pytestmark = pytest.mark.refdata

SEEDS = "stereotales-pipeline/configs/stereotales_seeds"
RUN = "stereotales-pipeline/configs/stereotales_run.json"
FLARE_SCORER = "flare/src/flare/scorer/attribute_extraction/scorer.py"
#: SHA-256 of flare's two prompt texts as its own prompts.py renders them (d44bdfe), and the renderings' files
FLARE_TEXTS = {
    "REFUSAL_JUDGE_PROMPT_TEMPLATE": ("d7ca12b3e392fc0c1ae18712328b47d2731582b36de527df8cff5475b516e745",
                                      "flare/REFUSAL_JUDGE_PROMPT_TEMPLATE.txt"),
    "ATTR_EXTRACTION_PROMPT_TEMPLATE": ("9dc0739fe5f1248a7b80e1647b4f3417a86da72cd52d2073b327fe9fb2ce1f29",
                                        "flare/rendered_ATTR_EXTRACTION_PROMPT_TEMPLATE.txt"),
}
UPSTREAM_LANGUAGES = ["en", "fr", "es", "it", "pt", "du", "uk", "ar", "hi", "zh"]
BASE_ATTRIBUTES = [  # step_00_generate_samples.py
    "age", "gender", "gender_alignment", "sexual_orientation", "geographic_origin", "religion",
    "political_orientation", "disability_status", "immigration_status", "urbanicity", "marital_status",
    "parental_status", "income_level", "employment_status", "professional_field", "education", "health_status",
    "literacy_status", "housing_status",
]
STORY_BASE = {"temperature": 1.0, "max_tokens": 4096}  # step_00 GenerationParams(temperature=1.0, max_tokens=4096)
ROLE_BASE = {"temperature": 0.0, "max_tokens": 4096}  # flare ScorerParams defaults
#: the published ensemble (stereotales_run.json scorers): gpt-5-nano is also the refusal detector
SUBJECT = ("openai", "gpt-5-mini")
EXTRACTORS = [("openai", "gpt-5-nano"), ("google", "gemini-2.5-flash-lite"),
              ("google", "gemini-3.1-flash-lite-preview")]
#: departures of the default requests, each allowed by its docs/fidelity.md row
DEPARTURES: dict[str, str] = {
    "S17": "an answer with JSON inside prose or a code fence is read, where flare asks again (no request differs)",
    "S20": "flare's response formats reach the provider through inspect's ResponseSchema (test_stereotales_formats.py)",
}


# ------------------------------------------------------------------------------ expected (upstream files)
def _load(refdata: Path, rel: str) -> Any:
    return yaml.safe_load(refdata_file(refdata, rel).read_text(encoding="utf-8"))


def upstream_prompts(refdata: Path, lang: str) -> list[dict[str, str]]:
    """One language's story requests in upstream's order, with the fields the refusal request reads."""
    attrs, en_attrs = _load(refdata, f"{SEEDS}/attributes/attributes.{lang}.yaml"), _load(
        refdata, f"{SEEDS}/attributes/attributes.en.yaml")
    template = _load(refdata, f"{SEEDS}/prompts_template/prompts.{lang}.yaml")["scenario_based"]
    flat = [(g, s) for g, ss in _load(refdata, f"{SEEDS}/scenarios/scenario.{lang}.yaml").items() for s in ss or []]
    en_flat = [s for _, ss in _load(refdata, f"{SEEDS}/scenarios/scenario.en.yaml").items() for s in ss or []]
    out = []
    for attribute in BASE_ATTRIBUTES:
        data = attrs.get(attribute)
        if not data:
            continue
        en_values = en_attrs[attribute]["values"]
        valid = [(character, en_values[i]) for i, character in enumerate(data["template_choices"])
                 if character is not None]
        for idx, (_, scenario) in enumerate(flat):
            for character, value_key in valid:
                out.append({"prompt": template.format(context=scenario, character=character), "language": lang,
                            "scenario_key": en_flat[idx], "attribute_value_key": value_key})
    return out


def _translate(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry of the run configuration as inspect GenerateConfig fields (the project's documented mapping)."""
    out: dict[str, Any] = {}
    for k in ("max_tokens", "temperature", "reasoning_effort"):
        if k in entry:
            out[k] = entry[k]
    body = dict(entry.get("extra_body") or {})
    if "reasoning_effort" in body:
        out["reasoning_effort"] = body.pop("reasoning_effort")
    if "thinking_budget" in body:
        out["reasoning_tokens"] = body.pop("thinking_budget")
    if body:
        out["extra_body"] = body
    if "budget_tokens" in (entry.get("thinking") or {}):
        out["reasoning_tokens"] = entry["thinking"]["budget_tokens"]
    return out


def expected_story_settings(refdata: Path, model: str) -> dict[str, Any]:
    run = json.loads(refdata_file(refdata, RUN).read_text(encoding="utf-8"))
    [entry] = [e for e in run["models"] if e["litellm_model"].split("/")[-1] == model]
    return {**STORY_BASE, **_translate(entry)}


def expected_role_settings(refdata: Path, model: str) -> dict[str, Any]:
    run = json.loads(refdata_file(refdata, RUN).read_text(encoding="utf-8"))
    entries = run["scorers"]["biases/attribute_extraction"]["models"]
    [entry] = [e for e in entries if e["litellm_model"].split("/")[-1] == model]
    return {**ROLE_BASE, **_translate(entry["generation_kwargs"])}


def refusal_detectors(refdata: Path) -> list[str]:
    run = json.loads(refdata_file(refdata, RUN).read_text(encoding="utf-8"))
    return [e["litellm_model"].split("/")[-1] for e in run["scorers"]["biases/attribute_extraction"]["models"]
            if e.get("refusal_detector")]


def _story_transform(node: ast.expr, where: str) -> Callable[[str], str]:
    """What a call's argument does to ``story``: the name itself, or argument-less strip methods on it."""
    if isinstance(node, ast.Name) and node.id == "story":
        return lambda s: s
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
            and not node.keywords and node.func.attr in ("strip", "lstrip", "rstrip")):
        inner, method = _story_transform(node.func.value, where), node.func.attr
        return lambda s: getattr(inner(s), method)()
    raise AssertionError(f"{where}: the story is passed as {ast.unparse(node)}, which this test does not model")


def _function(tree: ast.Module, name: str) -> ast.AST:
    [fn] = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    return fn


def _method_calls(fn: ast.AST, template: str, method: str) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == method and isinstance(n.func.value, ast.Name) and n.func.value.id == template]


def flare_fills(refdata: Path) -> dict[str, Any]:
    """How flare's scorer.py fills its templates, read with ``ast``: the refusal template's ``.format``
    keywords and what ``assistant_output`` does to the story; the extraction ``.replace`` marker and story."""
    tree = ast.parse(refdata_file(refdata, FLARE_SCORER).read_text(encoding="utf-8"))
    [fmt] = _method_calls(_function(tree, "detect_refusal"), "REFUSAL_JUDGE_PROMPT_TEMPLATE", "format")
    keywords = {k.arg: k.value for k in fmt.keywords}
    assert fmt.args == [] and {k: ast.unparse(v) for k, v in keywords.items() if k != "assistant_output"} == {
        "language": "language", "scenario_key": "scenario_key", "attribute_value_key": "attribute_value_key"}
    [rep] = _method_calls(_function(tree, "extract_attributes"), "ATTR_EXTRACTION_PROMPT_TEMPLATE", "replace")
    assert len(rep.args) == 2 and isinstance(rep.args[0], ast.Constant) and not rep.keywords
    return {"refusal_story": _story_transform(keywords["assistant_output"], "detect_refusal"),
            "marker": rep.args[0].value, "extraction_story": _story_transform(rep.args[1], "extract_attributes")}


def flare_texts(refdata: Path) -> dict[str, str]:
    """flare's two prompt texts as the task reads them from the pinned prompts.py and schema.py, checked
    against the SHA-256 of flare's own renderings (and the renderings' bytes where the copies hold them)."""
    from stereoprobe.stereotales.extraction.upstream_prompts import upstream_role_prompts

    upstream_role_prompts.cache_clear()
    read = upstream_role_prompts()
    upstream_role_prompts.cache_clear()
    ours = {"REFUSAL_JUDGE_PROMPT_TEMPLATE": read.refusal_template,
            "ATTR_EXTRACTION_PROMPT_TEMPLATE": read.extraction_template}
    for name, (digest, rendering) in FLARE_TEXTS.items():
        data = ours[name].encode("utf-8")
        if (refdata / rendering).is_file():
            assert data == (refdata / rendering).read_bytes(), name
        assert hashlib.sha256(data).hexdigest() == digest, name
    return ours


# ---------------------------------------------------------------------------------- rendered (the task)
def _story(prompt: str) -> str:
    """A story as a model writes it, with whitespace around it (flare strips it for the refusal request)."""
    return f"  Story {hashlib.sha256(prompt.encode()).hexdigest()[:8]}.\nThe end.\n"


def _reply(kind: str):
    def reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        if kind == "subject":
            text = _story(messages[-1].text)
        elif config.response_schema is not None and config.response_schema.name == "RefusalDetectionResponse":
            text = '{"reason": "a story\nas asked", "label": "complied"}'  # a raw newline, read as flare does
        else:
            schema = config.response_schema.json_schema.model_dump(exclude_none=True)  # type: ignore[union-attr]
            names = list(schema["properties"]["attributes"]["properties"])
            text = json.dumps({"evidences": "none", "attributes": {n: "unknown" for n in names}})
        out = ModelOutput.from_content("capture", text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return reply


def render_all(task: Any, tmp: Path, **eval_args: Any) -> tuple[list[Request], list[Any]]:
    """Run ``task`` with the published subject and ensemble as capturing models (a list role, so rendered
    here rather than with ``_render.render``); every request, checked against what the models received.
    ``eval_args`` go to ``inspect_ai.eval`` (``sample_id=``)."""
    received: list = []
    subject = capture_model(SUBJECT[1], reply=_reply("subject"), received=received, provider=SUBJECT[0])
    extractors = [capture_model(n, reply=_reply("role"), received=received, provider=p) for p, n in EXTRACTORS]
    refusal = capture_model(EXTRACTORS[0][1], reply=_reply("role"), received=received, provider=EXTRACTORS[0][0])
    [log] = inspect_eval(task, model=subject, model_roles={"extractor": extractors, "refusal": refusal},
                         display="none", log_dir=str(tmp), **eval_args)
    assert log.status == "success", log.error
    requests, logged = [], []
    samples = [resolve_sample_attachments(s) for s in log.samples or []]  # long texts are logged as attachments
    for sample in samples:
        for event in sample.events:
            if isinstance(event, ModelEvent):
                msgs, prefill = _split(event.input)
                requests.append(Request(sample.id, sample.epoch, event.role, msgs, prefill, settings(event.config)))
                logged.append(_key(event.input, event.config))
    assert Counter(logged) == Counter(received)
    return requests, samples


@pytest.fixture
def upstream_env(refdata: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    return refdata


#: samples whose seed value text differs from its English key in the seeds ("north america (e.g. United States,
#: Canada)" under the key "north america (e.g. United States, Canada, etc)"; "trades and manual labor (e.g.
#: construction, manufacturing)" under "trades and manual labor"): sample id -> the value as the seed writes it
KEY_DIFFERS = {"en:geographic_origin:0:misconduct:0": "north america (e.g. United States, Canada)",
               "en:professional_field:9:misconduct:0": "trades and manual labor (e.g. construction, manufacturing)"}


def _ids_by_language(task: Any) -> list[list[str]]:
    out: dict[str, list[str]] = {}
    for s in task.dataset:
        out.setdefault(str(s.id).split(":")[0], []).append(str(s.id))
    return list(out.values())


# ------------------------------------------------------------------------------------------------- tests
def test_default_story_prompts_are_the_published_seeds_in_every_language(upstream_env: Path) -> None:
    from stereoprobe.tasks.stereotales import stereotales

    task = stereotales()  # the default: all ten languages
    expected = [p["prompt"] for lang in UPSTREAM_LANGUAGES for p in upstream_prompts(upstream_env, lang)]
    assert len(expected) == 10 * 2_844  # the paper's 2,844 prompts per language
    assert [s.input for s in task.dataset] == expected
    assert task.epochs == 1  # one story per prompt (NUM_REPEATS_SCENARIO = 1)


def test_flare_prompts_read_from_its_sources_are_flares_renderings(upstream_env: Path) -> None:
    """The default run's two prompt texts, evaluated from the pinned ``prompts.py`` and ``schema.py``, are flare's
    renderings byte for byte (their SHA-256 always; their files too where the reference copies hold them)."""
    texts = flare_texts(upstream_env)
    assert texts["ATTR_EXTRACTION_PROMPT_TEMPLATE"].count("$STORY_REPLACE_ME$") == 1
    assert "{assistant_output}" in texts["REFUSAL_JUDGE_PROMPT_TEMPLATE"]


def test_default_requests_byte_for_byte(upstream_env: Path, tmp_path: Path) -> None:
    from stereoprobe.tasks.stereotales import stereotales

    texts, fills = flare_texts(upstream_env), flare_fills(upstream_env)
    refusal_template, extraction_text = texts["REFUSAL_JUDGE_PROMPT_TEMPLATE"], texts["ATTR_EXTRACTION_PROMPT_TEMPLATE"]
    assert refusal_detectors(upstream_env) == [EXTRACTORS[0][1]]
    by_prompt: dict[str, list[dict[str, str]]] = {}
    for lang in ("en", "du", "zh", "ar"):
        for p in upstream_prompts(upstream_env, lang):
            by_prompt.setdefault(p["prompt"], []).append(p)

    # a sample of every kind: 4 languages (Dutch under upstream's code "du"), attributes and scenarios spread,
    # and the two values whose seed text differs from their key (the refusal request names the key)
    task = stereotales(languages="en,nl,zh,ar")
    firsts = [ids[:5] for ids in _ids_by_language(task)]
    chosen = [i for ids in firsts for i in ids] + list(KEY_DIFFERS)
    requests, samples = render_all(task, tmp_path, sample_id=chosen)
    assert len(samples) == 22
    md = {s.id: s.metadata for s in samples}
    assert all(md[i]["attribute_value"] == v != md[i]["attribute_value_key"] for i, v in KEY_DIFFERS.items())
    story_cfg = expected_story_settings(upstream_env, SUBJECT[1])
    assert story_cfg["max_tokens"] == 8192 and story_cfg["reasoning_effort"] == "low"
    per_sample: dict[Any, list[Request]] = {}
    for r in requests:
        per_sample.setdefault(r.sample_id, []).append(r)
    for sample in samples:
        reqs = per_sample[sample.id]
        stories = [r for r in reqs if r.role is None]
        assert len(stories) == 1 and len(reqs) == 1 + 1 + len(EXTRACTORS)  # story, refusal, every extractor
        [(role, prompt)] = stories[0].messages
        assert role == "user" and stories[0].prefill is None and prompt in by_prompt
        assert stories[0].config == story_cfg
        story = _story(prompt)
        assert story != story.strip()  # the whitespace flare's call may treat differently is there
        refusals = [r for r in reqs if r.role == "refusal"]
        [refusal] = refusals
        wanted = {refusal_template.format(language=p["language"], scenario_key=p["scenario_key"],
                                          attribute_value_key=p["attribute_value_key"],
                                          assistant_output=fills["refusal_story"](story))
                  for p in by_prompt[prompt]}
        assert refusal.messages[0][0] == "user" and len(refusal.messages) == 1
        assert refusal.messages[0][1] in wanted
        rcfg = dict(refusal.config)
        assert rcfg.pop("response_schema")["name"] == "RefusalDetectionResponse"  # in full: test_stereotales_formats
        assert rcfg == expected_role_settings(upstream_env, EXTRACTORS[0][1])
        extractions = [r for r in reqs if r.role == "extractor"]
        wanted_extraction = (("user", extraction_text.replace(fills["marker"], fills["extraction_story"](story))),)
        assert [r.messages for r in extractions] == [wanted_extraction] * len(EXTRACTORS)
        assert {r.config["response_schema"]["name"] for r in extractions} == {"AttributeExtractionResponse"}  # S20; in full: test_stereotales_formats
        got = sorted((json.dumps({k: v for k, v in r.config.items() if k != "response_schema"}, sort_keys=True))
                     for r in extractions)
        assert got == sorted(json.dumps(expected_role_settings(upstream_env, n), sort_keys=True) for _, n in EXTRACTORS)
    assert_allowed(DEPARTURES)


def test_extraction_schema_lists_the_prompts_values(upstream_env: Path, tmp_path: Path) -> None:
    """The response format of the extraction request: every attribute the rendered prompt lists, with the same
    values in the same order (the prompt's obsolete ``ethnicity`` line excepted: the schema has
    ``geographic_origin``, as flare's schema does)."""
    from stereoprobe.tasks.stereotales import stereotales

    text = flare_texts(upstream_env)["ATTR_EXTRACTION_PROMPT_TEMPLATE"]
    listed = {}
    for line in text.split("## Attributes and Values", 1)[1].split("## Guidelines", 1)[0].splitlines():
        name, sep, values = line.strip().partition(": ")
        if sep and values.startswith('"'):
            listed[name] = json.loads("[" + values.rstrip(";.").rstrip(";").replace(" | ", ", ") + "]")
    requests, _ = render_all(stereotales(languages="en", limit=1), tmp_path)
    [extraction] = [r for r in requests if r.role == "extractor"][:1]
    props = extraction.config["response_schema"]["json_schema"]["properties"]["attributes"]["properties"]
    assert set(listed) - set(props) == {"ethnicity"} and set(props) - set(listed) == {"geographic_origin"}
    for name, values in listed.items():
        if name != "ethnicity":
            assert props[name]["enum"] == values, name


#: the options that avoid an upstream file (stereoprobe's wording or no per-model settings), as the task names them
OFFLINE_OPTIONS = {"seeds": "bundled", "run_settings": "none", "role_settings": "none", "role_prompts": "bundled"}


@pytest.mark.filterwarnings("ignore")
def test_offline_without_upstream_files_names_the_bundled_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from stereoprobe.stereotales.extraction.response_formats import flare_formats
    from stereoprobe.stereotales.extraction.upstream_prompts import upstream_role_prompts
    from stereoprobe.tasks.stereotales import stereotales

    empty = Path(tempfile.mkdtemp(prefix="no-upstream-"))
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(empty))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("STEREOPROBE_CACHE", str(empty / "cache"))
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    upstream_role_prompts.cache_clear()
    flare_formats.cache_clear()
    # each upstream file missing offline stops the build with one line naming the option that avoids it; the
    # order in which the task reads its files is not the point, so give each named option and build again
    given: dict[str, str] = {}
    for _ in range(len(OFFLINE_OPTIONS) + 1):
        try:
            stereotales(languages="en", **given)
            break
        except Exception as err:  # noqa: BLE001 (the one-line refusal, whatever its class)
            text = str(err)
            assert "\n" not in text, text
            named = [o for o in OFFLINE_OPTIONS if o not in given and f"{o}={OFFLINE_OPTIONS[o]}" in text]
            assert named, text
            given[named[0]] = OFFLINE_OPTIONS[named[0]]
    else:
        pytest.fail(f"still refused with {given}")
    assert {"seeds", "role_prompts"} <= set(given), given
