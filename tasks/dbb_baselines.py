"""The term-based baselines of the DBB paper prompted generatively, as the paper ran them (Pan et al., Findings
of EMNLP 2025, §4.1.1, Appendix D.1, Tables 1 and 6): BBQ, CrowS-Pairs and StereoSet asked with the paper's
Table 11 prompt and upstream's system message, the answer letter parsed from a sampled reply (paper Appendix
A settings), scored with the paper's measures and refusal rates.

    inspect eval stereoprobe/dbb_baselines -T benchmark=bbq --model openai/gpt-4o
    inspect eval stereoprobe/dbb_baselines -T benchmark=stereoset --model transformers/default --limit 20

This is the paper's protocol for its baseline columns. ``stereoprobe dbb --term-based`` is a different
protocol: it maps lm-eval log-likelihood scores of those benchmarks onto the paper's columns (no generated
answer, no refusals).
"""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from stereoprobe import params as P
from stereoprobe.dbb import baselines as BL
from stereoprobe.dbb import scoring as SC
from stereoprobe.dbb.data import DBBDataError
from stereoprobe.listings import task_version
from stereoprobe.params import one_line_errors
from stereoprobe.scorers.dbb_baselines import dbb_baseline_scorer, dbb_baseline_scores
from stereoprobe.strict_params import refuse_unknown
from stereoprobe.solvers.capability import check_before_run

__all__ = ["dbb_baselines"]

TASK_VERSION = task_version("dbb_baselines")
_E = DBBDataError


@task(
    description="The DBB paper's term-based baselines (BBQ, CrowS-Pairs, StereoSet) prompted generatively with its Table 11 prompt; BBQ bias score and accuracy, CrowS-Pairs stereotype share, StereoSet ICAT, refusal rates",
    tags=["social_bias", "multiple_choice", "dbb"],
    paper="Pan, Raj, Yao, Zhu, What's Not Said Still Hurts (Description-based Bias Benchmark), Findings of EMNLP 2025",
)
@refuse_unknown
@one_line_errors
def dbb_baselines(
    benchmark: str = "bbq",
    source: str = "upstream",
    categories: list[str] | str | None = None,
    splits: list[str] | str | None = None,
    epochs: int = 1,
    seed: int = 0,
    temperature: float = 0.8,
    top_p: float = 1.0,
    frequency_penalty: float = 0.6,
    max_tokens: int = 2048,
    verify: bool = True,
    prompt: str = "upstream",
) -> Task:
    """The paper's generative protocol for one baseline benchmark.

    Args:
        benchmark: "bbq" (ambiguous and disambiguated contexts), "crows_pairs" or "stereoset" (intra- and
            inter-sentence).
        source: "upstream" (the pinned files of nyu-mll/BBQ, nyu-mll/crows-pairs, moinnadeem/StereoSet:
            downloaded, verified, cached, or from ``$STEREOPROBE_UPSTREAM_DIR/<BBQ|CrowS-Pairs|StereoSet>/``)
            or a folder holding a copy (``<folder>/<key>/...`` or the repository's own layout).
        categories: BBQ category files (default: every single-attribute category but SES, the subset whose
            sizes give the paper's 12,254 questions per context condition; the paper does not name its own).
        splits: StereoSet splits (default: intrasentence, intersentence).
        epochs: replies per question (paper: one; every reply counts).
        seed: the CrowS-Pairs sentence order (a seeded order per pair; the file lists the more stereotypical
            sentence first).
        temperature, top_p, frequency_penalty, max_tokens: paper Appendix A (0.8, 1, 0.6, 2048).
        verify: check the files against the pinned checksums (false: use a local copy as it is).
        prompt: "upstream" (default: the instruction is the paper's Table 11 prompt, upstream
            Hidden-Bias-Benchmark src/prompt_instructions/evaluate_probs.txt, read at run time from the pinned
            commit, from $STEREOPROBE_UPSTREAM_DIR or from ``source``'s Hidden-Bias-Benchmark/ folder) or
            "stereoprobe" (the project's own wording, no download).
    """
    benchmark = P.choice(benchmark, "benchmark", BL.BENCHMARKS, error=_E)
    cats = P.choices(categories, "categories", BL.BBQ_CATEGORIES, error=_E)
    sp = P.choices(splits, "splits", BL.STEREOSET_SPLITS, error=_E)
    n_epochs = P.integer(epochs, "epochs", 1, maximum=P.COUNT_MAX, error=_E)
    seed = P.integer(seed, "seed", 0, error=_E)
    temperature = P.number(temperature, "temperature", 0.0, error=_E)
    top_p = P.number(top_p, "top_p", 0.0, 1.0, low_open=True, error=_E)
    frequency_penalty = P.number(frequency_penalty, "frequency_penalty", -2.0, 2.0, error=_E)
    max_tokens = P.integer(max_tokens, "max_tokens", 1, error=_E)
    verify = bool(P.boolean(verify, "verify", error=_E))
    prompt = P.choice(prompt, "prompt", SC.PROMPTS, error=_E)
    items = BL.load_items(benchmark, source, cats, sp, seed=int(seed), verify=verify)
    if not items:
        raise DBBDataError(f"dbb_baselines: no {benchmark} items in source {source!r}")
    spec = SC.prompts(prompt, source, verify)  # upstream's instruction file (or its one-line error)
    mcq = spec["mcq"]
    tmpl = {"instruction": mcq["instruction"], "template": spec["baselines"][benchmark]}
    samples = [
        Sample(id=it.id, input=_messages(BL.prompt(it, tmpl), mcq.get("system")),
               metadata={"benchmark": benchmark, "subset": it.subset, "options": list(it.options),
                         "roles": list(it.roles), **it.metadata})
        for it in items
    ]
    check_before_run(None, "task dbb_baselines")  # the endpoint answers: one request
    return Task(
        dataset=MemoryDataset(samples, name=f"dbb-baselines-{benchmark}"),
        solver=generate(),
        scorer=dbb_baseline_scorer(benchmark=benchmark),
        metrics=[dbb_baseline_scores(benchmark=benchmark)],
        epochs=Epochs(n_epochs),
        config=GenerateConfig(temperature=temperature, top_p=top_p, frequency_penalty=frequency_penalty,
                              max_tokens=max_tokens),
        version=TASK_VERSION,
        metadata={"probe": "dbb", "variant": "baselines", "benchmark": benchmark, "source": str(source),
                  "categories": cats, "splits": sp, "epochs": n_epochs, "seed": seed, "prompt": prompt,
                  "protocol": "generative (paper Table 11 prompt); not lm-eval log-likelihood"},
    )


def _messages(user: str, system: str | None) -> list:
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    return ([ChatMessageSystem(content=system)] if system else []) + [ChatMessageUser(content=user)]
