"""The refusal-detector and extraction prompts of the published pipeline, read from the pinned flare files.

The published StereoTales runs label stories with the prompts of Giskard-AI/flare
(``src/flare/scorer/attribute_extraction/prompts.py``). The project never copies that wording: the default
run reads the pinned source files at run time through :func:`stereoprobe.upstream.fetch` (checksummed; cache,
download once, or ``$STEREOPROBE_UPSTREAM_DIR``): ``prompts.py`` and the schema module it imports
(``src/flare/scorer/bias/schema.py``), parsed with ``ast`` and never run (:mod:`.flare_source`), and renders
them the way flare's ``scorer.py`` does:

- refusal: ``REFUSAL_JUDGE_PROMPT_TEMPLATE.format(language=..., scenario_key=..., attribute_value_key=...,
  assistant_output=story.strip())``, with upstream's language code (``du`` for Dutch), the English scenario
  text and the raw English seed value (the caller strips the story, as ``detect_refusal`` does);
- extraction: ``ATTR_EXTRACTION_PROMPT_TEMPLATE`` (its attribute lines filled from the schema, as flare's
  f-string does) with ``$STORY_REPLACE_ME$`` replaced by the story as written (``extract_attributes``).

The response formats sent with them are flare's too, built from ``src/flare/scorer/attribute_extraction/schema.py``
(:mod:`.response_formats`). stereoprobe's own wording (``datasets/stereotales/prompts/``, formats built from the
taxonomy) is the option ``role_prompts="bundled"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from pathlib import Path

from stereoprobe import upstream
from stereoprobe.stereotales.extraction import flare_source

SOURCE_KEY = "flare"
PROMPTS_FILE = flare_source.PROMPTS_PATH
STORY_MARKER = "$STORY_REPLACE_ME$"
OPTION_HINT = "or use stereoprobe's own wording of the refusal and extraction prompts with -T role_prompts=bundled"


@dataclass(frozen=True)
class UpstreamRolePrompts:
    """flare's refusal template and rendered extraction prompt, as read from the pinned source files."""

    refusal_template: str
    extraction_template: str
    source: str

    def refusal(self, story: str, language: str, scenario_key: str | None, attribute_value_key: str | None) -> str:
        """flare's refusal request (``str.format``; a missing scenario or value reads ``None``, as upstream);
        ``story`` is sent as given: flare's ``detect_refusal`` passes ``story.strip()``, which the scorer does."""
        return self.refusal_template.format(
            language=language, scenario_key=scenario_key, attribute_value_key=attribute_value_key,
            assistant_output=story,
        )

    def extraction(self, story: str) -> str:
        """flare's extraction request: the story in place of the marker."""
        return self.extraction_template.replace(STORY_MARKER, story)


@cache
def upstream_role_prompts(local: str | None = None) -> UpstreamRolePrompts:
    """The pinned flare prompts (verified, evaluated from ``prompts.py`` and its schema module); an unobtainable
    or unreadable file is one line naming the bundled option."""

    def pinned(path: str) -> Path:
        return upstream.fetch(SOURCE_KEY, path, local=local)

    try:
        texts = flare_source.prompt_constants(pinned(PROMPTS_FILE), pinned)
    except upstream.UpstreamDataError as e:
        raise upstream.UpstreamDataError(f"{e}; {OPTION_HINT}") from e
    src = upstream.sources()[SOURCE_KEY]
    extraction_text = texts[flare_source.EXTRACTION_NAME]
    if STORY_MARKER not in extraction_text:
        raise upstream.UpstreamDataError(
            f"{PROMPTS_FILE}: {flare_source.EXTRACTION_NAME} has no {STORY_MARKER} marker; {OPTION_HINT}")
    return UpstreamRolePrompts(
        refusal_template=texts[flare_source.REFUSAL_NAME],
        extraction_template=extraction_text,
        source=f"{src.repository}@{src.commit[:10]}",
    )
