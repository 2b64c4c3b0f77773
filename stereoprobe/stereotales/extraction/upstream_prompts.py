"""The refusal-detector and extraction prompts of the published pipeline, read from the pinned flare files.

The published StereoTales runs label stories with the prompts of Giskard-AI/flare
(``src/flare/scorer/attribute_extraction/prompts.py``). The project never copies that wording: the default
run reads the pinned texts at run time through :func:`stereoprobe.upstream.fetch` (checksummed; cache,
download once, or ``$STEREOPROBE_UPSTREAM_DIR``), and renders them the way flare's ``scorer.py`` does:

- refusal: ``REFUSAL_JUDGE_PROMPT_TEMPLATE.format(language=..., scenario_key=..., attribute_value_key=...,
  assistant_output=story)``, with upstream's language code (``du`` for Dutch), the English scenario text,
  the raw English seed value and the story as the model wrote it;
- extraction: the rendered ``ATTR_EXTRACTION_PROMPT_TEMPLATE`` with ``$STORY_REPLACE_ME$`` replaced by the story.

stereoprobe's own wording (``datasets/stereotales/prompts/``) is the option ``role_prompts="bundled"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from stereoprobe import upstream

SOURCE_KEY = "flare"
REFUSAL_FILE = "REFUSAL_JUDGE_PROMPT_TEMPLATE.txt"
EXTRACTION_FILE = "rendered_ATTR_EXTRACTION_PROMPT_TEMPLATE.txt"
STORY_MARKER = "$STORY_REPLACE_ME$"
OPTION_HINT = "or use stereoprobe's own wording of the refusal and extraction prompts with -T role_prompts=bundled"


@dataclass(frozen=True)
class UpstreamRolePrompts:
    """flare's refusal template and rendered extraction prompt, as read from the pinned files."""

    refusal_template: str
    extraction_template: str
    source: str

    def refusal(self, story: str, language: str, scenario_key: str | None, attribute_value_key: str | None) -> str:
        """flare's refusal request (``str.format``; a missing scenario or value reads ``None``, as upstream)."""
        return self.refusal_template.format(
            language=language, scenario_key=scenario_key, attribute_value_key=attribute_value_key,
            assistant_output=story,
        )

    def extraction(self, story: str) -> str:
        """flare's extraction request: the story in place of the marker."""
        return self.extraction_template.replace(STORY_MARKER, story)


@cache
def upstream_role_prompts(local: str | None = None) -> UpstreamRolePrompts:
    """The pinned flare prompts (verified); an unobtainable file is one line naming the bundled option."""
    try:
        refusal = upstream.fetch(SOURCE_KEY, REFUSAL_FILE, local=local)
        extraction = upstream.fetch(SOURCE_KEY, EXTRACTION_FILE, local=local)
    except upstream.UpstreamDataError as e:
        raise upstream.UpstreamDataError(f"{e}; {OPTION_HINT}") from e
    src = upstream.sources()[SOURCE_KEY]
    extraction_text = extraction.read_text(encoding="utf-8")
    if STORY_MARKER not in extraction_text:
        raise upstream.UpstreamDataError(f"{extraction}: no {STORY_MARKER} marker; {OPTION_HINT}")
    return UpstreamRolePrompts(
        refusal_template=refusal.read_text(encoding="utf-8"),
        extraction_template=extraction_text,
        source=f"{src.repository}@{src.commit[:10]}",
    )
