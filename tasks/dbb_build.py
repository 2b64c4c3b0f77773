"""DBB dataset builder as inspect tasks (Pan et al., Findings of EMNLP 2025, §3.1; upstream
src/concept_analysis.py and src/q_generate.py, github.com/JP-25/Description-based-Bias-Benchmark): an LLM in
the ``generator`` role (and optionally a separate ``grader`` role) turns stereotype inputs (CrowS-Pairs,
StereoSet, SOFA, BBQ, a CSV of sentence pairs) into concept pairs, then concept pairs into question templates
with sentence variations for DBB-SG. Assembly only: solvers in ``solvers/dbb_build.py``, the scorer in
``scorers/dbb_build.py``, inputs and parsing in :mod:`stereoprobe.dbb.builder`.

    inspect eval stereoprobe/dbb_build_concepts --model none --model-role generator=openai/gpt-4o --limit 50 \
        --log-dir logs/build
    stereoprobe dbb-build-export logs/build --out data/built                       # -> concepts.csv
    inspect eval stereoprobe/dbb_build_questions -T concepts=data/built/concepts.csv \
        --model none --model-role generator=openai/gpt-4o --log-dir logs/build
    stereoprobe dbb-build-export logs/build --out data/built         # -> templates.csv, sg_variations.csv
    inspect eval stereoprobe/dbb -T source=data/built/templates.csv ...

Every input becomes a sample with a stable id; a reply that does not parse or is a refusal is recorded
(``status``) and counted by the metrics, never dropped silently.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from stereoprobe.dbb import builder as B
from stereoprobe.dbb.builder_upstream import local_root
from stereoprobe.listings import task_version
from stereoprobe.params import one_line_errors
from stereoprobe.scorers.dbb_build import build_status
from stereoprobe.solvers.dbb_build import concept_pipeline, question_pipeline, variation_pipeline
from stereoprobe.strict_params import refuse_unknown

VARIATIONS_MAX = 100  # extra sentences per option asked in one request (upstream asks for 9)
TASK_VERSION = task_version("dbb_build_concepts")  # tasks/<probe>.eval.yaml


@task(
    description='DBB builder: concept pairs from stereotype datasets (CrowS-Pairs, StereoSet, SOFA, BBQ) with a grader',
    tags=['dataset_builder', 'dbb'],
    paper="Pan, Raj, Yao, Zhu, What's Not Said Still Hurts (Description-based Bias Benchmark), Findings of EMNLP 2025",
)
@refuse_unknown
@one_line_errors
def dbb_build_concepts(source: str = "crows_pairs", local: str | None = None, use_filter: bool = True,
                       temperature: float = 0.2, grader_temperature: float = 0.3,
                       revision: str | None = None, generation: str = "upstream", prompt: str = "upstream") -> Task:
    """Concept pairs from stereotype inputs, with the steps of each source (paper §3.1.1): CrowS-Pairs,
    StereoSet and sentence-pair CSVs: filter → explanation → pair → grader; SOFA: explanation → pair →
    grader; BBQ: pair (from the question) → explanation (from context + question) → grader.

    Args:
        source: "crows_pairs" (pinned upstream copy of CrowS-Pairs), "stereoset_intra", "stereoset_inter",
            "sofa", "bbq" (Hugging Face datasets at pinned revisions), or a CSV with sent_more, sent_less.
        local: offline copy: for crows_pairs the upstream DBB repository; for stereoset_*/sofa/bbq a
            CSV/JSONL/Parquet export of the dataset with its own columns.
        use_filter: run the quality filter first on sentence pairs (upstream keeps a pair only if the reply
            is "False"); SOFA and BBQ have no filter step.
        temperature, grader_temperature: generator and grader temperatures (upstream 0.2 and 0.3).
        revision: Hub commit overriding the pinned one (stereoset_*/sofa/bbq).
        generation: "upstream" (default: system message, 2,048 tokens, frequency penalty 0.6, refusal
            replies dropped with status "refused") or "plain" (1,024 tokens, nothing else); see
            datasets/dbb/builder_generation.yaml.
        prompt: "upstream" (default: upstream's own requests, read at run time from the pinned
            src/concept_analysis.py and src/prompt_instructions/*.txt, checksummed) or "stereoprobe" (our wording,
            datasets/dbb/builder_prompts.yaml).
    """
    settings = B.generation_settings(generation)
    records = B.read_source_records(source, local, revision)
    solver = concept_pipeline(use_filter, temperature, grader_temperature, generation, prompt,
                              local_root(local, source))
    samples = [Sample(id=r.id, input=r.sent_more or r.stereotype or r.question, metadata=r.fields())
               for r in records]
    name = source if source in B.SOURCES else Path(source).stem
    key = B.hub_key(source)
    return Task(dataset=MemoryDataset(samples, name=f"dbb-build-{name}"),
                solver=solver, scorer=build_status(), version=TASK_VERSION,
                metadata={"probe": "dbb", "variant": "build-concepts", "source": source, "generation": settings,
                          "prompt": prompt,
                          "revision": revision or (B.HUB[key].revision if key else None)})


@task(
    description='DBB builder: question templates and option sentence variations from a concepts table',
    tags=['dataset_builder', 'dbb'],
    paper="Pan, Raj, Yao, Zhu, What's Not Said Still Hurts (Description-based Bias Benchmark), Findings of EMNLP 2025",
)
@refuse_unknown
@one_line_errors
def dbb_build_questions(concepts: str, n_variations: int = 9, temperature: float = 0.3,
                        grader_temperature: float = 0.3, generation: str = "upstream", prompt: str = "upstream",
                        local: str | None = None) -> Task:
    """Question templates (context, option A, option B, grader) and ``n_variations`` extra sentences per
    option for DBB-SG (paper §3.1.2; 9 + the original = 10), from a concepts CSV; ``generation`` as for
    ``dbb_build_concepts``; ``prompt``: "upstream" (default: upstream src/q_generate.py's requests, with
    src/prompt_instructions/qa_generate1.txt, qa_generate2.txt and qa_generate2_more_sentences.txt, which asks
    for 9 variations) or "stereoprobe" (our wording); ``local``: a local copy of the upstream repository."""
    from stereoprobe.dbb.data import DBBDataError
    from stereoprobe.params import integer

    n_variations = integer(n_variations, "n_variations", 0, maximum=VARIATIONS_MAX, error=DBBDataError)
    settings = B.generation_settings(generation)
    solver = question_pipeline(n_variations, temperature, grader_temperature, generation, prompt, local)
    rows = B.read_concepts(concepts)
    samples = [Sample(id=r["concept_id"], input=r["concept_a"],
                      metadata={"concept_a": r["concept_a"], "concept_b": r["concept_b"],
                                "explanation": r.get("explanation", "")}) for r in rows]
    return Task(dataset=MemoryDataset(samples, name=f"dbb-build-{Path(concepts).stem}"),
                solver=solver, scorer=build_status(), version=TASK_VERSION,
                metadata={"probe": "dbb", "variant": "build-questions", "n_variations": n_variations,
                          "generation": settings, "prompt": prompt})


@task(
    description='DBB builder: the ten DBB-SG sentence variations of existing question templates',
    tags=['dataset_builder', 'dbb'],
    paper="Pan, Raj, Yao, Zhu, What's Not Said Still Hurts (Description-based Bias Benchmark), Findings of EMNLP 2025",
)
@refuse_unknown
@one_line_errors
def dbb_build_variations(source: str = "upstream", n_variations: int = 9, temperature: float = 0.3, seed: int = 0,
                         generation: str = "upstream", limit_templates: int | None = None,
                         prompt: str = "upstream") -> Task:
    """The ten DBB-SG variations of existing templates (paper §4.3: "we generate ten sentence variations"):
    ``n_variations`` extra sentences per option (+ the template's own = 10), for when upstream's more-contexts
    file is not at hand. Export with ``stereoprobe dbb-build-export`` and pass ``-T variations=`` to dbb_sg.

    Args:
        source: templates as for ``dbb`` (default "upstream": the 1,547 pinned templates).
        n_variations: extra sentences per option (upstream prompt qa_generate2_more_sentences asks for 9).
        temperature: generator temperature (upstream q_generate.py: 0.3).
        seed: request seed (recorded; reproducible with providers that honour it).
        generation: as for ``dbb_build_concepts``.
        limit_templates: only the first N templates.
        prompt: "upstream" (default: upstream's qa_generate2_more_sentences.txt, which asks for 9) or
            "stereoprobe" (our wording, any ``n_variations``).
    """
    from stereoprobe.dbb.data import load_source
    from stereoprobe.dbb.data import DBBDataError
    from stereoprobe.params import integer

    n_variations = integer(n_variations, "n_variations", 0, maximum=VARIATIONS_MAX, error=DBBDataError)
    seed = integer(seed, "seed", 0, error=DBBDataError)
    n = integer(limit_templates, "limit_templates", 1, optional=True, error=DBBDataError)
    settings = B.generation_settings(generation)
    solver = variation_pipeline(n_variations, temperature, generation, seed, prompt,
                                local_root(str(source), "crows_pairs"))
    tmpl, _ = load_source(source)
    samples = [Sample(id=t.template_id, input=t.context,
                      metadata={"template_id": t.template_id, "context": t.context, "concept_a": t.concept_a,
                                "concept_b": t.concept_b, "explanation": t.explanation})
               for t in (tmpl[:n] if n else tmpl)]
    return Task(dataset=MemoryDataset(samples, name=f"dbb-build-variations-{Path(str(source)).stem}"),
                solver=solver, scorer=build_status(), version=TASK_VERSION,
                metadata={"probe": "dbb", "variant": "build-variations", "source": str(source),
                          "n_variations": n_variations, "seed": seed, "generation": settings, "prompt": prompt})
