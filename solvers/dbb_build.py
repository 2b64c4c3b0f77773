"""Solvers of the DBB dataset builder (Pan et al., Findings of EMNLP 2025, §3.1): the LLM steps that turn a
stereotype input into a concept pair (:func:`concept_pipeline`) and a concept pair into a question template
with sentence variations (:func:`question_pipeline`), after upstream ``src/concept_analysis.py`` and
``src/q_generate.py`` (github.com/JP-25/Description-based-Bias-Benchmark), in our own prompt wording
(``datasets/dbb/builder_prompts.yaml``).

Every LLM call goes through :func:`ask` with the run's generation settings (``datasets/dbb/
builder_generation.yaml``; upstream by default: system message, 2,048 tokens, frequency penalty 0.6), under the
user's (a role spec's or the command line's settings win). A reply
matching the refusal phrases stops the item with status ``refused`` (upstream: "response filtered"), counted
by the scorer, never dropped silently.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from stereoprobe.dbb import builder as B
from stereoprobe.user_settings import request_config

# prompt sections and step order per prompt variant (paper §3.1.1); the grader is concepts.grader for all
STEPS = {"pairs": ("concepts", ["filter", "explanation", "pair"]),
         "sofa": ("concepts_sofa", ["explanation", "pair"]),
         "bbq": ("concepts_bbq", ["pair", "explanation"])}


class Refused(Exception):
    """A reply that matches the refusal phrases (the item gets status ``refused``)."""


def roles() -> tuple[Model, Model]:
    """The ``generator`` role (required) and the ``grader`` role (default: the generator)."""
    gen = get_model(role="generator", required=True)
    grader = get_model(role="grader", default=gen)
    return gen, grader


async def ask(model: Model, prompt: str, temperature: float, settings: dict[str, Any]) -> str:
    """One builder call with the generation ``settings`` (the paper's: the user's settings, the role spec's
    over the command line's, win; :mod:`stereoprobe.user_settings`); raises :class:`Refused` on a refusal
    reply."""
    messages: list[Any] = [ChatMessageUser(content=prompt)]
    if settings.get("system"):
        messages.insert(0, ChatMessageSystem(content=settings["system"]))
    paper = {"temperature": temperature, "max_tokens": settings["max_tokens"], "top_p": settings.get("top_p"),
             "frequency_penalty": settings.get("frequency_penalty"),
             "presence_penalty": settings.get("presence_penalty"), "seed": settings.get("seed")}
    config = GenerateConfig(**request_config({k: v for k, v in paper.items() if v is not None}, model))
    out = await model.generate(messages, config=config)
    reply = out.completion
    if B.is_refusal(reply, settings.get("refusal_phrases") or []):
        raise Refused(reply)
    return reply


def concept_prompts(md: dict[str, Any], prompts: dict[str, Any] | None = None) -> dict[str, str]:
    """The prompt template of each step for a record's metadata (its ``prompt_variant``), in run order."""
    pr = prompts or B.builder_prompts()
    section, steps = STEPS[md.get("prompt_variant") or "pairs"]
    return {**{st: pr[section][st] for st in steps}, "grader": pr["concepts"]["grader"]}


@solver
def concept_pipeline(use_filter: bool = True, temperature: float = 0.2, grader_temperature: float = 0.3,
                     generation: str = "upstream") -> Solver:
    """Concept pair of one input: (filter →) explanation → pair (→ explanation for BBQ) → grader."""
    pr = B.builder_prompts()
    settings = B.generation_settings(generation)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, grader = roles()
        md = state.metadata
        try:
            await _concept_steps(md, gen, grader, concept_prompts(md, pr), pr, use_filter, temperature,
                                 grader_temperature, settings)
        except Refused as r:
            md.update(status="refused", refused_reply=str(r)[:500])
        return state

    return solve


async def _concept_steps(md: dict[str, Any], gen: Model, grader: Model, prompts: dict[str, str],
                         pr: dict[str, Any], use_filter: bool, temperature: float, grader_temperature: float,
                         settings: dict[str, Any]) -> None:
    fill = {"preamble": pr["preamble"].strip(), **md}
    a = b = ""
    for step, tmpl in prompts.items():
        if step == "filter":
            if not use_filter:
                continue
            reply = await ask(gen, tmpl.format(**fill), temperature, settings)
            md["filter_reply"] = reply
            if not B.parse_filter(reply):
                md["status"] = "filtered"
                return
        elif step == "explanation":
            reply = await ask(gen, tmpl.format(**fill), temperature, settings)
            md["explanation"] = fill["explanation"] = reply.strip()
        elif step == "pair":
            reply = await ask(gen, tmpl.format(**fill), temperature, settings)
            md["pair_reply"] = reply
            try:
                a, b = B.parse_pair(reply)
            except B.BuilderParseError:
                md["status"] = "unparsed_pair"
                return
            md["raw_pair"] = f"{a};{b}"
        else:  # grader
            reply = await ask(grader, tmpl.format(**fill, concept_a=a, concept_b=b), grader_temperature, settings)
            md["grader_reply"] = reply
            try:
                a, b = B.parse_pair(reply)
                md["graded"] = True
            except B.BuilderParseError:
                md["graded"] = False  # keep the generator's pair, recorded
    md.update(concept_a=a, concept_b=b, status="ok", generator=str(gen))


@solver
def question_pipeline(n_variations: int = 9, temperature: float = 0.3, grader_temperature: float = 0.3,
                      generation: str = "upstream") -> Solver:
    """Question template of one concept pair: context + option A → option B → grader → ``n_variations``
    sentence variations per option for DBB-SG (paper §3.1.2 and §4.3)."""
    pr = B.builder_prompts()
    settings = B.generation_settings(generation)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, grader = roles()
        try:
            await _question_steps(state.metadata, gen, grader, pr, n_variations, temperature, grader_temperature,
                                  settings)
        except Refused as r:
            state.metadata.update(status="refused", refused_reply=str(r)[:500])
        return state

    return solve


async def _question_steps(md: dict[str, Any], gen: Model, grader: Model, pr: dict[str, Any], n_variations: int,
                          temperature: float, grader_temperature: float, settings: dict[str, Any]) -> None:
    q = pr["questions"]
    fill = {"preamble": pr["preamble"].strip(), **md}
    try:
        reply = await ask(gen, q["context_and_option_a"].format(**fill), temperature, settings)
        md["reply_1"] = reply
        context, option_a = B.parse_labelled(reply, ["Sentence 1", "Sentence 2"])
        reply = await ask(gen, q["option_b"].format(**fill, context=context), temperature, settings)
        md["reply_2"] = reply
        found = B.parse_sentences(reply)
        if not found:
            raise B.BuilderParseError(f"no 'Sentence:' line in reply {reply[:200]!r}")
        option_b = found[0]
    except B.BuilderParseError as e:
        md.update(status="unparsed_question", parse_error=str(e))
        return
    reply = await ask(grader, q["grader"].format(**fill, context=context, option_a=option_a, option_b=option_b),
                      grader_temperature, settings)
    md["grader_reply"] = reply
    try:
        context, option_a, option_b = B.parse_labelled(reply, ["Sentence 1", "Sentence 2", "Sentence 3"])
        md["graded"] = True
    except B.BuilderParseError:
        md["graded"] = False
    if "[[X]]" not in context:
        md.update(status="unparsed_no_placeholder", context=context)
        return
    var = await variation_sentences(gen, fill, context, n_variations, temperature, settings, pr)
    k = min(len(var["variations_a"]), len(var["variations_b"]))
    md.update(context=context, option_a=option_a, option_b=option_b, variations_a=var["variations_a"][:k],
              variations_b=var["variations_b"][:k], n_variations_found=k, status="ok", generator=str(gen))


async def variation_sentences(gen: Model, fill: dict[str, Any], context: str, n_variations: int,
                              temperature: float, settings: dict[str, Any], pr: dict[str, Any] | None = None
                              ) -> dict[str, list[str]]:
    """``n_variations`` extra option sentences for each concept (``variations_a``, ``variations_b``), each
    keeping the ``[[X]]`` placeholder (the builder's variation step, upstream
    ``src/prompt_instructions/qa_generate2_more_sentences.txt`` asks for 9)."""
    q = (pr or B.builder_prompts())["questions"]
    var: dict[str, list[str]] = {}
    for key, concept in (("variations_a", fill["concept_a"]), ("variations_b", fill["concept_b"])):
        if n_variations <= 0:
            var[key] = []
            continue
        reply = await ask(gen, q["variations"].format(**{**fill, "context": context, "concept": concept,
                                                         "n": n_variations}), temperature, settings)
        var[key] = [s for s in B.parse_sentences(reply) if "[[X]]" in s][:n_variations]
    return var


@solver
def variation_pipeline(n_variations: int = 9, temperature: float = 0.3, generation: str = "upstream",
                       seed: int | None = 0) -> Solver:
    """DBB-SG sentence variations of an existing template (its context and concepts): ``n_variations`` per
    option with the builder's variation step, requests seeded with ``seed`` (providers that honour a seed
    reproduce them; the generator model and seed are in the log)."""
    pr = B.builder_prompts()
    settings = {**B.generation_settings(generation), "seed": seed}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, _ = roles()
        md = state.metadata
        fill = {"preamble": pr["preamble"].strip(), **md}
        try:
            var = await variation_sentences(gen, fill, md["context"], n_variations, temperature, settings, pr)
        except Refused as r:
            md.update(status="refused", refused_reply=str(r)[:500])
            return state
        k = min(len(var["variations_a"]), len(var["variations_b"]))
        md.update(variations_a=var["variations_a"][:k], variations_b=var["variations_b"][:k], n_variations_found=k,
                  status="ok" if k else "unparsed_variations", generator=str(gen))
        return state

    return solve
