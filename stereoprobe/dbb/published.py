"""The base names of upstream's published DBB (``data/Bias-Dataset.csv``): the paper's Age, SES and Religion
questions.

Upstream ``src/questions_final.ipynb`` (github.com/JP-25/Description-based-Bias-Benchmark) draws one base
name per (raw question, category, descriptor index) with an unseeded ``random.randint`` (age indices 0-1,
SES, religions) and writes the realised dataset, 50 rows per raw question in its loop order (age, gender,
race, SES, religions; descriptor index; group), to ``data/Bias-Dataset.csv``
(columns ``Context, ans1, ans2, Label, bias type1, bias type2, explanation, bias_type, target``). The draws
are therefore published: :func:`published_names` reads them back, so that the expansion
(:func:`stereoprobe.dbb.data.expand` with ``names=``) rebuilds the paper's questions. Every named row's
Context must equal the faithful filling of its template with exactly one of the 12 names (paper Table 4),
and the rows of one (raw question, category, index) must share the name; anything else is an error naming
the row.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from stereoprobe.dbb.data import (CATEGORIES, PLACEHOLDER, DBBDataError, Descriptors, QuestionTemplate,
                                  fill_context)
from stereoprobe.errors import reason

UPSTREAM_DATASET = "data/Bias-Dataset.csv"  # the published dataset: 1,547 x 50 rows
#: ``-T names=``: the published draws (default for upstream templates) or a seeded draw
NAME_SOURCES = ("published", "draw")
#: the key of one name: (template id, category, descriptor type number)
NameKey = tuple[str, str, int]


def row_layout(descriptors: Descriptors) -> list[tuple[str, int, str, bool]]:
    """``(category, type, group, named)`` of the rows of one raw question in upstream's order (50 rows with
    the upstream descriptors); ``named`` = the descriptor holds the base name."""
    out = []
    for cat in CATEGORIES:
        for dt in sorted(descriptors.types[cat], key=lambda x: x.json_index):
            named = any("{name}" in d.text or d.pronouns is None for d in dt.descriptors.values())
            out.extend((cat, dt.type, g, named) for g in descriptors.groups[cat])
    return out


def published_names(path: str | Path, templates: Sequence[QuestionTemplate], descriptors: Descriptors
                    ) -> dict[NameKey, tuple[str, str, str]]:
    """The name ``(name, subject, possessive)`` of every (template, category, type) that has one, read from
    upstream's published dataset ``path`` for ``templates`` (upstream's, in file order)."""
    path = Path(path)
    layout = row_layout(descriptors)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if "Context" not in (reader.fieldnames or ()):
                raise DBBDataError(f"{path}: not upstream's DBB dataset (no Context column; found "
                                   f"{', '.join(reader.fieldnames or ())})")
            rows = [r["Context"] for r in reader]
    except (UnicodeDecodeError, csv.Error) as e:
        raise DBBDataError(f"{path}: not a UTF-8 CSV file ({reason(e)})") from None
    if len(rows) != len(templates) * len(layout):
        raise DBBDataError(f"{path}: {len(rows)} rows; expected {len(templates)} templates x {len(layout)} "
                           f"questions = {len(templates) * len(layout)}")
    out: dict[NameKey, tuple[str, str, str]] = {}
    for n, context in enumerate(rows):
        t = templates[n // len(layout)]
        cat, typ, group, named = layout[n % len(layout)]
        if not named:
            continue
        d = descriptors.type_of(cat, typ).descriptors[group]
        found = [nm for nm in descriptors.names
                 if fill_context(t.context, d.text.replace("{name}", nm[0]), faithful=True) == context]
        where = f"{path}: line {n + 2} (template {t.template_id}, {cat} type {typ}, {group})"
        if len(found) != 1:
            raise DBBDataError(f"{where}: Context {context[:80]!r} is not the template filled with one of the "
                               f"{len(descriptors.names)} names (template context {t.context[:60]!r}, "
                               f"{PLACEHOLDER} -> {d.text!r})")
        key = (t.template_id, cat, typ)
        if out.setdefault(key, found[0]) != found[0]:
            raise DBBDataError(f"{where}: name {found[0][0]!r} differs from {out[key][0]!r} of the same "
                               "template, category and type")
    return out


def load_published_names(templates: Sequence[QuestionTemplate], descriptors: Descriptors,
                         local: str | Path | None = None, verify: bool = True
                         ) -> dict[NameKey, tuple[str, str, str]]:
    """:func:`published_names` of the pinned ``data/Bias-Dataset.csv`` (download, checksum, cache; or
    ``local``, a copy of the upstream repository)."""
    from stereoprobe.dbb.descriptors import UPSTREAM_KEY
    from stereoprobe.upstream import UpstreamDataError, fetch

    try:
        path = fetch(UPSTREAM_KEY, UPSTREAM_DATASET, local=local, verify=verify)
    except UpstreamDataError as e:
        raise UpstreamDataError(
            f"DBB names=published needs upstream's published dataset: {e} -- or re-draw the names with a "
            "seed: -T names=draw") from e
    return published_names(path, templates, descriptors)


__all__ = ["NAME_SOURCES", "UPSTREAM_DATASET", "load_published_names", "published_names", "row_layout"]
