"""DBB dataset builder helpers: inputs, reply parsing and export of the builder tasks' logs (spec §2).

Step 1 (``dbb_build_concepts``): stereotype sentence pairs → quality filter → explanation → concept pair
→ grader refinement. Step 2 (``dbb_build_questions``): concept pairs → context + option A → option B →
grader → sentence variations for DBB-SG. The LLM calls live in ``tasks/dbb_build.py``; this module holds the
pure parts. Exported files are read by the evaluation tasks: ``-T source=DIR/templates.csv`` and
``-T variations=DIR/sg_variations.csv``.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from stereoprobe.paths import dataset_file

CROWS_PAIRS = "data/crows_pairs_anonymized.csv"


class BuilderParseError(ValueError):
    """A generator reply that does not have the requested form."""


def builder_prompts() -> dict[str, Any]:
    return yaml.safe_load(dataset_file("dbb", "builder_prompts.yaml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class SentencePair:
    id: str
    sent_more: str
    sent_less: str
    bias_type: str
    source: str


def read_sentence_pairs(source: str = "crows_pairs", local: str | Path | None = None) -> list[SentencePair]:
    """Stereotype sentence pairs. ``crows_pairs``: CrowS-Pairs as pinned in the upstream DBB repository
    (``data/crows_pairs_anonymized.csv``; download/verify/cache, or ``local=`` a copy of the repository).
    A CSV path: columns ``sent_more, sent_less`` (+ optional ``id, bias_type``)."""
    if source == "crows_pairs":
        from stereoprobe.dbb.data import UPSTREAM_KEY
        from stereoprobe.upstream import fetch

        path, prefix = fetch(UPSTREAM_KEY, CROWS_PAIRS, local=local), "crows"
    else:
        path, prefix = Path(source), Path(source).stem
        if not path.is_file():
            raise FileNotFoundError(f"sentence-pair file not found: {path}")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"sent_more", "sent_less"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing columns {', '.join(sorted(missing))}")
        out = []
        for i, r in enumerate(reader):
            rid = (r.get("id") or r.get("") or str(i)).strip() or str(i)
            out.append(SentencePair(f"{prefix}:{rid}", r["sent_more"], r["sent_less"], r.get("bias_type", ""),
                                    prefix))
    if len({p.id for p in out}) != len(out):
        raise ValueError(f"{path}: duplicate ids")
    return out


def parse_filter(reply: str) -> bool:
    """True = keep the pair: the reply is the word False (the pair is not of low quality), as upstream."""
    return reply.strip().strip(".\"'` ").lower() == "false"


_PAIR = re.compile(r"^\s*(?:[-*]\s*)?([^;\n]{1,200});([^;\n]{1,200})\s*$", re.MULTILINE)


def parse_pair(reply: str) -> tuple[str, str]:
    """``concept 1;concept 2`` from the first line with exactly one semicolon."""
    m = _PAIR.search(reply)
    if not m:
        raise BuilderParseError(f"no '<concept 1>;<concept 2>' line in reply {reply[:200]!r}")
    a, b = (x.strip().strip("<>\"' ") for x in m.groups())
    if not a or not b:
        raise BuilderParseError(f"empty concept in reply {reply[:200]!r}")
    return a, b


def parse_labelled(reply: str, labels: list[str]) -> list[str]:
    """Sentences after ``Label:`` markers, in the given order (e.g. ["Sentence 1", "Sentence 2"])."""
    out = []
    for i, lab in enumerate(labels):
        nxt = "|".join(re.escape(x) for x in labels[i + 1:])
        pat = re.escape(lab) + r"\s*:\s*(.+?)" + (rf"(?=\s*(?:{nxt})\s*:|\Z)" if nxt else r"\s*\Z")
        m = re.search(pat, reply, re.DOTALL)
        if not m or not m.group(1).strip():
            raise BuilderParseError(f"no '{lab}:' in reply {reply[:200]!r}")
        out.append(" ".join(m.group(1).split()))
    return out


def parse_sentences(reply: str) -> list[str]:
    """Every ``Sentence: ...`` line."""
    return [" ".join(m.group(1).split()) for m in re.finditer(r"^\s*Sentence\s*:\s*(.+?)\s*$", reply, re.MULTILINE)]


# ---------------------------------------------------------------------------------------------------------
# export


def export(inputs: list[str], out_dir: str | Path) -> dict[str, Path]:
    """Write ``concepts.csv`` (from dbb_build_concepts logs: kept pairs) and ``templates.csv`` +
    ``sg_variations.csv`` (from dbb_build_questions logs: complete templates) under ``out_dir``; a
    ``build_log.csv`` lists every input with its status so nothing is dropped silently."""
    from stereoprobe.logs import iter_samples

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    concepts, templates, variations, log_rows = [], [], [], []
    for info, s in iter_samples(inputs):
        if info.task not in ("dbb_build_concepts", "dbb_build_questions"):
            continue
        md = s.get("metadata") or {}
        status = "error" if s.get("error") else md.get("status", "unknown")
        log_rows.append({"task": info.task, "id": s["id"], "status": status, "model_roles": str(info.model_roles)})
        if status != "ok":
            continue
        if info.task == "dbb_build_concepts":
            concepts.append({"concept_id": s["id"], "concept_a": md["concept_a"], "concept_b": md["concept_b"],
                             "explanation": md["explanation"], "source": md.get("bias_type", "")})
        else:
            tid = str(s["id"])
            templates.append({"template_id": tid, "context": md["context"], "option_a": md["option_a"],
                              "option_b": md["option_b"], "concept_a": md["concept_a"],
                              "concept_b": md["concept_b"], "explanation": md["explanation"],
                              "source": f"built:{md.get('generator', '')}"})
            for j, (va, vb) in enumerate(zip(md.get("variations_a", []), md.get("variations_b", [])), start=1):
                variations.append({"template_id": tid, "variation": j, "option_a": va, "option_b": vb})
    written = {}
    for name, rows, cols in [
        ("build_log", log_rows, ["task", "id", "status", "model_roles"]),
        ("concepts", concepts, ["concept_id", "concept_a", "concept_b", "explanation", "source"]),
        ("templates", templates, ["template_id", "context", "option_a", "option_b", "concept_a", "concept_b",
                                  "explanation", "source"]),
        ("sg_variations", variations, ["template_id", "variation", "option_a", "option_b"]),
    ]:
        if name != "build_log" and not rows:
            continue
        p = out / f"{name}.csv"
        with open(p, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
        written[name] = p
    return written


def register(sub: Any) -> None:
    p = sub.add_parser("dbb-build-export", help="DBB builder logs -> concepts.csv / templates.csv / sg_variations.csv")
    p.add_argument("inputs", nargs="+", help="eval logs of dbb_build_concepts / dbb_build_questions")
    p.add_argument("--out", required=True)
    p.set_defaults(func=_run)


def _run(args: Any) -> int:
    for name, path in export(args.inputs, args.out).items():
        print(f"{name}: {path}")
    return 0
