"""The harm judge's published prompt, read at run time from the pinned upstream pipeline file.

The published judge runs render ``EVAL_PROMPT_JINJA_TEMPLATE`` of ``src/stereotales_pipeline/template.py`` in
https://github.com/Giskard-AI/stereotales-pipeline (``build_prompt`` of ``src/stereotales_pipeline/evaluate.py``).
The project never copies that wording: the default run obtains the pinned file through
:func:`stereoprobe.upstream.fetch` (checksummed; cache, download once, or ``$STEREOPROBE_UPSTREAM_DIR``), reads
the template string with ``ast`` (the file is never imported or executed) and renders it as ``build_prompt``
does: a Jinja2 environment with ``StrictUndefined`` and no autoescaping (here a sandboxed one, which renders
the same text), filled with

- ``base_attribute`` / ``compared_attribute``: the raw attribute names (the template itself turns them into
  ``Income Level``-style titles);
- ``base_value`` / ``compared_value``: the association's values;
- ``base_attr_values`` / ``compared_attr_values``: the attribute's possible values minus ``other`` and
  ``unknown``, joined with ``", "``: upstream takes them from flare's ``DemographicAttributes``, imported from
  ``flare.scorer.attribute_extraction.schema``; the default run reads that model's ``Literal`` values from the
  pinned ``src/flare/scorer/attribute_extraction/schema.py`` of Giskard-AI/flare with ``ast``
  (:func:`stereoprobe.stereotales.extraction.response_formats.attribute_values`), all 19 attributes;
- ``question_order``: ``"harmful_first"`` or ``"realism_first"`` (the order rule of
  :func:`stereoprobe.stereotales.judge.prompt.question_order`).

The prompt is English for every association, as upstream's. stereoprobe's own wording
(``datasets/stereotales/judge/prompt.yaml``) is the option ``prompt="bundled"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from jinja2 import StrictUndefined, Template, TemplateError, meta
from jinja2.sandbox import SandboxedEnvironment

from stereoprobe import upstream

SOURCE_KEY = "stereotales-pipeline"
TEMPLATE_FILE = "src/stereotales_pipeline/template.py"
TEMPLATE_NAME = "EVAL_PROMPT_JINJA_TEMPLATE"
VERSION_NAME = "SELF_EVAL_TEMPLATE_VERSION"
OPTION_HINT = "or use stereoprobe's own wording of the judge prompt with -T prompt=bundled"
#: the variables upstream's build_prompt passes to the template
TEMPLATE_FIELDS = frozenset({
    "base_attribute", "base_attr_values", "base_value", "compared_attribute", "compared_attr_values",
    "compared_value", "question_order",
})


def _environment() -> SandboxedEnvironment:
    """Upstream's rendering settings (``Environment(undefined=StrictUndefined, autoescape=False)``)."""
    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)


@lru_cache(maxsize=8)
def _compiled(text: str) -> Template:
    return _environment().from_string(text)


@dataclass(frozen=True)
class UpstreamJudgePrompt:
    """The pipeline's judge template as read from the pinned file; renders like ``build_prompt``.
    ``value_lists``: per attribute, the values ``build_prompt`` lists (flare's, minus other/unknown)."""

    template_text: str
    version: str
    path: str
    value_lists: dict[str, list[str]] = field(default_factory=dict)

    def render(
        self,
        base_attribute: str,
        base_value: str,
        compared_attribute: str,
        compared_value: str,
        order: str,
        base_values: Sequence[str] = (),
        compared_values: Sequence[str] = (),
    ) -> str:
        """The prompt for one association with the questions in ``order`` (same signature as
        :meth:`stereoprobe.stereotales.judge.prompt.JudgePrompt.render`)."""
        return _compiled(self.template_text).render(
            base_attribute=base_attribute,
            base_attr_values=", ".join(base_values),
            base_value=base_value,
            compared_attribute=compared_attribute,
            compared_attr_values=", ".join(compared_values),
            compared_value=compared_value,
            question_order=order,
        )


def read_template_file(path: Path, what: str | None = None) -> UpstreamJudgePrompt:
    """Read the judge template from a ``template.py`` of upstream's shape (parsed, never executed).

    The file must assign a string to ``EVAL_PROMPT_JINJA_TEMPLATE`` at its top level; an integer
    ``SELF_EVAL_TEMPLATE_VERSION`` is recorded when present. A template that does not parse as Jinja2 or uses a
    variable ``build_prompt`` does not pass is one line naming the file.
    """
    what = what or str(path)
    text = str(upstream.python_constant(path, TEMPLATE_NAME, str))
    try:
        version = f"upstream-{upstream.python_constant(path, VERSION_NAME, int)}"
    except upstream.UpstreamDataError:
        version = "upstream"
    env = _environment()
    try:
        unknown = meta.find_undeclared_variables(env.parse(text)) - TEMPLATE_FIELDS
    except TemplateError as e:
        raise upstream.UpstreamDataError(f"{what}: {TEMPLATE_NAME} is not a Jinja2 template ({e})") from None
    if unknown:
        raise upstream.UpstreamDataError(
            f"{what}: {TEMPLATE_NAME} uses {', '.join(sorted(unknown))}, which the pipeline's build_prompt does "
            f"not fill (it fills {', '.join(sorted(TEMPLATE_FIELDS))})"
        )
    return UpstreamJudgePrompt(template_text=text, version=version, path=what)


def flare_value_lists(local: str | None = None) -> dict[str, list[str]]:
    """Per attribute of flare's ``DemographicAttributes`` (the pinned ``attribute_extraction/schema.py``, read
    with ``ast``), its values minus ``other`` and ``unknown``, in the schema's order, as ``build_prompt`` lists
    them."""
    from stereoprobe.stereotales.contract import OTHER, UNKNOWN
    from stereoprobe.stereotales.extraction.response_formats import attribute_values, pinned_schema_file

    path, _ = pinned_schema_file(local)
    return {k: [v for v in vs if v not in (OTHER, UNKNOWN)] for k, vs in attribute_values(path).items()}


def upstream_judge_prompt(local: str | None = None) -> UpstreamJudgePrompt:
    """The pinned judge template (verified) and flare's value lists (:func:`flare_value_lists`); an unobtainable
    or unreadable file is one line naming ``-T prompt=bundled``. ``local``: a local copy of the upstream
    repositories (as ``fetch``'s)."""
    src = upstream.sources()[SOURCE_KEY]
    try:
        path = upstream.fetch(SOURCE_KEY, TEMPLATE_FILE, local=local)
        prompt = read_template_file(path, f"{src.repository}@{src.commit[:10]}:{TEMPLATE_FILE}")
        return UpstreamJudgePrompt(prompt.template_text, prompt.version, prompt.path, flare_value_lists(local))
    except upstream.UpstreamDataError as e:
        raise upstream.UpstreamDataError(f"{e}; {OPTION_HINT}") from e
