"""StereoTales: open-ended stories about a protagonist defined by one attribute value, profiled by extractors.

Paper: Le Jeune et al. 2026, "StereoTales: A Multilingual Framework for Open-Ended Stereotype Discovery in
LLMs" (arXiv 2605.10442); upstream Giskard-AI/stereotales-pipeline. Docs: ``docs/stereotales.md``.

    inspect eval stereoprobe/stereotales --model openai/gpt-4o-mini \\
        --model-role extractor=openai/gpt-5-nano,google/gemini-2.5-flash-lite,google/gemini-3.1-flash-lite-preview \\
        --model-role refusal=openai/gpt-5-nano

One sample per (language, base attribute, prompted value, scenario): 2,844 per language for the reference
taxonomy. The subject writes one story per sample and epoch (``stories_per_prompt``); the scorer
``stereotales_extraction`` runs the refusal detector and the extractor ensemble (model roles ``refusal`` and
``extractor``) and records the consensus profile. Association mining runs afterwards on the logs
(``stereoprobe associations``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig

from stereoprobe.listings import task_version
from stereoprobe.params import COUNT_MAX, choice, integer, one_line_errors
from stereoprobe.scorers.stereotales import ROLE_SETTING_MODES, extraction_settings, stereotales_extraction
from stereoprobe.solvers.stereotales import story_generation
from stereoprobe.stereotales import contract as C
from stereoprobe.stereotales.run_settings import check_run_config
from stereoprobe.stereotales.taxonomy import load_taxonomy
from stereoprobe.stereotales.taxonomy.files import TaxonomyError
from stereoprobe.stereotales.taxonomy.samples import task_samples
from stereoprobe.strict_params import refuse_unknown
from stereoprobe.solvers.capability import check_before_run

TASK_VERSION = task_version("stereotales")  # tasks/<probe>.eval.yaml
SEED_SOURCES_HINT = "or use stereoprobe's own wording of the story prompts with -T seeds=bundled"
RUN_SETTINGS_HINT = "or send flare's base settings only (temperature 1, 4096 tokens) with -T run_settings=none"
# the scorer settings a log's task metadata records, in this order
RECORDED_SETTINGS = ("consensus", "extraction_prompt", "refusal_failure", "refusal_character", "refusal_votes",
                     "role_prompts", "role_settings")


def _taxonomy(source: str | None, verify: bool):
    """The taxonomy of the story prompts; an unobtainable upstream file names the bundled option."""
    try:
        return load_taxonomy(source, verify=verify)
    except TaxonomyError as e:
        if source == "upstream" and "upstream seeds:" in str(e):
            raise TaxonomyError(f"{e}; {SEED_SOURCES_HINT}") from e
        raise


def _task_metadata(fingerprint: str, source: str | None, settings: dict[str, Any], run_settings: str) -> dict[str, Any]:
    """The task metadata a log records: the probe, the taxonomy (fingerprint and source) and the settings."""
    return {"probe": C.TASK_STORIES, C.META_FINGERPRINT: fingerprint, "taxonomy_source": str(source or "bundled"),
            **{k: settings[k] for k in RECORDED_SETTINGS}, "run_settings": run_settings}


@task(
    description="StereoTales: stories about a character fixed by one socio-demographic attribute, the protagonist's profile labelled by extractor models; associations mined by `stereoprobe associations`",
    tags=['social_bias', 'stereotypes', 'generation', 'multilingual', 'stereotales'],
    paper='Le Jeune et al., StereoTales, arXiv:2605.10442 (2026)',
)
@refuse_unknown
@one_line_errors
def stereotales(
    languages: str | list[str] = "all",
    attributes: str | list[str] | None = None,
    values: str | list[str] | None = None,
    scenario_groups: str | list[str] | None = None,
    extra_english: bool = False,
    seeds: str = "upstream",
    taxonomy: str | None = None,
    consensus: str = "majority",
    extraction_prompt: str = "faithful",
    stories_per_prompt: int = 1,
    limit: int | None = None,
    min_extractors: int = 1,
    structured_output: bool = True,
    cache: bool | str = True,
    refusal_failure: str = "refusal",
    refusal_character: str = "value_key",
    verify_seeds: bool = True,
    refusal_votes: str = "upstream",
    role_prompts: str = "upstream",
    role_settings: str = "upstream",
    run_settings: str = "upstream",
) -> Task:
    """StereoTales story generation and profile extraction.

    Args:
        languages: ``"all"`` (default: every taxonomy language, the paper's ten for the reference taxonomy) or
            comma-separated language codes (``"en,fr"``).
        attributes: base attributes to prompt with (comma-separated keys; default all 19).
        values: prompted value keys (English); ``;``-separated, or comma-separated (keys containing commas
            are re-joined); default all.
        scenario_groups: scenario group keys (default all 9).
        extra_english: add the English-only templates without scenario (upstream bucket ``additional_en``).
        seeds: ``"upstream"`` (default: the paper's seeds at the pinned commit, 2,844 prompts per language,
            downloaded once and verified, or read from ``$STEREOPROBE_UPSTREAM_DIR``), ``"bundled"``
            (stereoprobe's own wording), or a local folder holding a copy of the upstream seeds.
        taxonomy: a taxonomy ``.yaml`` of your own (overrides ``seeds``): other attributes, values, scenarios
            or languages; the extraction schema and statistics follow it.
        stories_per_prompt: stories per sample (inspect epochs; the paper used 1).
        limit: at most this many samples per language, spread evenly over the grid (demo runs).
        verify_seeds: check a local copy of the upstream seeds against the pinned checksums (default); false
            reads an edited seed folder as it is (its source is then labelled unverified).
        consensus, extraction_prompt, min_extractors, structured_output, cache, refusal_failure,
            refusal_character, refusal_votes, role_prompts, role_settings: the extraction scorer's settings,
            passed on to :func:`stereoprobe.scorers.stereotales.stereotales_extraction` (its Args, and the
            parameter table of docs/stereotales.md, describe each; the defaults are the published pipeline's).
        run_settings: ``"upstream"`` (default: temperature 1 and 4,096 tokens, overridden by the evaluated
            model's entry of the published run configuration ``configs/stereotales_run.json`` when one
            matches, see docs/stereotales.md) or ``"none"`` (temperature 1 and 4,096 tokens for every model).
            Either way these fill only the settings the user left unset: ``--max-tokens``, ``--temperature``,
            ``--reasoning-effort``, ... given on the command line win, on every request of every role.
    """
    settings = extraction_settings(
        consensus, extraction_prompt, structured_output, cache, min_extractors, refusal_failure, refusal_character,
        verify_seeds, refusal_votes, role_prompts, role_settings, error=TaxonomyError)
    run_settings = choice(run_settings, "run_settings", ROLE_SETTING_MODES, error=TaxonomyError)
    epochs = integer(stories_per_prompt, "stories_per_prompt", 1, maximum=COUNT_MAX, error=TaxonomyError)
    source = taxonomy if taxonomy else (None if seeds in (None, "", "bundled") else seeds)
    tax = _taxonomy(source, settings["verify_seeds"])
    if run_settings == "upstream":
        check_run_config(RUN_SETTINGS_HINT)  # the pinned file is needed: fail here, in one line, not per sample

    check_before_run(None, "task stereotales")  # the endpoint answers: one request
    return Task(
        dataset=MemoryDataset(task_samples(tax, languages, attributes, values, scenario_groups, extra_english, limit),
                              name="stereotales", location=str(source or "bundled")),
        solver=[story_generation(run_settings)],
        scorer=stereotales_extraction(taxonomy=source, **settings),
        # no config: the paper's settings travel per request, under the user's (stereoprobe.user_settings)
        config=GenerateConfig(),
        epochs=Epochs(epochs),
        version=TASK_VERSION,
        metadata=_task_metadata(tax.fingerprint(), source, settings, run_settings),
    )
