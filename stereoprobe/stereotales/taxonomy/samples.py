"""The task's samples: one per (language, base attribute, prompted value, scenario), in upstream order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from stereoprobe import params as P
from stereoprobe.stereotales import contract as C
from stereoprobe.stereotales.taxonomy.files import TaxonomyError
from stereoprobe.stereotales.taxonomy.model import Attribute, TargetValue, Taxonomy

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample

SCENARIO_TEMPLATE = "scenario_based"
EXTRA_ID_PREFIX = "additional_en"


def _selection(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        items = [x.strip() for x in value.split(",")]
    else:
        items = [str(x).strip() for x in value]
    items = [x for x in items if x]
    return items or None


def sample_id(lang: str, attribute: str, value_index: int, scenario_group: str, scenario_index: int) -> str:
    """Stable id of a scenario sample."""
    return f"{lang}:{attribute}:{value_index}:{scenario_group}:{scenario_index}"


def extra_sample_id(template: str, attribute: str, value_index: int) -> str:
    """Stable id of a sample of the extra English set (no scenario)."""
    return f"{EXTRA_ID_PREFIX}:{template}:{attribute}:{value_index}"


def build_samples(
    taxonomy: Taxonomy,
    languages: str | Sequence[str] | None = None,
    attributes: str | Sequence[str] | None = None,
    values: str | Sequence[str] | None = None,
    scenario_groups: str | Sequence[str] | None = None,
    extra_english: bool = False,
) -> list[Sample]:
    """One inspect Sample per (language, base attribute, target value, scenario), in upstream order
    (language, attribute, scenario, value); plus, with ``extra_english``, one per (extra template, attribute,
    value) without scenario (upstream's ``additional_en`` bucket; base language only).

    Selections are lists or comma-separated strings: ``languages`` (``du`` = ``nl``; ``"all"`` = every
    language), ``attributes`` (keys),
    ``values`` (English value keys, of any attribute), ``scenario_groups`` (group keys). Unknown names are
    errors. Ids: ``{lang}:{attribute}:{value_index}:{scenario_group}:{scenario_index}`` and
    ``additional_en:{template}:{attribute}:{value_index}``.
    """
    from inspect_ai.dataset import Sample

    lang_sel = _selection(languages)
    if lang_sel and [x.lower() for x in lang_sel] == ["all"]:
        lang_sel = None
    langs = [taxonomy.language(x) for x in (lang_sel or taxonomy.languages)]
    langs = list(dict.fromkeys(langs))
    attr_sel = _selection(attributes)
    attrs = [taxonomy.attribute(k) for k in attr_sel] if attr_sel else list(taxonomy.attributes)
    attrs = sorted(attrs, key=lambda a: taxonomy.attribute_keys.index(a.key))
    val_sel = _selection(values)
    if val_sel:
        known = {v.key for a in attrs for v in a.target_values} | {
            v.source_key for a in attrs for v in a.target_values if v.source_key
        }
        bad = [v for v in val_sel if v not in known]
        if bad:
            raise TaxonomyError(f"values: value(s) {bad} are not target values of the selected attribute(s)"
                                f"{P.did_you_mean(bad[0], sorted(known))}")
    grp_sel = _selection(scenario_groups)
    if grp_sel:
        bad = [g for g in grp_sel if g not in taxonomy.scenario_groups]
        if bad:
            groups = taxonomy.scenario_groups
            raise TaxonomyError(f"scenario_groups: scenario group(s) {bad} unknown{P.did_you_mean(bad[0], groups)}; "
                                f"groups: {', '.join(groups)}")
    scenarios = [s for s in taxonomy.scenarios if not grp_sel or s.group in grp_sel]

    def chosen(a: Attribute) -> list[TargetValue]:
        return [v for v in a.target_values if not val_sel or v.key in val_sel or v.source_key in val_sel]

    fp = taxonomy.fingerprint()
    samples: list[Sample] = []
    for lang in langs:
        for a in attrs:
            tvs = chosen(a)
            for s in scenarios:
                for v in tvs:
                    samples.append(
                        Sample(
                            id=sample_id(lang, a.key, v.index, s.group, s.index),
                            input=taxonomy.story_prompt(lang, v, s),
                            metadata=_metadata(lang, a, v, s.key, s.group, SCENARIO_TEMPLATE, fp),
                        )
                    )
    if extra_english:
        if not taxonomy.extra_templates:
            raise TaxonomyError(f"{taxonomy.source}: this taxonomy has no extra templates (extra_english=True)")
        base = taxonomy.base_language
        for tname in taxonomy.extra_templates:
            for a in attrs:
                for v in chosen(a):
                    samples.append(
                        Sample(
                            id=extra_sample_id(tname, a.key, v.index),
                            input=taxonomy.extra_prompt(tname, v),
                            metadata=_metadata(base, a, v, None, None, tname, fp),
                        )
                    )
    return samples


def _metadata(
    lang: str, a: Attribute, v: TargetValue, scenario: str | None, group: str | None, template: str, fp: str
) -> dict[str, str | None]:
    """The sample metadata the scorer and the stories readers rely on (keys of :mod:`..contract`)."""
    return {
        C.META_LANGUAGE: lang,
        C.META_ATTRIBUTE: a.key,
        C.META_VALUE: v.label[lang],
        C.META_VALUE_KEY: v.key,
        C.META_SCENARIO_KEY: scenario,
        C.META_SCENARIO_GROUP: group,
        C.META_CHARACTER: v.phrase[lang],
        "prompt_template": template,
        C.META_FINGERPRINT: fp,
    }


# ------------------------------------------------------------------------------------- task parameters


def as_list(value: Any, name: str) -> list[str] | None:
    """None, a comma-separated string, or a list (``-T x=a,b`` arrives as a list) → list of stripped strings
    (None gives None; ``""``, ``[]`` and a list of blanks are errors: an empty selection is not "every one",
    issue 34.6)."""
    return P.names(value, name, error=TaxonomyError)


def resolve_values(value: Any, known: Sequence[str]) -> list[str] | None:
    """Value keys from a ``;``- or comma-separated string or a list, re-joining keys that contain commas.

    Some value keys contain commas (``"business, finance, legal"``), and the inspect CLI splits ``-T`` values
    on commas; fragments are re-joined greedily when the joined text is a known key. ``;`` always separates.
    """
    if value is None:
        return None
    if value == "" or value == []:  # an empty selection is not "every value" (issue 34.6)
        P.fail("values", value, "a value key or a list of value keys", TaxonomyError)
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
    limit = P.integer(limit, "limit", 1, error=TaxonomyError)
    by_lang: dict[str, list[Sample]] = {}
    for s in samples:
        by_lang.setdefault(str((s.metadata or {}).get(C.META_LANGUAGE)), []).append(s)
    out: list[Sample] = []
    for group in by_lang.values():
        if len(group) <= limit:
            out.extend(group)
            continue
        step = len(group) / limit
        out.extend(group[int(k * step)] for k in range(limit))
    return out


def task_samples(
    taxonomy: Taxonomy,
    languages: Any = "all",
    attributes: Any = None,
    values: Any = None,
    scenario_groups: Any = None,
    extra_english: Any = False,
    limit: Any = None,
) -> list[Sample]:
    """The samples of the ``stereotales`` task from its ``-T`` parameters (validated; errors name the
    parameter): ``languages`` ``"all"`` (default) or a list, selections as :func:`build_samples`, ``limit``
    samples per language spread over the grid (:func:`spread_limit`)."""
    if languages is None or (isinstance(languages, (str, list, tuple)) and not "".join(map(str, languages)).strip()):
        raise TaxonomyError("task parameter 'languages' is empty: give 'all' or language codes such as en,fr")
    langs = as_list(languages, "languages")
    if langs is not None and [x.lower() for x in langs] == ["all"]:
        langs = None
    known_values = [v.key for a in taxonomy.attributes for v in a.target_values]
    samples = build_samples(
        taxonomy,
        languages=langs,
        attributes=as_list(attributes, "attributes"),
        values=resolve_values(values, known_values),
        scenario_groups=as_list(scenario_groups, "scenario_groups"),
        extra_english=P.boolean(extra_english, "extra_english", error=TaxonomyError),
    )
    samples = spread_limit(list(samples), limit)
    if not samples:
        raise TaxonomyError("the selection (languages/attributes/values/scenario_groups) matches no sample")
    return samples
