"""The term-based baselines of the DBB paper, prompted generatively as the paper did (Pan et al., Findings of
EMNLP 2025, §4.1.1, Appendix D.1, Tables 1 and 6): BBQ (ambiguous and disambiguated contexts), CrowS-Pairs and
StereoSet (intra- and inter-sentence), each question asked with the paper's Table 11 prompt and the answer
letter parsed from a sampled reply.

Data at pinned commits (``stereoprobe/upstream_sources.yaml``; downloaded, verified, cached, or read from a
local copy): BBQ ``data/<Category>.jsonl`` and ``analysis_scripts/additional_metadata.csv`` (``target_loc``:
the answer that reflects the bias, already the non-target for non-negative questions; github.com/nyu-mll/BBQ),
CrowS-Pairs ``data/crows_pairs_anonymized.csv`` (github.com/nyu-mll/crows-pairs), StereoSet ``data/dev.json``
(github.com/moinnadeem/StereoSet: 2,106 intrasentence and 2,123 intersentence items, the paper's counts).

Each item becomes one question: its options in a fixed order (BBQ ``ans0..ans2``; StereoSet the order of the
file; CrowS-Pairs a seeded order per pair, since the file always lists the more stereotypical sentence first),
each with its *role* (BBQ ``target``/``other``/``unknown`` plus the correct label; CrowS-Pairs ``more``/``less``;
StereoSet ``stereotype``/``anti-stereotype``/``unrelated``), which the metrics
(:mod:`stereoprobe.dbb.baseline_metrics`) count.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stereoprobe.dbb.data import DBBDataError
from stereoprobe.errors import reason

BENCHMARKS = ("bbq", "crows_pairs", "stereoset")
BBQ_KEY, CROWS_KEY, STEREOSET_KEY = "BBQ", "CrowS-Pairs", "StereoSet"  # upstream_sources.yaml keys
BBQ_CATEGORIES = ("Age", "Disability_status", "Gender_identity", "Nationality", "Physical_appearance",
                  "Race_ethnicity", "Race_x_SES", "Race_x_gender", "Religion", "SES", "Sexual_orientation")
#: default BBQ categories: the paper gives 12,254 questions per context condition (§4.1.1) without naming its
#: categories; the single-attribute categories except SES are the natural subset of BBQ whose published sizes
#: (Parrish et al. 2022: 3,680 + 1,556 + 5,672 + 3,080 + 1,576 + 6,880 + 1,200 + 864 = 24,508) give exactly
#: 2 x 12,254 (the only other subset that does mixes Race_x_SES with a few single attributes)
BBQ_DEFAULT_CATEGORIES = ("Age", "Disability_status", "Gender_identity", "Nationality", "Physical_appearance",
                          "Race_ethnicity", "Religion", "Sexual_orientation")
BBQ_METADATA = "analysis_scripts/additional_metadata.csv"
CROWS_FILE = "data/crows_pairs_anonymized.csv"
STEREOSET_FILE = "data/dev.json"
STEREOSET_SPLITS = ("intrasentence", "intersentence")
LETTERS = "abc"


@dataclass(frozen=True)
class BaselineItem:
    """One question of a baseline benchmark: options in display order with their roles."""

    id: str
    benchmark: str
    subset: str  # BBQ: ambig/disambig; StereoSet: intrasentence/intersentence; CrowS-Pairs: its bias type
    context: str
    question: str
    options: tuple[str, ...]
    roles: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------------
# BBQ (Parrish et al., 2022)

def read_bbq_metadata(path: str | Path) -> dict[tuple[str, str], int]:
    """``(category, example_id) -> target_loc`` from BBQ's ``additional_metadata.csv`` (rows without a
    target_loc are left out, as BBQ's ``BBQ_calculate_bias_score.R`` drops them)."""
    path = Path(path)
    out: dict[tuple[str, str], int] = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"category", "example_id", "target_loc"} - set(reader.fieldnames or ())
        if missing:
            raise DBBDataError(f"{path}: not BBQ's additional metadata (missing {', '.join(sorted(missing))})")
        for line, r in enumerate(reader, start=2):
            loc = (r["target_loc"] or "").strip()
            if loc in ("", "NA"):
                continue
            try:
                out[(r["category"], str(r["example_id"]).strip())] = int(float(loc))
            except ValueError:
                raise DBBDataError(f"{path}: line {line}: target_loc {loc!r} is not an answer index") from None
    return out


def read_bbq(path: str | Path, target_locs: dict[tuple[str, str], int]) -> list[BaselineItem]:
    """BBQ items of one category file (``data/<Category>.jsonl``); items without a target_loc are left out."""
    path = Path(path)
    items = []
    with open(path, encoding="utf-8") as f:
        for line, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                r = json.loads(text)
                cat, eid = r["category"], str(r["example_id"])
                options = (r["ans0"], r["ans1"], r["ans2"])
                infos = [r["answer_info"][f"ans{k}"][1] for k in range(3)]
                label, cond = int(r["label"]), r["context_condition"]
                context, question, polarity = r["context"], r["question"], r["question_polarity"]
            except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as e:
                raise DBBDataError(f"{path}: line {line}: not a BBQ item ({reason(e)})") from None
            loc = target_locs.get((cat, eid))
            if loc is None:
                continue
            roles = tuple("unknown" if infos[k] == "unknown" else ("target" if k == loc else "other")
                          for k in range(3))
            items.append(BaselineItem(
                id=f"bbq:{cat}:{eid}", benchmark="bbq", subset=cond, context=context, question=question,
                options=options, roles=roles,
                metadata={"category": cat, "label": label, "polarity": polarity, "target_loc": loc}))
    return items


# ---------------------------------------------------------------------------------------------------------
# CrowS-Pairs (Nangia et al., 2020)

def _coin(seed: int, key: str) -> bool:
    return hashlib.sha256(f"dbb-baseline|{seed}|{key}".encode()).digest()[0] < 128


def read_crows_pairs(path: str | Path, seed: int = 0) -> list[BaselineItem]:
    """CrowS-Pairs pairs; the two sentences in a seeded order per pair (roles ``more``/``less``)."""
    path = Path(path)
    items = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"sent_more", "sent_less", "bias_type"} - set(reader.fieldnames or ())
        if missing:
            raise DBBDataError(f"{path}: not the CrowS-Pairs file (missing {', '.join(sorted(missing))})")
        for i, r in enumerate(reader):
            pid = (r.get("") or str(i)).strip() or str(i)
            more_first = _coin(seed, pid)
            opts, roles = ((r["sent_more"], r["sent_less"]), ("more", "less"))
            if not more_first:
                opts, roles = opts[::-1], roles[::-1]
            items.append(BaselineItem(
                id=f"crows_pairs:{pid}", benchmark="crows_pairs", subset=r["bias_type"], context="", question="",
                options=opts, roles=roles, metadata={"direction": r.get("stereo_antistereo", "")}))
    return items


# ---------------------------------------------------------------------------------------------------------
# StereoSet (Nadeem et al., 2021)

def read_stereoset(path: str | Path, splits: Sequence[str] = STEREOSET_SPLITS) -> list[BaselineItem]:
    """StereoSet items (``dev.json``: ``data.intrasentence`` / ``data.intersentence``), options in file order."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
        items = []
        for split in splits:
            for ex in data[split]:
                sents = ex["sentences"]
                items.append(BaselineItem(
                    id=f"stereoset:{split}:{ex['id']}", benchmark="stereoset", subset=split, context=ex["context"],
                    question="", options=tuple(s["sentence"] for s in sents),
                    roles=tuple(s["gold_label"] for s in sents),
                    metadata={"target": ex["target"], "bias_type": ex["bias_type"]}))
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise DBBDataError(f"{path}: not StereoSet's dev.json ({reason(e)})") from None
    for it in items:
        if sorted(it.roles) != ["anti-stereotype", "stereotype", "unrelated"]:
            raise DBBDataError(f"{path}: item {it.id}: gold labels {list(it.roles)}; expected one stereotype, "
                               "one anti-stereotype and one unrelated sentence")
    return items


# ---------------------------------------------------------------------------------------------------------
# a benchmark's items from the pinned files

def load_items(benchmark: str, source: str | Path = "upstream", categories: Sequence[str] | None = None,
               splits: Sequence[str] | None = None, seed: int = 0, verify: bool = True) -> list[BaselineItem]:
    """The items of ``benchmark`` from the pinned upstream files (``source="upstream"``: cache, download, or
    ``$STEREOPROBE_UPSTREAM_DIR/<key>/``) or a local folder holding the repositories' files (``<folder>/<key>/``
    or the repository's own layout). ``categories``: BBQ files (default :data:`BBQ_DEFAULT_CATEGORIES`);
    ``splits``: StereoSet splits (default both)."""
    from stereoprobe.upstream import fetch

    local = None if str(source) == "upstream" else Path(source)

    def get(key: str, rel: str) -> Path:
        return fetch(key, rel, local=local, verify=verify)

    if benchmark == "bbq":
        cats = list(categories or BBQ_DEFAULT_CATEGORIES)
        unknown = [c for c in cats if c not in BBQ_CATEGORIES]
        if unknown:
            raise DBBDataError(f"BBQ categories {unknown} unknown; expected some of {', '.join(BBQ_CATEGORIES)}")
        locs = read_bbq_metadata(get(BBQ_KEY, BBQ_METADATA))
        return [it for c in cats for it in read_bbq(get(BBQ_KEY, f"data/{c}.jsonl"), locs)]
    if benchmark == "crows_pairs":
        return read_crows_pairs(get(CROWS_KEY, CROWS_FILE), seed=seed)
    if benchmark == "stereoset":
        sp = list(splits or STEREOSET_SPLITS)
        bad = [x for x in sp if x not in STEREOSET_SPLITS]
        if bad:
            raise DBBDataError(f"StereoSet splits {bad} unknown; expected some of {', '.join(STEREOSET_SPLITS)}")
        return read_stereoset(get(STEREOSET_KEY, STEREOSET_FILE), sp)
    raise DBBDataError(f"benchmark {benchmark!r} unknown; expected one of {', '.join(BENCHMARKS)}")


# ---------------------------------------------------------------------------------------------------------
# prompt and answer

def prompt(item: BaselineItem, spec: dict[str, str]) -> str:
    """The question under the paper's Table 11 instruction (``spec``: ``instruction`` and the benchmark's
    ``template``, from ``datasets/dbb/prompts.yaml``)."""
    choices = "\n".join(f"{LETTERS[k]}) {o}" for k, o in enumerate(item.options))
    return spec["template"].format(instruction=spec["instruction"].strip(), context=item.context,
                                   question=item.question, choices=choices)




def _norm(s: str) -> str:
    return " ".join(s.lower().replace("’", "'").split()).strip(" .\"'")


def parse_answer(completion: str, options: Sequence[str]) -> int | None:
    """Index of the chosen option, or None (refused / not following the format).

    The first "<letter>)" (case-insensitive) among the options' letters; without one, a reply that is exactly one option sentence (ignoring case, spacing and end punctuation). Same
    rule as the DBB answers (:func:`stereoprobe.dbb.scoring.parse_choice`), for up to three options.
    """
    m = re.search(rf"(?<![A-Za-z])([{LETTERS[:len(options)]}])\s*\)", completion, re.IGNORECASE)
    if m:
        return LETTERS.index(m.group(1).lower())
    c = _norm(completion)
    hits = [k for k, o in enumerate(options) if c and c == _norm(o)]
    return hits[0] if len(hits) == 1 else None


__all__ = ["BBQ_CATEGORIES", "BBQ_DEFAULT_CATEGORIES", "BENCHMARKS", "BaselineItem", "load_items", "parse_answer",
           "prompt", "read_bbq", "read_bbq_metadata", "read_crows_pairs", "read_stereoset"]
