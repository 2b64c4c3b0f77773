"""Checks of GlobalBias tables given as input (the paper's published result CSVs, or tables in our long layout),
where a difference that looks harmless would change numbers without a word (issue 34.6):

- a column the reader does not know is ignored with a notice (:func:`ignored_columns`);
- two spellings of one group or descriptor that differ only in case or surrounding spaces (``kind`` and
  ``Kind``, ``kind``) are refused in one line (:func:`check_spellings`): they would be two groups or
  descriptors, each with part of the cells. Upstream's own results hold ``Conservative`` and ``conservative``
  as two descriptors of different axes; spellings whose axes differ are two descriptors, as there;
- a name listed in two groups of one model is refused in one line (:func:`check_names`): which group its
  perplexities belong to is unclear;
- a model that lacks a group other models of the input have is noted (:func:`missing_groups`): its bias scores
  are computed over fewer groups, so they are not comparable with the others'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from stereoprobe.errors import InputError

#: columns of the long layout and of the upstream result files (``results/3_llama_3_results.csv`` and
#: ``4_llama_3_min_results.csv``: ``Group, apx_1..3, descriptor, axis, bucket, Ethnicity, Gender,
#: template_number``; the perplexity files: ``firstname, perplexity_1..3, *_norm, average_norm``)
KNOWN_COLUMNS = frozenset({
    "model", "group", "Group", "name", "firstname", "descriptor", "template", "template_number", "ppl", "apx",
    "perplexity", "axis", "bucket", "dataset", "target", "ethnicity", "Ethnicity", "gender", "Gender",
    "average_norm",
})
_KNOWN_PATTERN = re.compile(r"^(perplexity|ppl|apx)_[123]$|_norm$|^Unnamed: \d+$")


def ignored_columns(columns: Iterable[object]) -> list[str]:
    """The columns of a GlobalBias table the reader does not use nor know (ignored, with a notice)."""
    return [str(c) for c in columns if str(c) not in KNOWN_COLUMNS and not _KNOWN_PATTERN.search(str(c))]


def _key(value: object) -> str:
    return str(value).strip().casefold()


def check_spellings(df: pd.DataFrame) -> None:
    """:class:`InputError` naming two spellings of one group or descriptor (same text but for case or
    surrounding spaces; descriptors of different axes are different descriptors) and their sources."""
    for col, by in (("group", None), ("descriptor", "axis")):
        cols = [col] + ([by] if by in df.columns else [])
        seen = df[cols + ["source"]].drop_duplicates(cols)
        if seen.empty:
            continue
        axis = seen[by].map(lambda v: "" if v is None or v != v else str(v)) if by in seen.columns else ""
        keyed = seen.assign(_k=seen[col].map(_key), _a=axis)
        clash = keyed[keyed.duplicated(["_k", "_a"], keep=False)]
        if len(clash):
            first = clash[(clash["_k"] == clash["_k"].iloc[0]) & (clash["_a"] == clash["_a"].iloc[0])]
            spellings = ", ".join(repr(v) for v in sorted(map(str, first[col]))[:3])
            sources = ", ".join(sorted(set(first["source"].astype(str))))
            raise InputError(f"{sources}: {col} names {spellings} differ only in case or spaces; they would be "
                             f"counted as different {col}s, each with part of the rows: write one spelling")


def check_names(df: pd.DataFrame) -> None:
    """:class:`InputError` naming the first name listed in two groups of one model (table inputs with names)."""
    named = df[df["name"].notna()]
    if named.empty:
        return
    groups = named.assign(_n=named["name"].map(lambda v: str(v).strip())).groupby(["model", "_n"])["group"]
    n = groups.nunique()
    if (n > 1).any():
        model, name = n[n > 1].index[0]
        both = sorted(set(named.loc[(named["model"] == model) & (named["name"].map(lambda v: str(v).strip()) == name),
                                    "group"].astype(str)))
        sources = ", ".join(sorted(set(named.loc[named["model"] == model, "source"].astype(str))))
        raise InputError(f"{sources}: name {name!r} of model {model!r} is listed in {len(both)} groups "
                         f"({', '.join(both[:3])}); which group its values belong to is unclear: keep it in one")


def missing_groups(df: pd.DataFrame) -> list[str]:
    """Notices: a model lacking a group that another model of the input has, and a model whose groups do not
    all hold every descriptor it has (the absent group x descriptor cells, counted, the first named)."""
    by_model = df.groupby("model")["group"].agg(lambda g: set(g.astype(str)))
    notes = []
    for model, part in df.groupby("model"):
        cells = set(zip(part["group"].astype(str), part["descriptor"].astype(str)))
        groups, descriptors = sorted({g for g, _ in cells}), sorted({d for _, d in cells})
        absent = [(g, d) for g in groups for d in descriptors if (g, d) not in cells]
        if absent:
            notes.append(f"model {model!r}: {len(absent)} group x descriptor cell(s) absent (e.g. {absent[0][0]} x "
                         f"{absent[0][1]!r}): those descriptors' scores cover fewer groups")
    if len(by_model) < 2:
        return notes
    every = set().union(*by_model)
    for model, groups in by_model.items():
        lacking = sorted(every - groups)
        if lacking:
            shown = ", ".join(lacking[:5]) + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")
            notes.append(f"model {model!r} has no rows for group(s) {shown} that other models have: its bias "
                         "scores cover fewer groups and are not comparable with theirs")
    return notes


def check_profile_table(df: pd.DataFrame, source: object) -> None:
    """A profiles table (upstream generation-output layout): :class:`InputError` naming two spellings of one
    ``Group``, ``Ethnicity`` or ``Gender`` (case or surrounding spaces: two classes of the classifier, each
    with part of the profiles), or a name listed under two groups of one model."""
    for col in ("Group", "Ethnicity", "Gender"):
        values = pd.Series(df[col].astype(str).unique())
        keys = values.map(_key)
        clash = values[keys.duplicated(keep=False)]
        if len(clash):
            first = sorted(clash[keys[clash.index] == keys[clash.index[0]]])
            raise InputError(f"{source}: {col} values {', '.join(map(repr, first[:3]))} differ only in case or "
                             f"spaces; they would be different classes, each with part of the profiles: write one "
                             "spelling")
    names = df.assign(_n=df["name"].astype(str).str.strip())
    n = names.groupby(["model", "_n"])["Group"].nunique()
    if (n > 1).any():
        model, name = n[n > 1].index[0]
        both = sorted(set(names.loc[(names["model"] == model) & (names["_n"] == name), "Group"].astype(str)))
        raise InputError(f"{source}: name {name!r} of model {model!r} is listed in {len(both)} groups "
                         f"({', '.join(both[:3])}); which group its profiles belong to is unclear: keep it in one")
