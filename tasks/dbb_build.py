"""DBB dataset builder as inspect tasks (spec dbb.md §2): an LLM in the ``generator`` role (and optionally a
separate ``grader`` role) turns stereotype inputs (CrowS-Pairs, StereoSet, SOFA, BBQ, a CSV of sentence
pairs) into concept pairs, then concept pairs into
question templates with sentence variations for DBB-SG. Our own prompt wording
(``datasets/dbb/builder_prompts.yaml``).

    inspect eval stereoprobe/dbb_build_concepts --model none --model-role generator=openai/gpt-4o --limit 50 \
        --log-dir logs/build
    stereoprobe dbb-build-export logs/build --out data/built                       # -> concepts.csv
    inspect eval stereoprobe/dbb_build_questions -T concepts=data/built/concepts.csv \
        --model none --model-role generator=openai/gpt-4o --log-dir logs/build
    stereoprobe dbb-build-export logs/build --out data/built         # -> templates.csv, sg_variations.csv
    inspect eval stereoprobe/dbb -T source=data/built/templates.csv ...

Every input becomes a sample with a stable id; a reply that does not parse is recorded (``status``) and
counted by the metrics, never dropped silently.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.dbb import builder as B

TASK_VERSION = "1.0.0"


def _roles() -> tuple[Model, Model]:
    gen = get_model(role="generator", required=True)
    grader = get_model(role="grader", default=gen)
    return gen, grader


async def _ask(model: Model, prompt: str, temperature: float) -> str:
    out = await model.generate(prompt, config=GenerateConfig(temperature=temperature, max_tokens=1024))
    return out.completion


# ---------------------------------------------------------------------------------------------------------
# step 1: concept pairs


@task
def dbb_build_concepts(source: str = "crows_pairs", local: str | None = None, use_filter: bool = True,
                       temperature: float = 0.2, grader_temperature: float = 0.3,
                       revision: str | None = None) -> Task:
    """Concept pairs from stereotype inputs, with the steps of each source (spec §2.1): CrowS-Pairs, StereoSet
    and sentence-pair CSVs: filter → explanation → pair → grader; SOFA: explanation → pair → grader; BBQ:
    pair (from the question) → explanation (from context + question) → grader.

    Args:
        source: "crows_pairs" (pinned upstream copy of CrowS-Pairs), "stereoset_intra", "stereoset_inter",
            "sofa", "bbq" (Hugging Face datasets at pinned revisions), or a CSV with sent_more, sent_less.
        local: offline copy: for crows_pairs the upstream DBB repository; for stereoset_*/sofa/bbq a
            CSV/JSONL/Parquet export of the dataset with its own columns.
        use_filter: run the quality filter first on sentence pairs (upstream keeps a pair only if the reply
            is "False"); SOFA and BBQ have no filter step.
        temperature, grader_temperature: generator and grader temperatures (upstream 0.2 and 0.3).
        revision: Hub commit overriding the pinned one (stereoset_*/sofa/bbq).
    """
    records = B.read_source_records(source, local, revision)
    samples = [Sample(id=r.id, input=r.sent_more or r.stereotype or r.question, metadata=r.fields())
               for r in records]
    name = source if source in B.SOURCES else Path(source).stem
    return Task(dataset=MemoryDataset(samples, name=f"dbb-build-{name}"),
                solver=concept_pipeline(use_filter, temperature, grader_temperature),
                scorer=build_status(), version=TASK_VERSION,
                metadata={"probe": "dbb", "variant": "build-concepts", "source": source,
                          "revision": revision or (B.HUB[_hub_key(source)].revision if _hub_key(source) else None)})


def _hub_key(source: str) -> str | None:
    return "stereoset" if source in B.STEREOSET_CONFIGS else source if source in ("sofa", "bbq") else None


# prompt sections and step order per prompt variant (spec §2.1); the grader is concepts.grader for all
STEPS = {"pairs": ("concepts", ["filter", "explanation", "pair"]),
         "sofa": ("concepts_sofa", ["explanation", "pair"]),
         "bbq": ("concepts_bbq", ["pair", "explanation"])}


def concept_prompts(md: dict[str, Any], prompts: dict[str, Any] | None = None) -> dict[str, str]:
    """The prompt template of each step for a record's metadata (its ``prompt_variant``), in run order."""
    pr = prompts or B.builder_prompts()
    section, steps = STEPS[md.get("prompt_variant") or "pairs"]
    return {**{st: pr[section][st] for st in steps}, "grader": pr["concepts"]["grader"]}


@solver
def concept_pipeline(use_filter: bool = True, temperature: float = 0.2, grader_temperature: float = 0.3) -> Solver:
    pr = B.builder_prompts()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, grader = _roles()
        md = state.metadata
        fill = {"preamble": pr["preamble"].strip(), **md}
        prompts = concept_prompts(md, pr)
        a = b = ""
        for step, tmpl in prompts.items():
            if step == "filter":
                if not use_filter:
                    continue
                reply = await _ask(gen, tmpl.format(**fill), temperature)
                md["filter_reply"] = reply
                if not B.parse_filter(reply):
                    md["status"] = "filtered"
                    return state
            elif step == "explanation":
                md["explanation"] = fill["explanation"] = (await _ask(gen, tmpl.format(**fill), temperature)).strip()
            elif step == "pair":
                reply = await _ask(gen, tmpl.format(**fill), temperature)
                md["pair_reply"] = reply
                try:
                    a, b = B.parse_pair(reply)
                except B.BuilderParseError:
                    md["status"] = "unparsed_pair"
                    return state
                md["raw_pair"] = f"{a};{b}"
            else:  # grader
                reply = await _ask(grader, tmpl.format(**fill, concept_a=a, concept_b=b), grader_temperature)
                md["grader_reply"] = reply
                try:
                    a, b = B.parse_pair(reply)
                    md["graded"] = True
                except B.BuilderParseError:
                    md["graded"] = False  # keep the generator's pair, recorded
        md.update(concept_a=a, concept_b=b, status="ok", generator=str(gen))
        return state

    return solve


@scorer(metrics={"ok": [mean()], "filtered": [mean()], "unparsed": [mean()]})
def build_status() -> Any:
    """Share of inputs that gave a usable item (``ok``), were filtered out, or whose reply did not parse."""

    async def score(state: TaskState, target: Target) -> Score:
        st = state.metadata.get("status", "unknown")
        return Score(value={"ok": float(st == "ok"), "filtered": float(st == "filtered"),
                            "unparsed": float(st.startswith("unparsed"))}, answer=st)

    return score


# ---------------------------------------------------------------------------------------------------------
# step 2: question templates and sentence variations


def _read_concepts(path: str) -> list[dict[str, str]]:
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"concept file not found: {p} (write it with `stereoprobe dbb-build-export`)")
    with open(p, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"concept_id", "concept_a", "concept_b"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{p}: missing columns {', '.join(sorted(missing))}")
        return list(reader)


@task
def dbb_build_questions(concepts: str, n_variations: int = 9, temperature: float = 0.3,
                        grader_temperature: float = 0.3) -> Task:
    """Question templates (context, option A, option B, grader) and ``n_variations`` extra sentences per
    option for DBB-SG (spec §2.2–2.3; the paper: 9 + the original = 10), from a concepts CSV."""
    rows = _read_concepts(concepts)
    samples = [Sample(id=r["concept_id"], input=r["concept_a"],
                      metadata={"concept_a": r["concept_a"], "concept_b": r["concept_b"],
                                "explanation": r.get("explanation", "")}) for r in rows]
    return Task(dataset=MemoryDataset(samples, name=f"dbb-build-{Path(concepts).stem}"),
                solver=question_pipeline(n_variations, temperature, grader_temperature),
                scorer=build_status(), version=TASK_VERSION,
                metadata={"probe": "dbb", "variant": "build-questions", "n_variations": n_variations})


@solver
def question_pipeline(n_variations: int = 9, temperature: float = 0.3, grader_temperature: float = 0.3) -> Solver:
    pr = B.builder_prompts()
    q = pr["questions"]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, grader = _roles()
        md = state.metadata
        fill = {"preamble": pr["preamble"].strip(), **md}
        try:
            reply = await _ask(gen, q["context_and_option_a"].format(**fill), temperature)
            md["reply_1"] = reply
            context, option_a = B.parse_labelled(reply, ["Sentence 1", "Sentence 2"])
            reply = await _ask(gen, q["option_b"].format(**fill, context=context), temperature)
            md["reply_2"] = reply
            found = B.parse_sentences(reply)
            if not found:
                raise B.BuilderParseError(f"no 'Sentence:' line in reply {reply[:200]!r}")
            option_b = found[0]
        except B.BuilderParseError as e:
            md.update(status="unparsed_question", parse_error=str(e))
            return state
        reply = await _ask(grader, q["grader"].format(**fill, context=context, option_a=option_a,
                                                      option_b=option_b), grader_temperature)
        md["grader_reply"] = reply
        try:
            context, option_a, option_b = B.parse_labelled(reply, ["Sentence 1", "Sentence 2", "Sentence 3"])
            md["graded"] = True
        except B.BuilderParseError:
            md["graded"] = False
        if "[[X]]" not in context:
            md.update(status="unparsed_no_placeholder", context=context)
            return state
        var: dict[str, list[str]] = {}
        for key, concept in (("variations_a", md["concept_a"]), ("variations_b", md["concept_b"])):
            if n_variations <= 0:
                var[key] = []
                continue
            reply = await _ask(gen, q["variations"].format(**fill, context=context, concept=concept,
                                                           n=n_variations), temperature)
            var[key] = [s for s in B.parse_sentences(reply) if "[[X]]" in s][:n_variations]
        k = min(len(var["variations_a"]), len(var["variations_b"]))
        md.update(context=context, option_a=option_a, option_b=option_b, variations_a=var["variations_a"][:k],
                  variations_b=var["variations_b"][:k], n_variations_found=k, status="ok", generator=str(gen))
        return state

    return solve
