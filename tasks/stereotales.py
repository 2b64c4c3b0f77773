"""StereoTales: open-ended stories about a protagonist defined by one attribute value, profiled by extractors.

Paper: Le Jeune et al. 2026, "StereoTales: A Multilingual Framework for Open-Ended Stereotype Discovery in
LLMs" (arXiv 2605.10442). Spec: ``shared/spec/stereotales.md`` §1–4. Docs: ``docs/stereotales.md``.

    inspect eval stereoprobe/stereotales --model openai/gpt-4o-mini -T languages=en,fr \\
        --model-role extractor=openai/gpt-5-nano,google/gemini-2.5-flash-lite,google/gemini-3.1-flash-lite-preview \\
        --model-role refusal=openai/gpt-5-nano

One sample per (language, base attribute, prompted value, scenario): 2,844 per language for the reference
taxonomy. The subject writes one story per sample and epoch (``stories_per_prompt``); the scorer
``stereotales_extraction`` runs the refusal detector and the extractor ensemble (model roles ``refusal`` and
``extractor``) and records the consensus profile. Association mining runs afterwards on the logs
(``stereoprobe associations``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from stereoprobe.scorers.stereotales import (
    CONSENSUS_RULES,
    EXTRACTION_PROMPT_VARIANTS,
    stereotales_extraction,
)

TASK_VERSION = "1.0.0"
# Spec §3: stories at temperature 1.0 (the published runs' default); a generous budget so reasoning models
# and long stories are not truncated. Both are overridable with --temperature / --max-tokens.
STORY_TEMPERATURE = 1.0
STORY_MAX_TOKENS = 4096


def as_list(value: Any, name: str) -> list[str] | None:
    """None, a comma-separated string, or a list (``-T x=a,b`` arrives as a list) → list of stripped strings."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        items = [str(value)]
    items = [i.strip() for i in items if str(i).strip()]
    if not items:
        raise ValueError(f"task parameter '{name}' is empty")
    return items


def resolve_values(value: Any, known: Sequence[str]) -> list[str] | None:
    """Value keys from a ``;``- or comma-separated string or a list, re-joining keys that contain commas.

    Some value keys contain commas (``"business, finance, legal"``), and the inspect CLI splits ``-T`` values
    on commas; fragments are re-joined greedily when the joined text is a known key. ``;`` always separates.
    """
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        if ";" in value:
            return [v.strip() for v in value.split(";") if v.strip()]
        fragments = value.split(",")
    else:
        fragments = [str(v) for v in value]
    fragments = [f.strip() for f in fragments if f.strip()]
    known_set = set(known)
    out: list[str] = []
    i = 0
    while i < len(fragments):
        for j in range(len(fragments), i, -1):  # longest known join first
            joined = ", ".join(fragments[i:j])
            if joined in known_set:
                out.append(joined)
                i = j
                break
        else:
            out.append(fragments[i])  # unknown: build_samples reports it
            i += 1
    return out


def spread_limit(samples: list[Sample], limit: int | None) -> list[Sample]:
    """At most ``limit`` samples per language, evenly spaced over the enumeration order (deterministic).

    Unlike inspect's ``--limit`` (the first N samples, i.e. the first attribute of the first language), this
    keeps a demo-size run spread over attributes, values and scenarios of every selected language.
    """
    if limit is None:
        return samples
    limit = int(limit)
    if limit < 1:
        raise ValueError(f"limit must be a positive number of samples per language, got {limit}")
    by_lang: dict[str, list[Sample]] = {}
    for s in samples:
        by_lang.setdefault(str((s.metadata or {}).get("language")), []).append(s)
    out: list[Sample] = []
    for group in by_lang.values():
        if len(group) <= limit:
            out.extend(group)
            continue
        step = len(group) / limit
        out.extend(group[int(k * step)] for k in range(limit))
    return out


@task(
    description="StereoTales: stories about a character fixed by one socio-demographic attribute, the protagonist's profile labelled by extractor models; associations mined by `stereoprobe associations`",
    tags=['social_bias', 'stereotypes', 'generation', 'multilingual', 'stereotales'],
    paper='Le Jeune et al., StereoTales, arXiv:2605.10442 (2026)',
)
def stereotales(
    languages: str | list[str] = "en",
    attributes: str | list[str] | None = None,
    values: str | list[str] | None = None,
    scenario_groups: str | list[str] | None = None,
    extra_english: bool = False,
    seeds: str = "bundled",
    taxonomy: str | None = None,
    consensus: str = "majority",
    extraction_prompt: str = "faithful",
    stories_per_prompt: int = 1,
    limit: int | None = None,
    min_extractors: int = 1,
    structured_output: bool = True,
    cache: bool | str = True,
    refusal_failure: str = "refusal",
) -> Task:
    """StereoTales story generation and profile extraction.

    Args:
        languages: comma-separated language codes (``"en,fr"``), or ``"all"`` for every taxonomy language.
        attributes: base attributes to prompt with (comma-separated keys; default all 19).
        values: prompted value keys (English); ``;``-separated, or comma-separated (keys containing commas
            are re-joined); default all.
        scenario_groups: scenario group keys (default all 9).
        extra_english: add the English-only templates without scenario (upstream bucket ``additional_en``).
        seeds: ``"bundled"`` (stereoprobe's wording), ``"upstream"`` (the paper's seeds at the pinned commit,
            downloaded and verified), or a local folder holding a copy of the upstream seeds.
        taxonomy: a taxonomy ``.yaml`` of your own (overrides ``seeds``): other attributes, values, scenarios
            or languages; the extraction schema and statistics follow it.
        consensus: ``"majority"`` (strict majority, the published rule) or ``"unanimity"``.
        extraction_prompt: ``"faithful"`` (default: the published prompt text, which lists an obsolete
            ethnicity field and leaves the regions to the JSON schema, spec bug B1) or ``"fixed"`` (lists the
            11 geographic-origin regions).
        stories_per_prompt: stories per sample (inspect epochs; the paper used 1).
        limit: at most this many samples per language, spread evenly over the grid (demo runs).
        min_extractors: successful extractors needed for a profile (upstream: 1).
        structured_output: send JSON schemas to the role models as ``response_schema``.
        cache: cache refusal/extraction calls (True, False, or an expiry like ``"1W"``).
        refusal_failure: a story the refusal judge could not label counts as ``"refusal"`` (upstream),
            ``"complied"`` (extract anyway) or ``"error"`` (sample error, retried by ``inspect eval-retry``).
    """
    from stereoprobe.stereotales.taxonomy import build_samples, load_taxonomy

    if consensus not in CONSENSUS_RULES:
        raise ValueError(f"consensus must be one of {CONSENSUS_RULES}, got {consensus!r}")
    if extraction_prompt not in EXTRACTION_PROMPT_VARIANTS:
        raise ValueError(f"extraction_prompt must be one of {EXTRACTION_PROMPT_VARIANTS}, got {extraction_prompt!r}")
    if int(stories_per_prompt) < 1:
        raise ValueError(f"stories_per_prompt must be >= 1, got {stories_per_prompt}")

    source = taxonomy if taxonomy else (None if seeds in (None, "", "bundled") else seeds)
    tax = load_taxonomy(source)
    langs = as_list(languages, "languages")
    if langs is not None and [x.lower() for x in langs] == ["all"]:
        langs = None
    known_values = [v.key for a in tax.attributes for v in a.target_values]
    samples = build_samples(
        tax,
        languages=langs,
        attributes=as_list(attributes, "attributes"),
        values=resolve_values(values, known_values),
        scenario_groups=as_list(scenario_groups, "scenario_groups"),
        extra_english=bool(extra_english),
    )
    samples = spread_limit(list(samples), limit)
    if not samples:
        raise ValueError("the selection (languages/attributes/values/scenario_groups) matches no sample")

    return Task(
        dataset=MemoryDataset(samples, name="stereotales", location=str(source or "bundled")),
        solver=[generate()],
        scorer=stereotales_extraction(
            taxonomy=source,
            consensus=consensus,
            extraction_prompt=extraction_prompt,
            structured_output=structured_output,
            cache=cache,
            min_extractors=min_extractors,
            refusal_failure=refusal_failure,
        ),
        config=GenerateConfig(temperature=STORY_TEMPERATURE, max_tokens=STORY_MAX_TOKENS),
        epochs=Epochs(int(stories_per_prompt)),
        version=TASK_VERSION,
        metadata={
            "probe": "stereotales",
            "taxonomy_fingerprint": tax.fingerprint(),
            "taxonomy_source": str(source or "bundled"),
            "consensus": consensus,
            "extraction_prompt": extraction_prompt,
            "refusal_failure": refusal_failure,
        },
    )
