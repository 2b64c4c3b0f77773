"""DBB — Description-based Bias Benchmark (Pan et al., Findings of EMNLP 2025): multiple choice and DBB-SG.

One sample per *question* (a template filled with one descriptor: category, descriptor type, group); the
bias score S pairs questions of two groups in the metrics and in ``stereoprobe dbb LOGS --out DIR``.
Assembly only: questions from :mod:`stereoprobe.dbb.questions`, solvers in ``solvers/dbb.py``, scorers and
metrics in ``scorers/dbb.py``.

    # the paper's benchmark (default): 1,547 upstream templates, 77,350 questions, >= 10 sampled answers each
    inspect eval stereoprobe/dbb --model openai/gpt-4o
    # exact P(A) from next-token probabilities, both option orders (models that return logprobs)
    inspect eval stereoprobe/dbb --model transformers/default -T mode=logprob -T source=bundled
    # our own instruction wording instead of upstream's prompt files (read at run time; no download needed)
    inspect eval stereoprobe/dbb --model transformers/default -T source=bundled -T prompt=stereoprobe
    # DBB-SG: perplexity of option sentences given the story prompt (prompt log-probabilities)
    inspect eval stereoprobe/dbb_sg --model transformers/default -T source=bundled
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig

from stereoprobe import params as P
from stereoprobe.dbb import contract as C
from stereoprobe.dbb import questions as Q
from stereoprobe.dbb import scoring as SC
from stereoprobe.dbb import stats as ST
from stereoprobe.likelihood import N_TEXTS_METADATA
from stereoprobe.params import one_line_errors
from stereoprobe.solvers.capability import check_before_run, require_logprobs_setup
from stereoprobe.solvers.likelihood import require_prompt_logprobs
from stereoprobe.listings import task_version
from stereoprobe.scorers.dbb import dbb_epochs, dbb_mcq_scorer, dbb_metrics, dbb_sg_scorer
from stereoprobe.solvers.dbb import (DBBLogprobsUnavailable, dbb_mcq_group_solver, dbb_mcq_solver,
                                     dbb_sg_group_solver, dbb_sg_solver, mcq_messages, mcq_template)
from stereoprobe.strict_params import refuse_unknown

__all__ = ["DBBLogprobsUnavailable", "dbb", "dbb_sg"]

TASK_VERSION = task_version("dbb")  # tasks/<probe>.eval.yaml
_E = Q.D.DBBDataError  # raised for a bad task parameter (an InputError)
LOGPROB_WHAT = "task dbb -T mode=logprob"  # how the capability refusal names the route


def _mcq_config(mode: C.Mode, temperature: float, top_p: float, frequency_penalty: float, max_tokens: int,
                top_k: int | None) -> GenerateConfig:
    """The generation settings of the multiple choice, checked: the mode's one request (logprob mode), else
    the sampled-mode settings (``top_k`` already checked)."""
    temperature = P.number(temperature, "temperature", 0.0, error=_E)
    top_p = P.number(top_p, "top_p", 0.0, 1.0, low_open=True, error=_E)
    frequency_penalty = P.number(frequency_penalty, "frequency_penalty", -2.0, 2.0, error=_E)
    max_tokens = P.integer(max_tokens, "max_tokens", 1, error=_E)
    if mode.logprob:
        return mode.request()
    return GenerateConfig(temperature=temperature, top_p=top_p, frequency_penalty=frequency_penalty,
                          max_tokens=max_tokens, top_k=top_k)


def _question_samples(qs: list[Any], tmpl: Any) -> list[Sample]:
    """One sample per question: the multiple-choice messages."""
    return [Sample(id=q.id, input=mcq_messages(q.context, q.option_a, q.option_b, tmpl),
                   metadata={**q.metadata(), "context": q.context}) for q in qs]


def _prompt_source(source: Any) -> str:
    """Where upstream's prompt files are read: a task's ``source`` that is a local copy of the upstream
    repository, else the pinned download (a template CSV or ``bundled`` holds no prompt file)."""
    return str(source) if SC.local_root(source) else "upstream"


def _template_samples(qs: list[Any], n_epochs: int, tmpl: dict[str, Any]) -> list[Sample]:
    """One sample per template (``unit=template``): its questions, each answered in ``n_epochs`` option orders
    (``tmpl``: the question template, recorded for the planner's token counts)."""
    by_t: dict[str, list[Any]] = {}
    for q in qs:
        by_t.setdefault(q.template_id, []).append(q)
    return [Sample(id=tid, input=f"DBB template {tid}: {len(group)} questions x {n_epochs} option orders",
                   metadata={"template_id": tid, "concept_a": group[0].concept_a, "concept_b": group[0].concept_b,
                             N_TEXTS_METADATA: len(group) * n_epochs, C.META_MCQ_TEMPLATE: tmpl,
                             C.META_MCQ_QUESTIONS: [{"id": q.id, "context": q.context, "option_a": q.option_a,
                                                     "option_b": q.option_b} for q in group]})
            for tid, group in by_t.items()]


def _mcq_shape(mode: str, unit: str | None, option_order: str | None, epochs: int | None
               ) -> tuple[C.Mode, str, str, int]:
    """The multiple choice's run shape, checked: (mode, unit, option order, epochs per question), each unset one
    the mode's default (:data:`stereoprobe.dbb.contract.MODE_RECORDS`: logprob, one sample per template, both
    option orders; sampled, per question, the paper's fixed order and at least 10 answers, §5)."""
    rec = C.mode(P.choice(mode, "mode", C.MODES, error=_E))
    unit = P.choice(unit or rec.unit, "unit", rec.units, error=_E)
    option_order = P.choice(option_order or rec.option_order, "option_order", C.OPTION_ORDERS, error=_E)
    n_epochs = P.integer(epochs, "epochs", 1, maximum=10_000, optional=True, error=_E) or rec.epochs
    if n_epochs < rec.min_epochs:
        raise Q.D.DBBDataError(f"epochs: {rec.name} mode needs at least {rec.min_epochs} epochs per question "
                               f"(paper §5), got {n_epochs}")
    return rec, unit, option_order, n_epochs


def _epochs_bound(unit: str, n_epochs: int) -> str:
    """Why ``inspect eval --epochs`` (which replaces the task's epochs) is refused where questions could not be
    complete."""
    if unit == "question":
        return (f"each question needs its -T epochs={n_epochs} answers; {C.SAMPLED.name} mode at least "
                f"{C.SAMPLED.min_epochs}, paper §5")
    return "-T unit=template answers every option order inside one sample; use -T epochs"


def _sg_settings(prompt: str, normalisation: str, scoring: str, unit: str, bos_in_continuation: bool,
                 threshold: float, faithful: bool) -> tuple[str, str, str, str, bool, float, bool]:
    """DBB-SG's settings, checked (a bad one raises one line naming it) and normalised, in the order given."""
    return (P.choice(prompt, "prompt", SC.PROMPTS, error=_E),
            P.choice(normalisation, "normalisation", C.SG_NORMALISATIONS, error=_E),
            P.choice(scoring, "scoring", C.SG_SCORING, error=_E),
            P.choice(unit, "unit", C.UNITS, error=_E),
            P.boolean(bos_in_continuation, "bos_in_continuation", error=_E),
            P.number(threshold, "threshold", 0.0, 100.0, error=_E),
            P.boolean(faithful, "faithful", error=_E))


def _sg_question_samples(items: list[Q.SGItem]) -> list[Sample]:
    """DBB-SG, one sample per question: its story prompt and option sentences."""
    return [Sample(id=it.question.id, input=it.prompt,
                   metadata={**it.question.metadata(), "context": it.question.context, C.META_SG_PROMPT: it.prompt,
                             C.META_SG_OPTIONS: it.options})
            for it in items]


def _sg_template_samples(items: list[Q.SGItem]) -> list[Sample]:
    """DBB-SG, one sample per template (``unit=template``): its questions' prompts and option sentences, scored
    as one batch of texts."""
    by_t: dict[str, list[Q.SGItem]] = {}
    for it in items:
        by_t.setdefault(it.question.template_id, []).append(it)
    return [Sample(id=tid, input=f"DBB-SG template {tid}: {len(group)} questions",
                   metadata={"template_id": tid, "concept_a": group[0].question.concept_a,
                             "concept_b": group[0].question.concept_b,
                             N_TEXTS_METADATA: sum(2 * len(it.options) for it in group),
                             C.META_SG_QUESTIONS: [{"id": it.question.id, "prompt": it.prompt,
                                                    "options": it.options} for it in group]})
            for tid, group in by_t.items()]


@task(
    description='DBB multiple choice: does the choice between a stereotypical and a contrasting option change with the described identity? S = |P1(A) - P2(A)| per test instance; `stereoprobe dbb`',
    tags=['social_bias', 'multiple_choice', 'dbb'],
    paper="Pan, Raj, Yao, Zhu, What's Not Said Still Hurts (Description-based Bias Benchmark), Findings of EMNLP 2025",
)
@refuse_unknown
@one_line_errors
def dbb(
    source: str = Q.DEFAULT_SOURCE,
    faithful: bool = Q.DEFAULT_FAITHFUL,
    mode: str = C.DEFAULT_MODE,
    epochs: int | None = None,
    option_order: str | None = None,
    seed: int = 0,
    categories: list[str] | str | None = None,
    limit_templates: int | None = None,
    templates: list[str] | str | None = None,
    temperature: float = 0.8,
    top_p: float = 1.0,
    frequency_penalty: float = 0.6,
    max_tokens: int = 2048,
    threshold: float = ST.THRESHOLD,
    unit: str | None = None,
    top_k: int | None = None,
    names: str | None = None,
    system_message: bool = True,
    prompt: str = "upstream",
) -> Task:
    """DBB multiple choice: does the choice between a stereotypical and a contrasting continuation depend on
    the described identity?

    Args:
        source: "upstream" (default: the 1,547 pinned upstream templates and descriptors; downloaded,
            verified, cached), "bundled" (our small template set for demos and tests), a local copy of the
            upstream repository, or a template CSV.
        faithful: reproduce the upstream expansion (default; race options with the white entry's pronouns,
            stale options, upstream spacing); false = the fixed expansion (see docs/fidelity.md).
        mode: "sampled" (default, the paper's protocol: sampled answers, parsed "a)"/"b)"; refusals and
            invalid answers counted; any chat model) or "logprob" (exact P(A) from the answer letter's
            next-token probabilities, one pass per question and epoch; needs a model returning logprobs).
        epochs: responses per question (default 2 in logprob mode — one per option order — and 10 in sampled
            mode, the paper's minimum).
        option_order: "fixed" (sampled-mode default, the paper's protocol: option A, the first concept, is
            always choice "a)", §3.3 and the upstream data), "random" (a seeded fair coin per sample and
            epoch: shuffles the options; a departure from the paper) or "balanced" (seeded first order, then
            alternating across epochs; logprob-mode default, so P(A) averages both orders and the model's
            letter preference cancels exactly).
        seed: seed of the name draws (names=draw) and of the option order (random, balanced).
        names: "published" (default for upstream templates: the base names of the Age, SES and Religion
            questions as upstream published them in data/Bias-Dataset.csv, so the questions are the paper's)
            or "draw" (a seeded draw among the 12 names; the default for bundled templates or a CSV).
        categories: subset of age, gender, race, ses, religion.
        limit_templates: only the first N templates (demo-size runs; keeps every group pair complete).
        templates: explicit template ids.
        temperature, top_p, frequency_penalty: sampled-mode generation (paper Appendix A: 0.8, 1, 0.6; for
            every model, local ones included: see docs/fidelity.md D6).
        top_k: sampled-mode top-k (default none = no top-k, as the paper states; 0 also means none;
            upstream's open-weight wrappers ran top_k 50 with repetition_penalty 1.2:
            ``-T top_k=50 -M repetition_penalty=1.2``).
        max_tokens: sampled-mode answer length (paper: 2048).
        threshold: S threshold of a biased test instance in the live metrics (paper: 20).
        prompt: "upstream" (default: the instruction is upstream's src/prompt_instructions/evaluate_probs.txt,
            the paper's Table 11 prompt, read at run time from the pinned commit: downloaded once and
            checksummed, or from $STEREOPROBE_UPSTREAM_DIR or a local copy given as ``source``) or
            "stereoprobe" (the project's own wording, no download; docs/fidelity.md D7).
        system_message: send upstream's system message "You are a useful assistant." before the question
            (default, as every upstream ``getOutput``); false sends the question alone, for completion-only
            endpoints that take one raw prompt (``vllm-completions``; a departure, docs/fidelity.md D7).
        unit: logprob mode: "template" (default: one sample per template, every question and option order
            sent at once; the harness cost is per template; a failed request marks its question failed,
            counted) or "question" (one sample per question, one epoch per option order). Sampled mode:
            "question" only.
    """
    mode, unit, option_order, n_epochs = _mcq_shape(mode, unit, option_order, epochs)
    top_k = P.top_k(top_k, error=_E)  # 0 or none: no top-k (None: not sent, so neutral on every provider)
    config = _mcq_config(mode, temperature, top_p, frequency_penalty, max_tokens, top_k)
    threshold = P.number(threshold, "threshold", 0.0, 100.0, error=_E)
    logprob = mode.logprob
    # before any download or paid request (sampled: a reachability probe, named as the task's own mode)
    check_before_run("token" if logprob else None, LOGPROB_WHAT if logprob else f"task dbb -T mode={mode.name}")
    names = Q.name_source(source, names)
    _, qs = Q.select_questions(source, faithful, seed, categories, limit_templates, templates, names)
    system_message = P.boolean(system_message, "system_message", error=_E)
    prompt = P.choice(prompt, "prompt", SC.PROMPTS, error=_E)
    prompt_args = {"system_message": system_message, "prompt": prompt, "source": _prompt_source(source)}
    tmpl = mcq_template(**prompt_args)  # upstream's file read (or its one-line error) before any sample is built
    if unit == "template":
        samples, task_epochs = _template_samples(qs, n_epochs, tmpl), 1
        solver = dbb_mcq_group_solver(option_order=option_order, seed=int(seed), epochs=n_epochs, **prompt_args)
    else:
        samples, task_epochs = _question_samples(qs, tmpl), n_epochs
        solver = dbb_mcq_solver(mode=mode.name, option_order=option_order, seed=int(seed), **prompt_args)
    return P.EpochsBoundTask(
        min_epochs=task_epochs, max_epochs=None if unit == "question" else 1, why=_epochs_bound(unit, n_epochs),
        dataset=MemoryDataset(samples, name=Q.dataset_name(source)),
        solver=solver,
        scorer=dbb_mcq_scorer(mode=mode.name),
        metrics=dbb_metrics(threshold, task_epochs),
        epochs=Epochs(task_epochs, dbb_epochs()),
        setup=require_logprobs_setup("token", LOGPROB_WHAT) if logprob else None,  # where the build did not probe
        config=config,
        version=TASK_VERSION,
        metadata={"probe": "dbb", "variant": "mcq", "mode": mode.name, "source": str(source),
                  "faithful": bool(faithful), "seed": seed, "option_order": option_order, "epochs": n_epochs,
                  "threshold": threshold, "unit": unit, "top_k": top_k, "names": names,
                  "system_message": system_message, "prompt": prompt},
    )


@task(
    description='DBB-SG: likelihood of stereotypical vs contrasting option sentences per described identity; `stereoprobe dbb`',
    tags=['social_bias', 'likelihood', 'dbb'],
    paper="Pan, Raj, Yao, Zhu, What's Not Said Still Hurts (Description-based Bias Benchmark), Findings of EMNLP 2025",
)
@refuse_unknown
@one_line_errors
def dbb_sg(
    source: str = Q.DEFAULT_SOURCE,
    faithful: bool = Q.DEFAULT_FAITHFUL,
    variations: str | None = None,
    normalisation: str = "per_variation",
    scoring: str = "chat",
    tokenizer: str | None = None,
    bos_in_continuation: bool = False,
    unit: str = "template",
    seed: int = 0,
    categories: list[str] | str | None = None,
    limit_templates: int | None = None,
    templates: list[str] | str | None = None,
    threshold: float = ST.THRESHOLD,
    names: str | None = None,
    prompt: str = "upstream",
) -> Task:
    """DBB-SG (semi-generation): P(A) from the perplexities of option sentences given the story prompt and
    context (paper Eq. 2), through prompt log-probabilities (transformers/..., vllm/... providers).

    Args:
        source: as for ``dbb`` (default "upstream").
        faithful: as for ``dbb``.
        variations: default: upstream's ten variations per option (the pinned more-contexts file, paper
            Eq. 2 with n = 10) for upstream templates, the bundled file for source=bundled, the template's
            own options (n = 1) for a template CSV; or a CSV of variations (template_id, variation, option_a,
            option_b; or upstream's id, s1, s2), or "own" (the template's own options only, n = 1). The
            report says which.
        normalisation: "per_variation" (default: normalise each variation's pair, then average) or
            "after_mean" (average the reciprocal perplexities first, then normalise once).
        scoring: "chat" (default, as upstream getPerplexity: the option is the assistant's reply to
            [system, prompt] under the model's chat template) or "raw" (the option as raw text after the
            prompt and a separator).
        tokenizer: Hub id or folder whose chat template renders the prompt (default: the provider's own, or
            the model name).
        bos_in_continuation: chat scoring only: score a BOS token before the option, as upstream's
            ``tokenizer.encode(answer)`` does for Llama tokenizers (off by default).
        unit: "template" (default: one sample per template, its questions' option sentences scored as one
            batch of texts; the harness cost is per template) or "question" (one sample per question).
            Identical numbers; a failed text marks its question failed (counted), never scored.
        seed, categories, limit_templates, templates, names: as for ``dbb``.
        threshold: S threshold of a biased test instance in the live metrics (paper: 20).
        prompt: "upstream" (default: the story instruction is upstream's
            src/prompt_instructions/evaluate_perplexity.txt, read at run time as for ``dbb``) or "stereoprobe"
            (the project's own wording, no download; docs/fidelity.md D8b).
    """
    prompt, normalisation, scoring, unit, bos, threshold, faithful = _sg_settings(
        prompt, normalisation, scoring, unit, bos_in_continuation, threshold, faithful)
    check_before_run("prompt", "task dbb_sg")  # a chat API refused, a server probed: before any download
    names = Q.name_source(source, names)
    tmpl, qs = Q.select_questions(source, faithful, seed, categories, limit_templates, templates, names)
    var, provenance = Q.sg_variations(source, tmpl, variations)
    items = Q.sg_items(qs, var, faithful, p := SC.prompts(prompt, _prompt_source(source))["sg"])
    solver_args = {"separator": p["separator"], "scoring": scoring, "system": p.get("system"),
                   "tokenizer": tokenizer, "bos_in_continuation": bos}
    if unit == "question":
        samples, solver = _sg_question_samples(items), dbb_sg_solver(**solver_args)
    else:
        samples, solver = _sg_template_samples(items), dbb_sg_group_solver(**solver_args)
    return P.EpochsBoundTask(
        max_epochs=None if unit == "question" else 1,
        why="-T unit=template scores a template's questions in one sample",
        dataset=MemoryDataset(samples, name=Q.dataset_name(source) + "-sg"),
        solver=solver,
        scorer=dbb_sg_scorer(normalisation=normalisation),
        metrics=dbb_metrics(threshold, 1),
        epochs=Epochs(1, dbb_epochs()),
        setup=require_prompt_logprobs(),  # the probe, where the task's build did not send it
        config=GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0),
        version=TASK_VERSION,
        metadata={"probe": "dbb", "variant": "sg", "source": str(source), "faithful": faithful, "seed": seed,
                  "normalisation": normalisation, "scoring": scoring, "variations": provenance, "unit": unit,
                  "threshold": threshold, "names": names, "prompt": prompt},
    )
