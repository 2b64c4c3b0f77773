"""DBB data: question templates, sentence variations, and their expansion into questions and test instances.

Terminology (Pan et al., "What's Not Said Still Hurts", Findings of EMNLP 2025, §3): a *question
template* (upstream "raw question") is a context sentence with the placeholder ``[[X]]`` and two options,
option A implying the stereotypical concept (concept1) and option B the contrasting one. A *question* fills ``[[X]]``
with one demographic descriptor (category, descriptor type, group; :mod:`stereoprobe.dbb.descriptors`). A
*test instance* pairs two questions of the same template, category and type for two different groups; the
bias score S is computed per test instance.

Sources: the bundled templates we wrote (``datasets/dbb/templates.csv``, demo and tests), the upstream 1,547
templates and ``descriptors.json`` at the pinned commit (:func:`load_upstream_templates`,
:func:`load_upstream_descriptors`), or a local folder/file.

Expansion follows upstream ``src/questions_final.ipynb`` (github.com/JP-25/Description-based-Bias-Benchmark).
``faithful=True`` reproduces its quirks: race options take the *white* entry's pronouns, an option without
``[[X]]`` silently reuses the previous row's option (a stale variable), only the possessive form is replaced
when an option holds both ``[[X]]'s`` and ``[[X]]``, and texts keep upstream spacing/casing ("Yue, an
American-Born Chinese,  sat", "With a smile, He ..."). ``faithful=False`` uses each descriptor's own
pronouns, leaves an option without placeholder unchanged (flagged ``option_a_no_placeholder`` /
``option_b_no_placeholder``), replaces both forms, lower-cases a substituted pronoun or "The ..." descriptor
that does not start a sentence, and normalises spaces and a comma before punctuation. Base names (age types
1–2, SES, religions): upstream drew them with an unseeded ``random.randint`` and published the realised
dataset, so for upstream templates ``expand(..., names=...)`` takes the published draws
(:mod:`stereoprobe.dbb.published`); otherwise they are drawn with a seeded RNG per (template, category,
type), so a subset expands exactly like the full set.
"""

from __future__ import annotations

import csv
import itertools
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stereoprobe.errors import reason
from stereoprobe.paths import dataset_file

from stereoprobe.dbb.descriptors import (  # noqa: F401  (re-exported: the data API of the probe)
    CATEGORIES,
    CATEGORY_LABELS,
    UPSTREAM_DESCRIPTORS,
    UPSTREAM_KEY,
    DBBDataError,
    Descriptor,
    Descriptors,
    DescriptorType,
    bundled_descriptors,
    descriptors_from_upstream_json,
    descriptors_from_yaml,
    group_order,
    load_upstream_descriptors,
)

UPSTREAM_TEMPLATES = "Questions/20241122-2120_all_data_questions074.csv"
UPSTREAM_VARIATIONS = "Questions/20241207-0945_all_data_more_contexts_questions.csv"  # DBB-SG, 10 per template
PLACEHOLDER = "[[X]]"
POSSESSIVE = "[[X]]'s"


@dataclass(frozen=True)
class QuestionTemplate:
    """A raw question: context + option A (stereotypical concept) + option B (contrasting concept)."""

    template_id: str
    context: str
    option_a: str
    option_b: str
    concept_a: str = ""
    concept_b: str = ""
    explanation: str = ""
    source: str = ""


@dataclass(frozen=True)
class Question:
    """A template filled with one descriptor. ``option_a`` always implies concept A (concept1)."""

    id: str
    template_id: str
    category: str
    type: int
    json_index: int
    group: str
    context: str
    option_a: str
    option_b: str
    concept_a: str
    concept_b: str
    descriptor: str
    name: str | None
    pronouns: tuple[str, str]
    flags: tuple[str, ...] = ()

    @property
    def type_label(self) -> str:
        return f"{CATEGORY_LABELS[self.category]} {self.type}"

    def metadata(self) -> dict[str, Any]:
        return {
            "template_id": self.template_id,
            "category": self.category,
            "descriptor_type": self.type_label,
            "type": self.type,
            "json_index": self.json_index,
            "group": self.group,
            "option_a": self.option_a,
            "option_b": self.option_b,
            "concept_a": self.concept_a,
            "concept_b": self.concept_b,
            "descriptor": self.descriptor,
            "name": self.name,
            "flags": list(self.flags),
        }


@dataclass(frozen=True)
class TestInstance:
    """Two questions of the same template, category and type for two groups (``group_1`` before ``group_2``)."""

    id: str
    template_id: str
    category: str
    type: int
    group_1: str
    group_2: str


# ---------------------------------------------------------------------------------------------------------
# templates

_OUR_COLUMNS = ("template_id", "context", "option_a", "option_b")
_UPSTREAM_COLUMNS = ("Context", "s1", "s2")


def read_templates_csv(path: str | Path) -> list[QuestionTemplate]:
    """Read templates from a CSV in our columns (template_id, context, option_a, option_b, concept_a,
    concept_b, explanation, source) or upstream's (Context, s1, s2, bias type1, bias type2, explanation,
    bias_type); upstream rows get ids ``"0".."1546"`` (row index)."""
    path = Path(path)
    if not path.is_file():
        raise DBBDataError(f"DBB template file not found: {path}")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            cols = set(reader.fieldnames or ())
            rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as e:
        raise DBBDataError(f"{path}: not a UTF-8 CSV file ({reason(e)})") from None
    out: list[QuestionTemplate] = []
    if set(_OUR_COLUMNS) <= cols:
        for i, r in enumerate(rows):
            out.append(QuestionTemplate(
                r["template_id"].strip(), r["context"], r["option_a"], r["option_b"], r.get("concept_a", ""),
                r.get("concept_b", ""), r.get("explanation", ""), r.get("source", "")))
    elif set(_UPSTREAM_COLUMNS) <= cols:
        for i, r in enumerate(rows):
            out.append(QuestionTemplate(
                str(i), r["Context"], r["s1"], r["s2"], r.get("bias type1", ""), r.get("bias type2", ""),
                r.get("explanation", ""), r.get("bias_type", "")))
    else:
        raise DBBDataError(
            f"{path}: not a DBB template file; expected columns {', '.join(_OUR_COLUMNS)} "
            f"(stereoprobe) or {', '.join(_UPSTREAM_COLUMNS)} (upstream); found {', '.join(sorted(cols))}")
    seen: set[str] = set()
    for row, t in enumerate(out, start=2):
        if not t.template_id or t.template_id in seen:
            raise DBBDataError(f"{path}: line {row}: empty or duplicate template_id {t.template_id!r}")
        seen.add(t.template_id)
        if PLACEHOLDER not in t.context:
            raise DBBDataError(f"{path}: line {row} (template {t.template_id}): context has no {PLACEHOLDER}")
        if not t.option_a.strip() or not t.option_b.strip():
            raise DBBDataError(f"{path}: line {row} (template {t.template_id}): empty option")
    return out


def bundled_templates() -> list[QuestionTemplate]:
    """The small set of templates stereoprobe ships (our own wording) for the demo and tests."""
    return read_templates_csv(dataset_file("dbb", "templates.csv"))


def load_upstream_templates(local: str | Path | None = None, verify: bool = True) -> list[QuestionTemplate]:
    """The 1,547 upstream question templates at the pinned commit (download, checksum, cache; or ``local``)."""
    from stereoprobe.upstream import fetch

    return read_templates_csv(fetch(UPSTREAM_KEY, UPSTREAM_TEMPLATES, local=local, verify=verify))


def load_source(source: str | Path = "bundled") -> tuple[list[QuestionTemplate], Descriptors]:
    """Templates and descriptors for a task ``source``.

    ``"bundled"``: our templates + bundled descriptors. ``"upstream"``: the pinned upstream files (cache or
    download; offline → a clear error naming the ways to pass a local copy). A folder: a local copy of the
    upstream repository (files verified against the pinned checksums). A ``.csv`` file: templates in our or
    upstream columns, with the bundled descriptors.
    """
    if str(source) == "bundled":
        return bundled_templates(), bundled_descriptors()
    if str(source) == "upstream":
        from stereoprobe.upstream import UpstreamDataError

        try:
            return load_upstream_templates(), load_upstream_descriptors()
        except UpstreamDataError as e:
            raise UpstreamDataError(
                f"DBB source=upstream: {e}; or run the small bundled set with -T source=bundled") from e
    p = Path(source)
    if p.is_dir():
        return load_upstream_templates(local=p), load_upstream_descriptors(local=p)
    if p.is_file():
        return read_templates_csv(p), bundled_descriptors()
    raise DBBDataError(
        f"DBB source {source!r} is neither 'bundled', 'upstream', a folder (local copy of the "
        f"Hidden-Bias-Benchmark repository) nor a template CSV file")


@dataclass(frozen=True)
class Variation:
    template_id: str
    variation: int
    option_a: str
    option_b: str


def read_variations_csv(path: str | Path, templates: Sequence[QuestionTemplate]) -> dict[str, list[Variation]]:
    """DBB-SG sentence variations; variation 0 = the template's own options is always included first.
    Templates without a row get only variation 0 (n = 1).

    Columns: ours (``template_id, variation, option_a, option_b``, e.g. ``stereoprobe dbb-build-export``'s
    ``sg_variations.csv``) or upstream's more-contexts file (``id, s1, s2``; ``id`` = the template's row
    index, rows in file order become variations 1, 2, ...; a row equal to the template's own options is
    variation 0 already and skipped; at most 9 extra, so n <= 10 as in the paper)."""
    path = Path(path)
    if not path.is_file():
        raise DBBDataError(f"DBB-SG variations file not found: {path}")
    known = {t.template_id: t for t in templates}
    out: dict[str, list[Variation]] = {t.template_id: [Variation(t.template_id, 0, t.option_a, t.option_b)]
                                       for t in templates}
    try:
        return _read_variation_rows(path, known, out)
    except (UnicodeDecodeError, csv.Error) as e:
        raise DBBDataError(f"{path}: not a UTF-8 CSV file ({reason(e)})") from None


def _read_variation_rows(path: Path, known: dict[str, QuestionTemplate], out: dict[str, list[Variation]]
                         ) -> dict[str, list[Variation]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        cols = set(reader.fieldnames or ())
        upstream = {"id", "s1", "s2"} <= cols and "template_id" not in cols
        missing = set() if upstream else {"template_id", "variation", "option_a", "option_b"} - cols
        if missing:
            raise DBBDataError(f"{path}: missing columns {', '.join(sorted(missing))} (or upstream's id, s1, s2)")
        for line, r in enumerate(reader, start=2):
            tid = (r["id"] if upstream else r["template_id"]).strip()
            if tid not in known:
                continue  # variations for templates not in this run's source
            if upstream:
                t = known[tid]
                if (r["s1"], r["s2"]) == (t.option_a, t.option_b) or len(out[tid]) >= 10:
                    continue
                out[tid].append(Variation(tid, len(out[tid]), r["s1"], r["s2"]))
                continue
            try:
                j = int(r["variation"])
            except ValueError:
                raise DBBDataError(f"{path}: line {line}: variation {r['variation']!r} is not an integer") from None
            if j == 0 or any(v.variation == j for v in out[tid]):
                raise DBBDataError(f"{path}: line {line}: duplicate variation {j} of template {tid} (0 is the "
                                   "template's own options)")
            out[tid].append(Variation(tid, j, r["option_a"], r["option_b"]))
    for v in out.values():
        v.sort(key=lambda x: x.variation)
    return out


def bundled_variations(templates: Sequence[QuestionTemplate]) -> dict[str, list[Variation]]:
    return read_variations_csv(dataset_file("dbb", "sg_variations.csv"), templates)


# ---------------------------------------------------------------------------------------------------------
# expansion

def _starts_sentence(prefix: str) -> bool:
    """True if a word placed after ``prefix`` begins a sentence."""
    return prefix.strip() == "" or bool(re.search(r'[.!?]["\')\]]?\s*$', prefix)) or bool(
        re.fullmatch(r'\s*["\'(\[]\s*', prefix))


def _recase(word: str, prefix: str) -> str:
    if _starts_sentence(prefix):
        return word[:1].upper() + word[1:]
    first = word.split(" ", 1)[0]
    if first in ("She", "He", "Her", "His", "The", "They", "Their"):
        return word[:1].lower() + word[1:]
    return word


def _replace_cased(text: str, token: str, value: str) -> str:
    parts = text.split(token)
    out = parts[0]
    for p in parts[1:]:
        out += _recase(value, out) + p
    return out


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r",\s*([.!?;:,])", r"\1", text)
    return text.strip()


def fill_option(option: str, pronouns: tuple[str, str], faithful: bool) -> str | None:
    """Substitute pronouns for ``[[X]]'s`` (possessive) and ``[[X]]`` (subject); None if no placeholder.

    Upstream (faithful): if ``[[X]]'s`` occurs only it is replaced (a remaining ``[[X]]`` is left), pronouns
    keep their capital. Default: both forms, possessive first, lower case unless starting a sentence.
    """
    subject, possessive = pronouns
    if POSSESSIVE not in option and PLACEHOLDER not in option:
        return None
    if faithful:
        if POSSESSIVE in option:
            return option.replace(POSSESSIVE, possessive)
        return option.replace(PLACEHOLDER, subject)
    out = _replace_cased(option, POSSESSIVE, possessive)
    out = _replace_cased(out, PLACEHOLDER, subject)
    return _tidy(out)


def fill_context(context: str, descriptor_text: str, faithful: bool) -> str:
    if faithful:
        return context.replace(PLACEHOLDER, descriptor_text)
    return _tidy(_replace_cased(context, PLACEHOLDER, descriptor_text.strip()))


def draw_name(seed: int, template_id: str, category: str, type_number: int,
              names: Sequence[tuple[str, str, str]]) -> tuple[str, str, str]:
    """The base name of (template, category, type): a seeded draw among the 12 Table 4 names (``names=draw``;
    upstream drew with an unseeded ``random.randint`` and published the result, which ``names=published``
    reads: :mod:`stereoprobe.dbb.published`). Independent of which other templates are expanded."""
    rng = random.Random(f"dbb|{seed}|{template_id}|{category}|{type_number}")
    return names[rng.randrange(len(names))]


def question_id(template_id: str, category: str, type_number: int, group: str) -> str:
    return f"{template_id}:{category}:{type_number}:{group}"


def expand(
    templates: Sequence[QuestionTemplate],
    descriptors: Descriptors | None = None,
    *,
    seed: int = 0,
    faithful: bool = False,
    categories: Iterable[str] | None = None,
    names: Mapping[tuple[str, str, int], tuple[str, str, str]] | None = None,
) -> list[Question]:
    """Expand templates into questions: per template, every category, descriptor type and group.

    ``names``: the base name of each (template id, category, type) that takes one (upstream's published
    draws, :func:`stereoprobe.dbb.published.published_names`); default: a seeded draw (:func:`draw_name`).

    Rows are produced in upstream order (template; age, gender, race, SES, religion; JSON index; group) so
    that ``faithful=True`` reproduces the upstream stale-option reuse exactly; ``categories`` filters afterwards.
    """
    descriptors = descriptors or bundled_descriptors()
    wanted = set(categories) if categories is not None else set(CATEGORIES)
    unknown = wanted - set(CATEGORIES)
    if unknown:
        raise DBBDataError(f"unknown DBB categories {sorted(unknown)}; expected a subset of {CATEGORIES}")
    out: list[Question] = []
    stale_a: str | None = None
    stale_b: str | None = None
    for t in templates:
        for cat in CATEGORIES:
            for dt in sorted(descriptors.types[cat], key=lambda x: x.json_index):
                name = None
                if any("{name}" in d.text or d.pronouns is None for d in dt.descriptors.values()):
                    if names is None:
                        name = draw_name(seed, t.template_id, cat, dt.type, descriptors.names)
                    elif (t.template_id, cat, dt.type) in names:
                        name = names[(t.template_id, cat, dt.type)]
                    else:
                        raise DBBDataError(f"no published name for template {t.template_id}, {cat} type {dt.type}")
                for g in descriptors.groups[cat]:
                    d = dt.descriptors[g]
                    text = d.text.replace("{name}", name[0]) if name else d.text
                    src = d
                    if faithful and cat in descriptors.upstream_pronoun_group:
                        src = dt.descriptors[descriptors.upstream_pronoun_group[cat]]
                    pronouns = src.pronouns if src.pronouns is not None else (name[1], name[2])  # type: ignore[index]
                    flags: list[str] = []
                    a = fill_option(t.option_a, pronouns, faithful)
                    b = fill_option(t.option_b, pronouns, faithful)
                    if a is None:
                        flags.append("option_a_no_placeholder")
                        a = stale_a if (faithful and stale_a is not None) else t.option_a
                    if b is None:
                        flags.append("option_b_no_placeholder")
                        b = stale_b if (faithful and stale_b is not None) else t.option_b
                    stale_a, stale_b = a, b
                    if cat not in wanted:
                        continue
                    out.append(Question(
                        id=question_id(t.template_id, cat, dt.type, g), template_id=t.template_id, category=cat,
                        type=dt.type, json_index=dt.json_index, group=g,
                        context=fill_context(t.context, text, faithful), option_a=a, option_b=b,
                        concept_a=t.concept_a, concept_b=t.concept_b, descriptor=text,
                        name=name[0] if name else None, pronouns=tuple(pronouns), flags=tuple(flags)))
    return out


def pair_instances(questions: Iterable[Question], descriptors: Descriptors | None = None) -> list[TestInstance]:
    """All test instances among ``questions``: for every (template, category, type), every unordered pair of
    groups present, in the category's group order (C(groups, 2) per type; paper Table 5)."""
    descriptors = descriptors or bundled_descriptors()
    by_key: dict[tuple[str, str, int], set[str]] = {}
    for q in questions:
        by_key.setdefault((q.template_id, q.category, q.type), set()).add(q.group)
    out = []
    for (tid, cat, typ), present in by_key.items():
        order = [g for g in descriptors.groups[cat] if g in present]
        for g1, g2 in itertools.combinations(order, 2):
            out.append(TestInstance(f"{tid}:{cat}:{typ}:{g1}|{g2}", tid, cat, typ, g1, g2))
    return out


def expansion_counts(templates: Sequence[QuestionTemplate], descriptors: Descriptors | None = None
                     ) -> dict[tuple[str, str], dict[str, int]]:
    """Questions and test instances per (category, descriptor type label) (paper Table 5)."""
    descriptors = descriptors or bundled_descriptors()
    qs = expand(templates, descriptors)
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for q in qs:
        counts.setdefault((q.category, q.type_label), {"questions": 0, "instances": 0})["questions"] += 1
    for ti in pair_instances(qs, descriptors):
        counts[(ti.category, f"{CATEGORY_LABELS[ti.category]} {ti.type}")]["instances"] += 1
    return counts


__all__ = [
    "CATEGORIES", "DBBDataError", "Descriptor", "DescriptorType", "Descriptors", "Question", "QuestionTemplate",
    "TestInstance", "Variation", "bundled_descriptors", "bundled_templates", "bundled_variations",
    "descriptors_from_upstream_json", "descriptors_from_yaml", "draw_name", "expand", "expansion_counts",
    "fill_context", "fill_option", "load_source", "load_upstream_descriptors", "load_upstream_templates",
    "question_id", "read_templates_csv", "read_variations_csv", "pair_instances",
]
