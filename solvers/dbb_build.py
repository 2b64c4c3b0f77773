"""Solvers of the DBB dataset builder (Pan et al., Findings of EMNLP 2025, §3.1): the LLM steps that turn a
stereotype input into a concept pair (:func:`concept_pipeline`) and a concept pair into a question template
with sentence variations (:func:`question_pipeline`), after upstream ``src/concept_analysis.py`` and
``src/q_generate.py`` (github.com/JP-25/Description-based-Bias-Benchmark), in upstream's wording by default
(read at run time from the pinned files: :mod:`stereoprobe.dbb.builder_upstream`) or in our own
(``datasets/dbb/builder_prompts.yaml``, ``prompt="stereoprobe"``).

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
from stereoprobe.dbb import builder_upstream as U
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
                     generation: str = "upstream", prompt: str = "upstream", local: str | None = None) -> Solver:
    """Concept pair of one input: (filter →) explanation → pair (→ explanation for BBQ) → grader, in the wording
    ``prompt`` (``local``: a local copy of the upstream repository holding its files)."""
    words = U.wording(prompt, local, U.CONCEPT_KEYS)
    settings = B.generation_settings(generation)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, grader = roles()
        md = state.metadata
        try:
            await _concept_steps(md, gen, grader, words, use_filter, temperature, grader_temperature, settings)
        except Refused as r:
            md.update(status="refused", refused_reply=str(r)[:500])
        return state

    return solve


def _pair_fill(reply: str, a: str, b: str, raw: bool) -> dict[str, str]:
    """The concepts a later request names: upstream's ``reply.split(';')`` as it is (``raw``) where the reply
    has one ``;``, else the parsed pair."""
    parts = reply.split(";")
    if raw and len(parts) == 2:
        return {"concept_a": parts[0], "concept_b": parts[1]}
    return {"concept_a": a, "concept_b": b}


async def _concept_steps(md: dict[str, Any], gen: Model, grader: Model, words: U.Wording, use_filter: bool,
                         temperature: float, grader_temperature: float, settings: dict[str, Any]) -> None:
    section, steps = STEPS[md.get("prompt_variant") or "pairs"]
    fill, source = dict(md), str(md.get("source") or "")
    a = b = ""
    for step in [*steps, "grader"]:
        text = words.render(section, step, fill, source)
        if step == "filter":
            if not use_filter:
                continue
            reply = await ask(gen, text, temperature, settings)
            md["filter_reply"] = reply
            if not B.parse_filter(reply):
                md["status"] = "filtered"
                return
        elif step == "explanation":
            reply = await ask(gen, text, temperature, settings)
            md["explanation"] = reply.strip()
            fill["explanation"] = reply if words.raw else reply.strip()
        elif step == "pair":
            reply = await ask(gen, text, temperature, settings)
            md["pair_reply"] = reply
            try:
                a, b = B.parse_pair(reply)
            except B.BuilderParseError:
                md["status"] = "unparsed_pair"
                return
            md["raw_pair"] = f"{a};{b}"
            fill.update(_pair_fill(reply, a, b, words.raw))
        else:  # grader
            reply = await ask(grader, text, grader_temperature, settings)
            md["grader_reply"] = reply
            try:
                a, b = B.parse_pair(reply)
                md["graded"] = True
            except B.BuilderParseError:
                md["graded"] = False  # keep the generator's pair, recorded
    md.update(concept_a=a, concept_b=b, status="ok", generator=str(gen))


@solver
def question_pipeline(n_variations: int = 9, temperature: float = 0.3, grader_temperature: float = 0.3,
                      generation: str = "upstream", prompt: str = "upstream", local: str | None = None) -> Solver:
    """Question template of one concept pair: context + option A → option B → grader → ``n_variations``
    sentence variations per option for DBB-SG (paper §3.1.2 and §4.3), in the wording ``prompt``."""
    words = U.wording(prompt, local, U.QUESTION_KEYS, n_variations)
    settings = B.generation_settings(generation)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, grader = roles()
        try:
            await _question_steps(state.metadata, gen, grader, words, n_variations, temperature, grader_temperature,
                                  settings)
        except Refused as r:
            state.metadata.update(status="refused", refused_reply=str(r)[:500])
        return state

    return solve


async def _question_steps(md: dict[str, Any], gen: Model, grader: Model, words: U.Wording, n_variations: int,
                          temperature: float, grader_temperature: float, settings: dict[str, Any]) -> None:
    fill = dict(md)
    try:
        reply = await ask(gen, words.render("questions", "context_and_option_a", fill), temperature, settings)
        md["reply_1"] = reply
        context, option_a = B.parse_labelled(reply, ["Sentence 1", "Sentence 2"])
        reply = await ask(gen, words.render("questions", "option_b", {**fill, "context": context}), temperature,
                          settings)
        md["reply_2"] = reply
        found = B.parse_sentences(reply)
        if not found:
            raise B.BuilderParseError(f"no 'Sentence:' line in reply {reply[:200]!r}")
        option_b = found[0]
    except B.BuilderParseError as e:
        md.update(status="unparsed_question", parse_error=str(e))
        return
    text = words.render("questions", "grader", {**fill, "context": context, "option_a": option_a,
                                                "option_b": option_b})
    reply = await ask(grader, text, grader_temperature, settings)
    md["grader_reply"] = reply
    try:
        context, option_a, option_b = B.parse_labelled(reply, ["Sentence 1", "Sentence 2", "Sentence 3"])
        md["graded"] = True
    except B.BuilderParseError:
        md["graded"] = False
    if "[[X]]" not in context:
        md.update(status="unparsed_no_placeholder", context=context)
        return
    var = await variation_sentences(gen, fill, context, n_variations, temperature, settings, words)
    k = min(len(var["variations_a"]), len(var["variations_b"]))
    md.update(context=context, option_a=option_a, option_b=option_b, variations_a=var["variations_a"][:k],
              variations_b=var["variations_b"][:k], n_variations_found=k, status="ok", generator=str(gen))


async def variation_sentences(gen: Model, fill: dict[str, Any], context: str, n_variations: int,
                              temperature: float, settings: dict[str, Any], words: U.Wording | None = None
                              ) -> dict[str, list[str]]:
    """``n_variations`` extra option sentences for each concept (``variations_a``, ``variations_b``), each
    keeping the ``[[X]]`` placeholder (the builder's variation step: upstream's
    ``src/prompt_instructions/qa_generate2_more_sentences.txt``, which asks for 9, by default)."""
    words = words or U.OwnWording()
    var: dict[str, list[str]] = {}
    for key, concept in (("variations_a", fill["concept_a"]), ("variations_b", fill["concept_b"])):
        if n_variations <= 0:
            var[key] = []
            continue
        text = words.render("questions", "variations", {**fill, "context": context, "concept": concept,
                                                        "n": n_variations})
        reply = await ask(gen, text, temperature, settings)
        var[key] = [s for s in B.parse_sentences(reply) if "[[X]]" in s][:n_variations]
    return var


@solver
def variation_pipeline(n_variations: int = 9, temperature: float = 0.3, generation: str = "upstream",
                       seed: int | None = 0, prompt: str = "upstream", local: str | None = None) -> Solver:
    """DBB-SG sentence variations of an existing template (its context and concepts): ``n_variations`` per
    option with the builder's variation step in the wording ``prompt``, requests seeded with ``seed``
    (providers that honour a seed reproduce them; the generator model and seed are in the log)."""
    words = U.wording(prompt, local, U.VARIATION_KEYS, n_variations)
    settings = {**B.generation_settings(generation), "seed": seed}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        gen, _ = roles()
        md = state.metadata
        try:
            var = await variation_sentences(gen, dict(md), md["context"], n_variations, temperature, settings, words)
        except Refused as r:
            md.update(status="refused", refused_reply=str(r)[:500])
            return state
        k = min(len(var["variations_a"]), len(var["variations_b"]))
        md.update(variations_a=var["variations_a"][:k], variations_b=var["variations_b"][:k], n_variations_found=k,
                  status="ok" if k else "unparsed_variations", generator=str(gen))
        return state

    return solve
