"""The DBB builder's prompts in upstream's wording (the default), read at run time from the pinned upstream files.

Upstream (github.com/JP-25/Description-based-Bias-Benchmark, ``src/concept_analysis.py`` and
``src/q_generate.py``) builds each request as an f-string: an instruction read from
``src/prompt_instructions/<file>.txt`` (after ``.replace`` of its ``[[...]]`` markers in ``q_generate.py``)
followed by the call's data, or (the graders, SOFA's explanation) a prompt written inline. Here each request is
that f-string, found in the pinned ``.py`` file with ``ast`` (never imported or run) and evaluated with the
small interpreter of :mod:`stereoprobe.stereotales.extraction.flare_source`, its names bound to the instruction
file's text and the call's data. Every file is obtained with :func:`stereoprobe.upstream.fetch` (a local copy,
``$STEREOPROBE_UPSTREAM_DIR``, the cache, or a download checked against its pinned SHA-256).

:data:`PROMPTS` is the table: per builder step (the sections and steps of ``datasets/dbb/builder_prompts.yaml``,
our own wording, ``-T prompt=stereoprobe``) the upstream file, function and branch holding the f-string, the
name it is assigned to, the instruction file and how upstream's names map to the builder's fields.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from stereoprobe.errors import InputError
from stereoprobe.stereotales.extraction.flare_source import evaluate, parse
from stereoprobe.upstream import UpstreamDataError, fetch

KEY = "Hidden-Bias-Benchmark"  # the source key in stereoprobe/upstream_sources.yaml
CONCEPTS = "src/concept_analysis.py"
QUESTIONS = "src/q_generate.py"
INSTRUCTIONS = "src/prompt_instructions/"
#: the number of sentences upstream's variation prompt asks for (written into qa_generate2_more_sentences.txt)
UPSTREAM_VARIATIONS = 9


@dataclass(frozen=True)
class UpstreamPrompt:
    """Where one builder request's upstream wording is: ``target`` assigned in ``function`` of ``module`` (within
    the ``data == <branch>`` branch when given); ``instruction``: (the f-string's name for it, the prompt file,
    upstream's ``.replace(marker, field)`` on its text); ``fields``: upstream's name -> the builder's field. No
    ``target``: the request is the instruction file itself (after its replacements)."""

    module: str
    function: str
    branch: str | None
    target: str | None
    instruction: tuple[str, str, tuple[tuple[str, str], ...]] | None
    fields: Mapping[str, str] = field(default_factory=dict)


def _file(name: str, fill: tuple[tuple[str, str], ...] = ()) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    return "instruction", INSTRUCTIONS + name, fill


_PAIR = {"sent_more": "sent_more", "sent_less": "sent_less"}
_GRADE = {"concept1": "concept_a", "concept2": "concept_b"}
#: (section, step) of datasets/dbb/builder_prompts.yaml -> upstream's wording of that request
PROMPTS: dict[tuple[str, str], UpstreamPrompt] = {
    ("concepts", "filter"): UpstreamPrompt(CONCEPTS, "analyze_concept", "crows", "filter_ins",
                                           _file("filter_questions.txt"), _PAIR),
    ("concepts", "explanation"): UpstreamPrompt(CONCEPTS, "analyze_concept", "crows", "prompt_summ",
                                                _file("analysis_1.txt"), _PAIR),
    ("concepts", "pair"): UpstreamPrompt(CONCEPTS, "analyze_concept", "crows", "prompt_conepts",
                                         _file("analysis_2.txt"), {"response1": "explanation"}),
    ("concepts", "grader"): UpstreamPrompt(CONCEPTS, "analyze_concept", "crows", "prompt", None,
                                           {"response1": "explanation", **_GRADE}),
    ("concepts_sofa", "explanation"): UpstreamPrompt(CONCEPTS, "analyze_concept", "sofa", "prompt_exp", None,
                                                     {"category": "category", "target": "target",
                                                      "stereotype": "stereotype"}),
    ("concepts_sofa", "pair"): UpstreamPrompt(CONCEPTS, "analyze_concept", "sofa", "prompt",
                                              _file("analysis_sofa.txt"),
                                              {"summ_bias": "explanation", "target": "target",
                                               "stereotype": "stereotype"}),
    ("concepts_sofa", "grader"): UpstreamPrompt(CONCEPTS, "analyze_concept", "sofa", "prompt_refine", None,
                                                {"summ_bias": "explanation", **_GRADE}),
    ("concepts_bbq", "pair"): UpstreamPrompt(CONCEPTS, "analyze_concept", "bbq", "prompt", _file("analysis_bbq.txt"),
                                             {"q": "question"}),
    ("concepts_bbq", "explanation"): UpstreamPrompt(CONCEPTS, "analyze_concept", "bbq", "prompt_exp",
                                                    _file("summarize_bias.txt"),
                                                    {"context": "context", "q": "question"}),
    ("concepts_bbq", "grader"): UpstreamPrompt(CONCEPTS, "analyze_concept", "bbq", "prompt_refine", None,
                                               {"summ_bias": "explanation", **_GRADE}),
    ("questions", "context_and_option_a"): UpstreamPrompt(
        QUESTIONS, "qa_generate", None, "prompt1",
        ("instruction1", INSTRUCTIONS + "qa_generate1.txt", (("[[picked_concept1]]", "concept_a"),))),
    ("questions", "option_b"): UpstreamPrompt(
        QUESTIONS, "qa_generate", None, "prompt2",
        ("instruction2", INSTRUCTIONS + "qa_generate2.txt",
         (("[[picked_concept2]]", "concept_b"), ("[[sentence1_generated]]", "context")))),
    ("questions", "grader"): UpstreamPrompt(QUESTIONS, "qa_generate", None, "prompt", None,
                                            {"picked_concept1": "concept_a", "picked_concept2": "concept_b",
                                             "explanation": "explanation", "sentence_1": "context",
                                             "sentence_2_v1": "option_a", "sentence_2_v2": "option_b"}),
    # upstream's file for the ten DBB-SG variations (no code of the pinned commit reads it): its markers filled
    ("questions", "variations"): UpstreamPrompt(
        QUESTIONS, "", None, None,
        ("instruction", INSTRUCTIONS + "qa_generate2_more_sentences.txt",
         (("[[picked_concept2]]", "concept"), ("[[sentence1_generated]]", "context")))),
}
#: the branch of ``analyze_concept`` each builder source's sentence pairs take upstream (CSV files: CrowS-Pairs')
BRANCHES = {"stereoset_intra": "stereo_intra", "stereoset_inter": "stereo_inter"}


def _path(rel: str, local: str | None) -> Path:
    try:
        return fetch(KEY, rel, local=local)
    except UpstreamDataError as e:
        raise UpstreamDataError(f"{e} (the DBB builder's default wording is upstream's {rel}; -T prompt=stereoprobe "
                                "sends stereoprobe's own wording instead)") from None


def _compared(test: ast.expr) -> set[str]:
    """The strings ``data`` is compared with in an ``if`` test (``data == 'crows'``, ``... or data == '...'``)."""
    return {n.comparators[0].value for n in ast.walk(test) if isinstance(n, ast.Compare)
            and isinstance(n.left, ast.Name) and n.left.id == "data" and isinstance(n.comparators[0], ast.Constant)}


def _scope(tree: ast.Module, function: str, branch: str | None, where: str) -> list[ast.stmt]:
    """The statements of ``function`` (of its ``data == branch`` branch when given)."""
    [fn] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function] or [None]
    if fn is None:
        raise UpstreamDataError(f"{where}: no function {function}()")
    if branch is None:
        return fn.body
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and branch in _compared(node.test):
            return node.body
    raise UpstreamDataError(f"{where}: {function}() has no branch for data == {branch!r}")


@cache
def _fstring(module: str, function: str, branch: str | None, target: str, local: str | None) -> ast.expr:
    """The one expression assigned to ``target`` in that scope of upstream's ``module``."""
    where = f"{KEY}:{module}"
    tree = parse(_path(module, local))
    found = [n.value for stmt in _scope(tree, function, branch, where) for n in ast.walk(stmt)
             if isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == [target]]
    if len(found) != 1:
        raise UpstreamDataError(f"{where}: {len(found)} assignments to {target} in {function}() "
                                f"(branch {branch!r}); expected one")
    return found[0]


WORDINGS = ("upstream", "stereoprobe")
#: the requests of each builder task, (section, step) as in PROMPTS; SOFA and BBQ records add their own
CONCEPT_KEYS = [k for k in PROMPTS if k[0].startswith("concepts")]
QUESTION_KEYS = [("questions", s) for s in ("context_and_option_a", "option_b", "grader", "variations")]
VARIATION_KEYS = [("questions", "variations")]


class OwnWording:
    """Renders builder requests in stereoprobe's wording (``datasets/dbb/builder_prompts.yaml``,
    ``-T prompt=stereoprobe``): the step's template filled with the preamble and the call's data; SOFA and BBQ
    records use the sentence-pair grader."""

    raw = False  # replies are stripped before they fill a later request

    def __init__(self) -> None:
        from stereoprobe.dbb.builder import builder_prompts

        self.prompts = builder_prompts()

    def check(self, keys: list[tuple[str, str]]) -> None:
        """Nothing to read: the wording is bundled."""

    def render(self, section: str, step: str, values: Mapping[str, object], source: str = "") -> str:
        templates = self.prompts[section]
        template = templates[step] if step in templates else self.prompts["concepts"][step]
        return template.format(**{**values, "preamble": self.prompts["preamble"].strip()})


class UpstreamWording:
    """Renders builder requests in upstream's wording; ``local``: a local copy of the upstream repository.
    Replies fill later requests as upstream's ``getOutput`` returns them (not stripped)."""

    raw = True

    def __init__(self, local: str | None = None) -> None:
        self.local = local
        self.texts: dict[str, str] = {}

    def check(self, keys: list[tuple[str, str]]) -> None:
        """Read every file the requests ``keys`` need now (one line when one cannot be had)."""
        for key in keys:
            spec = PROMPTS[key]
            if spec.instruction:
                self._text(spec.instruction[1])
            if spec.target:
                self._text(spec.module)
                _fstring(spec.module, spec.function, spec.branch, spec.target, self.local)

    def _text(self, rel: str) -> str:
        if rel not in self.texts:
            self.texts[rel] = _path(rel, self.local).read_text(encoding="utf-8")
        return self.texts[rel]

    def render(self, section: str, step: str, values: Mapping[str, object], source: str = "") -> str:
        spec = PROMPTS[(section, step)]
        env: dict[str, str] = {}
        if spec.instruction:
            name, rel, fills = spec.instruction
            text = self._text(rel)
            for marker, key in fills:
                text = text.replace(marker, str(values[key]))
            if spec.target is None:
                return text
            env[name] = text
        env.update({up: str(values[ours]) for up, ours in spec.fields.items()})
        branch = BRANCHES.get(source, spec.branch) if spec.branch == "crows" else spec.branch
        node = _fstring(spec.module, spec.function, branch, spec.target, self.local)  # type: ignore[arg-type]
        out = evaluate(node, env, f"{KEY}:{spec.module} {spec.target}")
        if not isinstance(out, str):
            raise UpstreamDataError(f"{KEY}:{spec.module}: {spec.target} is not a string")
        return out


Wording = OwnWording | UpstreamWording


def wording(prompt: str, local: str | None = None, keys: list[tuple[str, str]] | None = None,
            n_variations: int | None = None) -> Wording:
    """The builder's wording ``prompt`` (``upstream``, the default, or ``stereoprobe``), with the files of the
    requests ``keys`` read now (one line when one cannot be had) and, for upstream's, the variation count
    checked."""
    if prompt not in WORDINGS:
        raise InputError(f"prompt must be one of {', '.join(WORDINGS)}, got {prompt!r}")
    if prompt == "stereoprobe":
        return OwnWording()
    if n_variations is not None and n_variations > 0:
        check_variations(n_variations)
    out = UpstreamWording(local)
    out.check(keys or [])
    return out


def check_variations(n_variations: int) -> None:
    """Upstream's variation prompt asks for exactly nine sentences; another number needs our wording."""
    if n_variations != UPSTREAM_VARIATIONS:
        raise InputError(f"n_variations={n_variations}: upstream's qa_generate2_more_sentences.txt asks for "
                         f"{UPSTREAM_VARIATIONS} sentences; use -T n_variations={UPSTREAM_VARIATIONS}, or "
                         f"-T prompt=stereoprobe (our wording) for another number")


def local_root(local: str | None, source: str) -> str | None:
    """The local copy of the upstream repository a builder task was given (``local=`` with CrowS-Pairs), else None."""
    return local if source == "crows_pairs" and local is not None and Path(local).is_dir() else None
