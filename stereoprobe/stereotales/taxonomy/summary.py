"""The Python API of ``stereoprobe taxonomy``: load and validate a taxonomy, count and render its prompts.

    from stereoprobe.stereotales.taxonomy.summary import inspect_taxonomy

    view = inspect_taxonomy("bundled", languages=["en", "fr"])
    print("\n".join(view.summary_lines()))
    view.write_prompts("prompts.jsonl")
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from stereoprobe.stereotales.taxonomy.files import TaxonomyError
from stereoprobe.stereotales.taxonomy.loading import load_taxonomy
from stereoprobe.stereotales.taxonomy.model import Taxonomy
from stereoprobe.stereotales.taxonomy.samples import build_samples

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample

__all__ = ["TaxonomyView", "inspect_taxonomy"]


@dataclass
class TaxonomyView:
    """A validated taxonomy and the samples the ``stereotales`` task would run for the chosen languages."""

    taxonomy: Taxonomy
    samples: list[Sample]

    def summary_lines(self) -> list[str]:
        """Name, fingerprint, languages, attributes, scenarios and sample counts, one fact per line."""
        tax = self.taxonomy
        n_values = sum(len(a.target_values) for a in tax.attributes)
        lines = [
            f"taxonomy     {tax.name} ({tax.source})",
            f"fingerprint  {tax.fingerprint()}",
            f"languages    {', '.join(tax.languages)}",
            f"attributes   {len(tax.attributes)} ({n_values} target values)",
        ]
        for a in tax.attributes:
            extra = [v for v in a.extraction_values if v not in a.target_keys]
            lines.append(f"  {a.key:<24} {len(a.target_values):>3} values   + extraction-only: {', '.join(extra)}")
        groups = tax.scenario_groups
        lines.append(f"scenarios    {len(tax.scenarios)} in {len(groups)} groups ({', '.join(groups)})")
        lines.append(f"extra        {', '.join(tax.extra_templates) or 'none'}")
        per_lang: dict[str, int] = {}
        for s in self.samples:
            key = "extra (en)" if s.metadata["scenario_key"] is None else s.metadata["language"]
            per_lang[key] = per_lang.get(key, 0) + 1
        lines.append(f"samples      {len(self.samples)} (" + ", ".join(f"{k}: {v}" for k, v in per_lang.items()) + ")")
        return lines

    def story_prompt(self, sample_id: str) -> str:
        """The story prompt of one sample id; :class:`TaxonomyError` naming an example id when absent."""
        for s in self.samples:
            if s.id == sample_id:
                return str(s.input)
        example = self.samples[0].id if self.samples else "en:age:0:group:0"
        raise TaxonomyError(f"no sample {sample_id!r} (ids look like {example})")

    def extraction_prompt(self, variant: Literal["fixed", "faithful"]) -> str:
        """The extraction prompt with a placeholder story."""
        return self.taxonomy.extraction_prompt("<the story>", variant=variant)

    def refusal_prompt(self, character: Literal["value_key", "phrase"] = "value_key") -> str:
        """The refusal-detector prompt of the first sample's metadata, with a placeholder story."""
        tax = self.taxonomy
        value = tax.attributes[0].target_values[0]
        return tax.refusal_prompt(
            "<the story>", language=tax.base_language, scenario=tax.scenarios[0].key,
            character=value.key if character == "value_key" else value.phrase[tax.base_language],
            character_form=character,
        )

    def write_prompts(self, path: str | Path) -> Path:
        """One JSON line per sample (``id, input, metadata``), in the order the task runs them."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        try:  # written beside the target, then moved into place: a failed run leaves an earlier file intact
            with tmp.open("w", encoding="utf-8") as f:
                for s in self.samples:
                    f.write(json.dumps({"id": s.id, "input": s.input, "metadata": s.metadata}, ensure_ascii=False) + "\n")
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return path


def inspect_taxonomy(
    source: str | Path | None = "bundled", languages: Sequence[str] | str | None = None, extra_english: bool = False
) -> TaxonomyView:
    """Load and validate ``source`` (``bundled``, ``upstream``, a taxonomy ``.yaml``, or a folder) and build
    its samples for ``languages`` (default all). Problems raise :class:`TaxonomyError` naming file and field."""
    tax = load_taxonomy(source)
    return TaxonomyView(tax, build_samples(tax, languages=languages, extra_english=extra_english))
