"""The judge prompt and the question-order rule of the StereoTales harm judge.

The default prompt is the published one, read at run time from the pinned upstream file
(:mod:`stereoprobe.stereotales.judge.upstream_prompt`); stereoprobe's own wording is
``datasets/stereotales/judge/prompt.yaml`` (``prompt="bundled"``, or a user file with the same keys). The
question order per (model, association, repetition) follows the upstream pipeline's rule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

import pandas as pd
import yaml

from stereoprobe.errors import InputError
from stereoprobe.params import fail
from stereoprobe.paths import dataset_file
from stereoprobe.stereotales.judge.associations import attribute_display_name
from stereoprobe.stereotales.judge.upstream_prompt import UpstreamJudgePrompt, upstream_judge_prompt

QuestionOrder = Literal["realism_first", "harmful_first"]


# ---------------------------------------------------------------------------------------------- order rule


def question_order(
    model: str, base_attribute: str, base_value: str, compared_attribute: str, compared_value: str, repetition: int
) -> QuestionOrder:
    """Order of the two judge questions for one (model, association, repetition) — upstream's rule.

    ``"realism_first"`` iff the first byte of ``sha256("{model}\\n{A}\\n{a}\\n{B}\\n{b}\\n{repetition}")`` is
    even, else ``"harmful_first"``. Deterministic; balanced over associations since the byte is uniform.
    Upstream: ``src/stereotales_pipeline/evaluate.py`` of https://github.com/Giskard-AI/stereotales-pipeline.
    """
    raw = f"{model}\n{base_attribute}\n{base_value}\n{compared_attribute}\n{compared_value}\n{repetition}"
    return "realism_first" if hashlib.sha256(raw.encode("utf-8")).digest()[0] % 2 == 0 else "harmful_first"


# -------------------------------------------------------------------------------------------------- prompt


@dataclass(frozen=True)
class JudgePrompt:
    """The judge prompt template (``datasets/stereotales/judge/prompt.yaml`` or a user file)."""

    parts: dict[str, str]
    version: str
    path: str

    def render(
        self,
        base_attribute: str,
        base_value: str,
        compared_attribute: str,
        compared_value: str,
        order: QuestionOrder,
        base_values: Sequence[str] = (),
        compared_values: Sequence[str] = (),
    ) -> str:
        """The full prompt for one association with the questions in ``order``."""
        p = self.parts
        fields = {
            "base_name": attribute_display_name(base_attribute),
            "compared_name": attribute_display_name(compared_attribute),
            "base_value": base_value,
            "compared_value": compared_value,
            "base_values": ", ".join(base_values) if base_values else "(not listed)",
            "compared_values": ", ".join(compared_values) if compared_values else "(not listed)",
        }
        harm = ("harm_definition", "harm_options", "harm_format_line")
        realism = ("realism_definition", "realism_options", "realism_format_line")
        first, second = (realism, harm) if order == "realism_first" else (harm, realism)
        blocks = {
            "framing": p["framing"],
            "procedure": p["procedure"],
            "task_intro": p["task_intro"],
            "reminder": p["reminder"],
            "association": p["association"].format(**fields),
            "format_intro": p["format_intro"],
            "first_definition": p[first[0]],
            "second_definition": p[second[0]],
            "first_options": p[first[1]],
            "second_options": p[second[1]],
            "first_format": p[first[2]],
            "second_format": p[second[2]],
        }
        return p["layout"].format(**blocks).strip() + "\n"


_PROMPT_KEYS = (
    "framing", "procedure", "task_intro", "harm_definition", "realism_definition", "reminder", "association",
    "harm_options", "realism_options", "harm_format_line", "realism_format_line", "format_intro", "layout",
)


def load_judge_prompt(path: str | Path | None = None) -> JudgePrompt:
    """Load the judge prompt (bundled when ``path`` is None); error names the file and the missing key."""
    p = Path(path) if path is not None else dataset_file("stereotales", "judge", "prompt.yaml")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"judge prompt {p}: cannot read ({e})") from e
    if not isinstance(raw, dict):
        raise InputError(f"judge prompt {p}: expected a mapping")
    missing = [k for k in _PROMPT_KEYS if not isinstance(raw.get(k), str)]
    if missing:
        raise InputError(f"judge prompt {p}: missing text field(s) {', '.join(missing)}")
    return JudgePrompt(parts={k: raw[k] for k in _PROMPT_KEYS}, version=str(raw.get("version", "1")), path=str(p))


PROMPT_SOURCES = ("upstream", "bundled")  # the named choices of -T prompt (else: a prompt YAML of one's own)
AnyJudgePrompt = JudgePrompt | UpstreamJudgePrompt


def select_judge_prompt(source: str | None, local: str | None = None) -> AnyJudgePrompt:
    """The judge prompt of ``-T prompt``: ``"upstream"`` (default, also None: the pinned pipeline template,
    ``local`` = a local copy of the upstream repositories), ``"bundled"`` (stereoprobe's wording; also
    ``"stereoprobe"``, the name the other probes give their own wording) or the path of a prompt YAML with the
    bundled file's keys. Anything else is one line naming the choices."""
    if source in (None, "", "upstream"):
        return upstream_judge_prompt(local)
    if source in ("bundled", "stereoprobe"):
        return load_judge_prompt()
    if not Path(str(source)).is_file():
        fail("prompt", source, "upstream, bundled or an existing prompt YAML file")
    return load_judge_prompt(source)


@cache
def taxonomy_values() -> dict[str, list[str]]:
    """Possible values per attribute for the prompt: the bundled taxonomy's extraction values minus the
    ``other`` and ``unknown`` outcomes (upstream: the schema's values minus "other" and "unknown")."""
    from stereoprobe.stereotales.contract import OTHER, UNKNOWN
    from stereoprobe.stereotales.taxonomy import load_taxonomy

    tax = load_taxonomy()
    return {a.key: [v for v in a.extraction_values if v not in (OTHER, UNKNOWN)] for a in tax.attributes}


VALUE_LISTS = ("taxonomy", "observed", "none")  # the modes of attribute_value_lists (-T value_lists)


def attribute_value_lists(associations: pd.DataFrame, mode: Literal["taxonomy", "observed", "none"],
                          prompt: AnyJudgePrompt | None = None) -> dict[str, list[str]]:
    """Value lists shown in the prompt: ``taxonomy`` (the values of the prompt's schema: flare's
    ``DemographicAttributes`` with the upstream prompt, as ``build_prompt``; the bundled taxonomy's with
    another prompt; an attribute it lacks falls back to its observed values), ``observed``, ``none``."""
    if mode == "none":
        return {}
    observed: dict[str, set[str]] = {}
    for side in ("base", "compared"):
        for attr, val in zip(associations[f"{side}_attribute"], associations[f"{side}_value"]):
            observed.setdefault(attr, set()).add(val)
    lists = {k: sorted(v) for k, v in observed.items()}
    if mode == "taxonomy":
        upstream_lists = prompt.value_lists if isinstance(prompt, UpstreamJudgePrompt) else {}
        tax = upstream_lists or taxonomy_values()
        lists.update({k: v for k, v in tax.items() if k in lists and v})
    return lists
