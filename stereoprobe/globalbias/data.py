"""GlobalBias data: name groups, descriptors, templates and the sentence set.

Sources (``source=``):

- ``"bundled"``: a small name/descriptor set written for stereoprobe (``datasets/globalbias/``), for demos
  and tests (4 ethnicities x 2 genders x 3 names, 16 descriptors).
- ``"upstream"``: the reference files of ``groovychoons/GlobalBias`` at the pinned commit
  (``data/3_name_groups.csv``: 40 gender x ethnicity groups x 10 names; ``data/full_descriptors.csv``: 730
  descriptors), downloaded and checksum-verified by :func:`stereoprobe.upstream.fetch`.
- a path: a local copy of the upstream repository (a folder holding ``data/...``), for offline machines.

The full set is names x descriptors x 3 templates = 876,000 sentences upstream (``faithful=True``: the
duplicate name "Wafa" of ARAB F is kept, so ids use the name's index within its group). ``faithful=False``
(default) drops repeated names within a group (873,810 sentences) and adds the missing article to the
Ghavami & Peplau nonce descriptors ("was caterpillar" -> "was a caterpillar"). Sentences are generated
lazily by :func:`iter_sentences`.
"""

from __future__ import annotations

import ast
import csv
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any
from pathlib import Path

import yaml

from stereoprobe.globalbias.templates import Template, own_templates, template_set
from stereoprobe.paths import dataset_file

UPSTREAM_KEY = "GlobalBias"
NAMES_FILE = "data/3_name_groups.csv"
DESCRIPTORS_FILE = "data/full_descriptors.csv"
GP_DATASET = "GhavamiPeplau"
TEMPLATE_NUMBERS = (1, 2, 3)


@dataclass(frozen=True)
class Name:
    group: str  # "ETHNICITY_G", e.g. "ARAB_F"
    ethnicity: str
    gender: str
    index: int  # position of the name within its group (stable id part; names may repeat upstream)
    name: str


@dataclass(frozen=True)
class Descriptor:
    index: int  # row of the descriptor file (stable id part)
    descriptor: str
    partials: tuple[str, str, str]
    dataset: str
    axis: str | None
    target: str | None  # Ghavami & Peplau target group (white/asian/hispanic/arab/nonce), else None


@dataclass(frozen=True)
class Sentence:
    id: str
    text: str
    encoder_input: str
    template: int
    name: Name
    descriptor: Descriptor

    def metadata(self) -> dict[str, object]:
        return {
            "group": self.name.group,
            "ethnicity": self.name.ethnicity,
            "gender": self.name.gender,
            "name": self.name.name,
            "name_index": self.name.index,
            "descriptor": self.descriptor.descriptor,
            "descriptor_index": self.descriptor.index,
            "dataset": self.descriptor.dataset,
            "axis": self.descriptor.axis,
            "target": self.descriptor.target,
            "template": self.template,
            "encoder_input": self.encoder_input,
        }


def group_key(ethnicity: str, gender: str) -> str:
    return f"{ethnicity}_{gender}"


def _opt(v: object) -> str | None:
    if v is None or (isinstance(v, float) and v != v):
        return None
    s = str(v).strip()
    return s or None


def _upstream_path(source: str | os.PathLike[str], relpath: str, verify: bool) -> Path:
    from stereoprobe.upstream import UpstreamDataError, fetch

    local = None if str(source) == "upstream" else source
    if local is not None and not Path(local).exists():
        raise FileNotFoundError(f"GlobalBias source folder not found: {local}")
    try:
        return fetch(UPSTREAM_KEY, relpath, local=local, verify=verify)
    except UpstreamDataError as e:
        raise UpstreamDataError(f"{e}; or run stereoprobe's small demo set with -T source=bundled") from e


def _read_csv(path: Path, cols: Sequence[str]) -> list[dict[str, str]]:
    """The rows of a CSV file as text cells (``cols`` required), read as ``pandas.read_csv(path, dtype=str,
    keep_default_na=False)`` reads them: a leading byte-order mark dropped, blank lines skipped, a repeated
    column name read from its first column. A short row's missing cells are empty (pandas: NaN); a row longer
    than the header is an error naming the file and row. No pandas: the task's build (inside ``inspect eval``)
    does not import it (docs/performance.md, issue 44 fifth session)."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        first = {c: i for i, c in reversed(list(enumerate(header)))}
        missing = [c for c in cols if c not in first]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)} (has {', '.join(header)})")
        rows = []
        for cells in reader:
            if not cells:
                continue
            if len(cells) > len(header):
                raise ValueError(f"{path}: row {len(rows)}: {len(cells)} fields, the header has {len(header)}")
            rows.append({c: cells[i] if i < len(cells) else "" for c, i in first.items()})
    return rows


def load_names(source: str | os.PathLike[str] = "bundled", faithful: bool = False, verify: bool = True) -> list[Name]:
    """Names of every group, in file order. Upstream: 400 rows (40 groups x 10), ``Group`` = "('ETH', 'G')".

    ``faithful=False`` drops a name repeated within its group (upstream: the second "Wafa" of ARAB F).
    """
    if str(source) == "bundled":
        path = dataset_file("globalbias", "names.csv")
        rows = [(r["name"].strip(), r["ethnicity"].strip(), r["gender"].strip())
                for r in _read_csv(path, ["name", "ethnicity", "gender"])]
    else:
        path = _upstream_path(source, NAMES_FILE, verify)
        rows = []
        for i, r in enumerate(_read_csv(path, ["firstname", "Ethnicity", "Gender", "Group"])):
            eth, gen, group = r["Ethnicity"].strip(), r["Gender"].strip(), r["Group"]
            try:
                parsed = ast.literal_eval(group)
            except (ValueError, SyntaxError):
                raise ValueError(f"{path}: row {i}: unreadable Group {group!r}") from None
            if tuple(parsed) != (eth, gen):
                raise ValueError(f"{path}: row {i}: Group {group!r} disagrees with Ethnicity/Gender {eth}/{gen}")
            rows.append((r["firstname"].strip(), eth, gen))
    out: list[Name] = []
    counters: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for name, eth, gen in rows:
        if not name or not eth or gen not in ("F", "M"):
            raise ValueError(f"{path}: bad name row {(name, eth, gen)!r} (gender must be F or M)")
        g = group_key(eth, gen)
        if not faithful and (g, name) in seen:
            continue
        seen.add((g, name))
        idx = counters.get(g, 0)
        counters[g] = idx + 1
        out.append(Name(group=g, ethnicity=eth, gender=gen, index=idx, name=name))
    return out


_NONCE_FIX_PREFIX = ("was ", "is ")


def load_descriptors(
    source: str | os.PathLike[str] = "bundled", faithful: bool = False, verify: bool = True
) -> list[Descriptor]:
    """Descriptors in file order (upstream: 730 = HolisticBias 552 + StereoSet 127 + Ghavami & Peplau 51)."""
    if str(source) == "bundled":
        path = dataset_file("globalbias", "descriptors.csv")
    else:
        path = _upstream_path(source, DESCRIPTORS_FILE, verify)
    out = []
    rows = _read_csv(path, ["partial_1", "partial_2", "partial_3", "descriptor", "dataset", "axis", "group"])
    for i, r in enumerate(rows):
        partials = (r["partial_1"].strip(), r["partial_2"].strip(), r["partial_3"].strip())
        if not all(partials) or not r["descriptor"].strip():
            raise ValueError(f"{path}: row {i} ({r['descriptor']!r}): empty descriptor or partial")
        target = _opt(r["group"])
        if not faithful and target == "nonce" and partials[0].startswith("am a "):
            art = partials[0].split()[1]
            partials = (
                partials[0],
                *(p if p.split()[1] in ("a", "an") else f"{p.split()[0]} {art} {p.split(' ', 1)[1]}"
                  for p in partials[1:]),
            )
        out.append(
            Descriptor(index=i, descriptor=r["descriptor"].strip(), partials=partials, dataset=r["dataset"].strip(),
                       axis=_opt(r["axis"]), target=target)
        )
    return out


def templates(wording: str | None = None, source: str | os.PathLike[str] = "bundled") -> dict[int, str]:
    """The three sentence templates, by number (see :mod:`stereoprobe.globalbias.templates`)."""
    return {k: v.sentence for k, v in template_set(wording, source).items()}


def render(template: Template, name: str, partials: Sequence[str]) -> tuple[str, str]:
    """(sentence, encoder input) of ``template`` for a name and its descriptor's three partials."""
    fields = {"name": name, "partial_1": partials[0], "partial_2": partials[1], "partial_3": partials[2]}
    return template.sentence.format(**fields), template.encoder_input.format(**fields)


def sentence_id(name: Name, descriptor: Descriptor, template: int) -> str:
    """Stable sample id ``{group}:{name_index}:{descriptor_index}:t{template}``."""
    return f"{name.group}:{name.index}:{descriptor.index}:t{template}"


def select(
    names: list[Name],
    descriptors: list[Descriptor],
    groups: Iterable[str] | None = None,
    descriptor_filter: Iterable[str | int] | None = None,
    subset: str | None = None,
) -> tuple[list[Name], list[Descriptor]]:
    """Restrict names to ``groups`` ("ARAB_F", or an ethnicity "ARAB" for both genders) and descriptors to
    ``descriptor_filter`` (descriptor strings or row indices) or to ``subset="gp"`` (Ghavami & Peplau)."""
    from stereoprobe import params as P  # unknown entries refused in one line, with the closest (issue 35.5)

    if groups is not None:
        known = sorted({n.group for n in names} | {n.ethnicity for n in names})
        wanted = set(P.known_names(groups, "groups", known, what="group") or [])  # case counts: ARAB_F, not arab_f
        names = [n for n in names if n.group in wanted or n.ethnicity in wanted]
    if subset is not None:
        P.choice(subset, "subset", ("gp",))  # "gp": the Ghavami & Peplau validation descriptors
        descriptors = [d for d in descriptors if d.target is not None]
    if descriptor_filter is not None:
        items = [descriptor_filter] if isinstance(descriptor_filter, (str, int)) else list(descriptor_filter)
        by_text = {d.descriptor: d for d in descriptors}
        by_idx = {d.index: d for d in descriptors}
        chosen = []
        for it in items:
            d = by_idx.get(it) if isinstance(it, int) else by_text.get(str(it))
            if d is None:  # the descriptor text or its row index
                P.unknown_entry("descriptors", it, descriptor_filter, list(by_text), what="descriptor")
            chosen.append(d)
        descriptors = chosen
    return names, descriptors


def check_descriptors(value: Any) -> list[str | int] | None:
    """The ``descriptors`` task parameter checked: a descriptor's text or its row index in the descriptor file
    (an integer from 0; ``-T descriptors=0``), or a list of them without repeats; None: every descriptor."""
    from stereoprobe import params as P

    if value is None:
        return None
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    requirement = "a descriptor's text or row index (an integer >= 0), or a list of them without repeats"
    ok = [isinstance(x, int) and not isinstance(x, bool) and x >= 0 or isinstance(x, str) and bool(x.strip())
          for x in items]
    if not items or not all(ok) or len(set(map(repr, items))) != len(items):
        P.fail("descriptors", value, requirement)
    return [x.strip() if isinstance(x, str) else x for x in items]


def iter_sentences(
    names: Sequence[Name], descriptors: Sequence[Descriptor], template_numbers: Iterable[int] = TEMPLATE_NUMBERS,
    spec: dict[int, Template] | None = None,
) -> Iterator[Sentence]:
    """Names x descriptors x templates (``spec``; None: stereoprobe's own), lazily, in the reference order
    (name, descriptor, template)."""
    spec = own_templates() if spec is None else spec
    tnums = [int(t) for t in template_numbers]
    bad = [t for t in tnums if t not in spec]
    if bad:
        raise ValueError(f"unknown template(s) {bad}; known: {sorted(spec)}")
    for n in names:
        for d in descriptors:
            for t in tnums:
                text, enc = render(spec[t], n.name, d.partials)
                yield Sentence(id=sentence_id(n, d, t), text=text, encoder_input=enc, template=t, name=n, descriptor=d)


def build_sentences(
    source: str | os.PathLike[str] = "bundled",
    faithful: bool = False,
    groups: Iterable[str] | None = None,
    descriptors: Iterable[str | int] | None = None,
    templates: Iterable[int] | None = None,
    subset: str | None = None,
    verify: bool = True,
    template_wording: str | None = None,
) -> Iterator[Sentence]:
    """The GlobalBias sentence set for a source, lazily (876,000 sentences for ``source="upstream",
    faithful=True``). ``template_wording``: "upstream" (default, except for ``source="bundled"``) or
    "stereoprobe" (:func:`stereoprobe.globalbias.templates.template_set`)."""
    names, descs = select(
        load_names(source, faithful, verify), load_descriptors(source, faithful, verify), groups, descriptors, subset
    )
    spec = template_set(template_wording, source, verify)
    return iter_sentences(names, descs, templates or TEMPLATE_NUMBERS, spec)


@cache
def validation_groups() -> tuple[dict[str, str], frozenset[str]]:
    """(ethnicity -> Ghavami & Peplau target group, excluded targets) from ``validation_groups.yaml``."""
    raw = yaml.safe_load(dataset_file("globalbias", "validation_groups.yaml").read_text(encoding="utf-8"))
    return dict(raw["ethnicity_to_target"]), frozenset(raw.get("excluded_targets", []))
