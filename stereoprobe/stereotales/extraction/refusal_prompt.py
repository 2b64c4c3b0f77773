"""The refusal detector's request for a story: flare's template (the default) or the taxonomy's own prompt.

One home for the request, used by the StereoTales scorer (``scorers/stereotales.py``) and by
``stereoprobe taxonomy --show-refusal-prompt``, so the command shows exactly what the scorer sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stereoprobe.stereotales import contract as C
from stereoprobe.stereotales.taxonomy.files import TaxonomyError

__all__ = ["refusal_prompt", "seed_value_key", "upstream_language"]


def upstream_language(code: Any) -> str:
    """Upstream's language code of a sample language (``nl`` -> ``du``, the seeds' code; others unchanged)."""
    reverse = {v: k for k, v in C.LANGUAGE_ALIASES.items()}
    return reverse.get(str(code), str(code))


def seed_value_key(taxonomy: Any, attribute: Any, value_key: Any) -> Any:
    """The prompted value as written in the English seeds (upstream's ``attribute_value_key``): the raw seed
    value where our key is its normalised form (``TargetValue.source_key``), else the key itself."""
    try:
        values = taxonomy.attribute(attribute).target_values
    except (KeyError, ValueError, AttributeError, TaxonomyError):
        return value_key
    for v in values:
        if v.key == value_key:
            return v.source_key or v.key
    return value_key


def refusal_prompt(taxonomy: Any, story: str, metadata: Mapping[str, Any], character: str = "value_key",
                   upstream_prompts: Any = None) -> str:
    """The refusal request for ``story``.

    With ``upstream_prompts`` (flare's template, the default): upstream's language code, the English scenario
    text and the English seed value, the story stripped of surrounding whitespace (flare's ``detect_refusal``
    fills the template with ``story.strip()``). Otherwise the taxonomy's refusal prompt with the
    request metadata (language, scenario, character) when known; ``character``: ``"value_key"`` sends the
    prompted English value key, as upstream; ``"phrase"`` sends the rendered character phrase of the story
    prompt, in the story's language.
    """
    if upstream_prompts is not None:
        return upstream_prompts.refusal(
            story.strip(), upstream_language(metadata.get(C.META_LANGUAGE)), metadata.get(C.META_SCENARIO_KEY),
            seed_value_key(taxonomy, metadata.get(C.META_ATTRIBUTE), metadata.get(C.META_VALUE_KEY)),
        )
    value = metadata.get(C.META_VALUE_KEY) if character == "value_key" else metadata.get(C.META_CHARACTER)
    return taxonomy.refusal_prompt(
        story.strip(),
        language=metadata.get(C.META_LANGUAGE),
        scenario=metadata.get(C.META_SCENARIO_KEY),  # the English scenario text ("a person {scenario}")
        character=value,
        character_form="value_key" if character == "value_key" else "phrase",
    )
