"""DBB demographic descriptors: the identities of paper Table 10 and the names of Table 4.

Bundled copy in ``datasets/dbb/descriptors.yaml``; the upstream ``data/descriptors.json`` (Pan et al., Findings
of EMNLP 2025; github.com/JP-25/Description-based-Bias-Benchmark, ``data/descriptors.json``) is mapped to the
paper's type numbering (the JSON order differs for Gender 3/4, Race 3/4 and Religion 1/3; the JSON index is
kept alongside).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from collections.abc import Iterable
from pathlib import Path

import yaml

from stereoprobe.errors import InputError
from stereoprobe.paths import dataset_file

UPSTREAM_KEY = "Hidden-Bias-Benchmark"
UPSTREAM_DESCRIPTORS = "data/descriptors.json"
CATEGORIES = ("age", "gender", "race", "ses", "religion")
# Upstream descriptors.json keys per category (upstream src/questions_final.ipynb writes rows in this order).
_UPSTREAM_KEYS = {
    "age": "age",
    "gender": "gender_and_sex",
    "race": "race_ethnicity",
    "ses": "socioeconomic_class",
    "religion": "religions",
}


class DBBDataError(InputError):
    """Malformed DBB data (templates, descriptors, variations)."""



@dataclass(frozen=True)
class Descriptor:
    """One demographic descriptor: ``text`` may contain ``{name}``; ``pronouns`` None = the drawn name's."""

    category: str
    type: int
    json_index: int
    group: str
    text: str
    pronouns: tuple[str, str] | None


@dataclass(frozen=True)
class DescriptorType:
    category: str
    type: int
    json_index: int
    descriptors: dict[str, Descriptor]  # group -> descriptor, in the category's group order

    @property
    def label(self) -> str:
        return f"{CATEGORY_LABELS[self.category]} {self.type}"


@dataclass(frozen=True)
class Descriptors:
    names: tuple[tuple[str, str, str], ...]  # (name, subject, possessive), upstream order female, male, neutral
    groups: dict[str, tuple[str, ...]]  # category -> groups in upstream row order
    types: dict[str, tuple[DescriptorType, ...]]  # category -> types in paper order
    upstream_pronoun_group: dict[str, str]  # category -> group whose pronouns upstream uses for all groups

    def type_of(self, category: str, type_number: int) -> DescriptorType:
        for t in self.types[category]:
            if t.type == type_number:
                return t
        raise KeyError(f"{category} has no descriptor type {type_number}")


CATEGORY_LABELS = {"age": "Age", "gender": "Gender", "race": "Race", "ses": "SES", "religion": "Religion"}



# ---------------------------------------------------------------------------------------------------------
# descriptors


@cache
def bundled_descriptors() -> Descriptors:
    """The descriptors shipped in ``datasets/dbb/descriptors.yaml`` (paper Tables 4 and 10)."""
    return descriptors_from_yaml(dataset_file("dbb", "descriptors.yaml"))


def descriptors_from_yaml(path: str | Path) -> Descriptors:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        names = tuple(tuple(e) for k in ("female", "male", "neutral") for e in raw["names"][k])
        groups: dict[str, tuple[str, ...]] = {}
        types: dict[str, tuple[DescriptorType, ...]] = {}
        up: dict[str, str] = {}
        for cat, spec in raw["categories"].items():
            if cat not in CATEGORIES:
                raise DBBDataError(f"{path}: unknown category {cat!r}; expected one of {CATEGORIES}")
            groups[cat] = tuple(spec["groups"])
            if spec.get("upstream_pronoun_group"):
                up[cat] = spec["upstream_pronoun_group"]
            tlist = []
            for t in spec["types"]:
                descs = {}
                for g in groups[cat]:
                    d = t["descriptors"][g]
                    pr = None if d["pronouns"] == "name" else tuple(d["pronouns"])
                    descs[g] = Descriptor(cat, int(t["type"]), int(t["json_index"]), g, d["text"], pr)
                tlist.append(DescriptorType(cat, int(t["type"]), int(t["json_index"]), descs))
            types[cat] = tuple(sorted(tlist, key=lambda x: x.type))
    except (KeyError, TypeError) as e:
        raise DBBDataError(f"{path}: malformed descriptor file (missing or wrong field {e})") from e
    return Descriptors(names=names, groups=groups, types=types, upstream_pronoun_group=up)


def load_upstream_descriptors(local: str | Path | None = None, verify: bool = True) -> Descriptors:
    """Upstream ``data/descriptors.json`` at the pinned commit, mapped to the paper's type numbering (Table 10).

    Group order, paper numbering and which descriptors take a name are structural facts of the benchmark and
    come from the bundled file; every text and pronoun comes from the upstream JSON.
    """
    from stereoprobe.upstream import fetch

    path = fetch(UPSTREAM_KEY, UPSTREAM_DESCRIPTORS, local=local, verify=verify)
    return descriptors_from_upstream_json(path)


def descriptors_from_upstream_json(path: str | Path) -> Descriptors:
    path = Path(path)
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        ref = bundled_descriptors()
        names = tuple(tuple(e) for k in ("female", "male", "neutral") for e in raw["name"][k])
        types: dict[str, tuple[DescriptorType, ...]] = {}
        for cat in CATEGORIES:
            block = raw[_UPSTREAM_KEYS[cat]]
            tlist = []
            for rt in ref.types[cat]:
                i = rt.json_index
                descs = {}
                for g in ref.groups[cat]:
                    entry = block[g][i]
                    if cat == "age":
                        text, pr = entry[0], (entry[1], entry[2])
                        if i < 2:  # "{name}'s daughter, ..." (the JSON holds the part after the name)
                            text = "{name}'s " + text
                    elif cat == "race":
                        text, pr = entry[0], (entry[1], entry[2])
                    elif cat == "gender":
                        text, pr = entry, (("She", "Her") if g == "female" else ("He", "His"))
                    else:  # ses, religion: suffix after the drawn name
                        text, pr = "{name}" + entry, None
                    descs[g] = Descriptor(cat, rt.type, i, g, text, pr)
                tlist.append(DescriptorType(cat, rt.type, i, descs))
            types[cat] = tuple(tlist)
    except (KeyError, IndexError, TypeError) as e:
        raise DBBDataError(f"{path}: unexpected structure of upstream descriptors.json ({e!r})") from e
    return Descriptors(names=names, groups=dict(ref.groups), types=types,
                       upstream_pronoun_group=dict(ref.upstream_pronoun_group))


def group_order(category: str, groups: Iterable[str]) -> list[str]:
    """Deterministic order of ``groups`` of a category: the bundled descriptors' order first (paper Table 10),
    then any other group (a user's descriptor file) in sorted order, so no group is ever dropped."""
    groups = list(dict.fromkeys(groups))
    known = list(bundled_descriptors().groups.get(category, ()))
    return [g for g in known if g in groups] + sorted(g for g in groups if g not in known)
