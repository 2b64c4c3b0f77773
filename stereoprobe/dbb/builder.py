"""DBB dataset builder helpers: inputs, reply parsing and export of the builder tasks' logs.

Pan et al. 2025, §3.1; upstream src/concept_analysis.py and src/q_generate.py
(github.com/JP-25/Description-based-Bias-Benchmark).

Step 1 (``dbb_build_concepts``): stereotype inputs (CrowS-Pairs, StereoSet, SOFA, BBQ or a CSV of
sentence pairs) → per source: quality filter → explanation → concept pair, or (SOFA) explanation → pair,
or (BBQ) pair → explanation; then grader refinement. Step 2 (``dbb_build_questions``): concept pairs →
context + option A → option B → grader → sentence variations for DBB-SG. The LLM calls live in
``solvers/dbb_build.py``; this module holds the pure parts. Exported files are read by the evaluation
tasks: ``-T source=DIR/templates.csv`` and ``-T variations=DIR/sg_variations.csv``.

**The named exception to** :func:`stereoprobe.tables.write_csv`: :func:`export` writes its CSVs with the
``csv`` module, every cell exactly as generated. They are not result tables but the evaluation tasks' input
format, the one a user also writes by hand, read cell for cell by :mod:`stereoprobe.dbb.data`; a quote put in
front of a cell starting with ``=``, ``+``, ``-`` or ``@`` would change the question the task asks. Open them
in a spreadsheet as text (or import them) rather than double-clicking.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from stereoprobe.errors import InputError
from stereoprobe.paths import dataset_file

CROWS_PAIRS = "data/crows_pairs_anonymized.csv"
BUILD_TASKS = ("dbb_build_concepts", "dbb_build_questions", "dbb_build_variations")


class BuilderParseError(ValueError):
    """A generator reply that does not have the requested form."""


def builder_prompts() -> dict[str, Any]:
    return yaml.safe_load(dataset_file("dbb", "builder_prompts.yaml").read_text(encoding="utf-8"))


GENERATIONS = ("upstream", "plain")


def generation_settings(name: str = "upstream") -> dict[str, Any]:
    """Generation settings of the builder's LLM calls (``datasets/dbb/builder_generation.yaml``): ``upstream``
    (system message, 2,048 tokens, frequency penalty 0.6, refusal filter, as upstream ``src/llm_utils.py``) or
    ``plain`` (no system message, 1,024 tokens, no penalty, no filter)."""
    if name not in GENERATIONS:
        raise InputError(f"generation must be one of {', '.join(GENERATIONS)}, got {name!r}")
    raw = yaml.safe_load(dataset_file("dbb", "builder_generation.yaml").read_text(encoding="utf-8"))
    return dict(raw[name])


def is_refusal(reply: str, phrases: list[list[str]]) -> bool:
    """True when ``reply`` contains every phrase of one entry of ``phrases`` (case-insensitive); upstream
    drops such replies as "response filtered" (a reply containing both "sorry" and "can't")."""
    low = reply.lower()
    return any(entry and all(p.lower() in low for p in entry) for entry in phrases)


# ---------------------------------------------------------------------------------------------------------
# inputs: the four sources of the paper (§3.1.1; upstream src/concept_analysis.py)


@dataclass(frozen=True)
class SourceRecord:
    """One input of ``dbb_build_concepts``. Sentence-pair sources (CrowS-Pairs, StereoSet, a CSV) fill
    ``sent_more``/``sent_less``; SOFA fills ``category, target, stereotype``; BBQ ``category, context,
    question``. ``prompt_variant`` routes the record to its prompt steps (``pairs``, ``sofa``, ``bbq``)."""

    id: str
    sent_more: str
    sent_less: str
    bias_type: str
    source: str
    target: str = ""
    category: str = ""
    stereotype: str = ""
    context: str = ""
    question: str = ""
    prompt_variant: str = "pairs"

    def fields(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "id"}


SentencePair = SourceRecord  # the earlier name; a sentence pair is a record with sent_more/sent_less


@dataclass(frozen=True)
class HubSource:
    repo: str
    revision: str | None  # pinned 40-hex commit; None = the user must pass revision=
    where: str  # where the pin was verified


# Pinned revisions. StereoSet and BBQ are script datasets on the Hub (current `datasets` refuses scripts), so
# both are read from the Hub's Parquet export (branch refs/convert/parquet) at a pinned commit of that branch.
HUB = {
    "stereoset": HubSource("McGill-NLP/stereoset", "3a2857c0a18e790df8f585a03eefa2c67286e37f",
                           "huggingface.co/datasets/McGill-NLP/stereoset/commits/3a2857c0…/intrasentence "
                           "(refs/convert/parquet, 'Delete old duckdb index files', 2024-03-07)"),
    "sofa": HubSource("copenlu/sofa", "b7c7539a51963ca1538a43f405f7c2fa777b5ead",
                      "huggingface.co/datasets/copenlu/sofa/commit/b7c7539… (README configs: default → train "
                      "→ SoFa.csv)"),
    "bbq": HubSource("heegyu/bbq", "da21e4bdbe74d6bed714ee80b4941c9c73958aea",
                     "huggingface.co/datasets/heegyu/bbq/commits/refs%2Fconvert%2Fparquet (head da21e4b, "
                     "2024-03-07)"),
}
STEREOSET_CONFIGS = {"stereoset_intra": "intrasentence", "stereoset_inter": "intersentence"}
BBQ_CATEGORIES = {"Age": "age", "Gender_identity": "gender", "Nationality": "nationality",
                  "Race_ethnicity": "race", "Race_x_gender": "raceXgender", "Religion": "religion",
                  "SES": "socioeconomic"}
SOURCES = ("crows_pairs", *STEREOSET_CONFIGS, "sofa", "bbq")
_COLUMNS = {"stereoset": ("id", "target", "bias_type", "context", "sentences"),
            "sofa": ("id", "category", "target", "stereotype"),
            "bbq": ("example_id", "category", "question_polarity", "context_condition", "context", "question")}
_STEREOSET_LABELS = {0: "anti-stereotype", 1: "stereotype", 2: "unrelated"}  # ClassLabel order on the Hub


def _pinned(key: str, revision: str | None) -> str:
    hub = HUB[key]
    rev = revision or hub.revision
    if not rev:
        raise InputError(f"{hub.repo}: no pinned revision is known; pass revision=<40-hex commit of {hub.repo}> "
                         f"(or local= an export of the dataset)")
    if not re.fullmatch(r"[0-9a-f]{40}", rev):
        raise InputError(f"{hub.repo}: revision must be a 40-hex commit, got {rev!r}")
    return rev


def _hub_rows(key: str, revision: str | None, config: str | None = None) -> list[dict[str, Any]]:
    """Rows of a pinned Hub dataset through ``datasets`` (needs the network or the HF cache)."""
    import datasets

    rev, repo = _pinned(key, revision), HUB[key].repo
    if key == "sofa":
        ds = datasets.load_dataset(repo, "default", split="train", revision=rev)
        return list(ds)
    if key == "stereoset":
        ds = datasets.load_dataset(repo, data_files=f"{config}/validation/*.parquet", split="train", revision=rev)
        return list(ds)
    rows = []
    for cat in BBQ_CATEGORIES:
        ds = datasets.load_dataset(repo, data_files=f"{cat}/test/*.parquet", split="train", revision=rev)
        rows += [{**r, "category": r.get("category") or cat} for r in ds]
    return rows


def _literal(v: Any) -> Any:
    """Nested fields of a CSV export (``sentences``) are JSON or Python literals."""
    if not isinstance(v, str):
        return v
    import ast
    import json

    try:
        return json.loads(v)
    except ValueError:
        return ast.literal_eval(v)


def read_table(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a local export: ``.csv``, ``.jsonl``/``.json`` (one object per line) or ``.parquet``."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"dataset file not found: {p}")
    suf = p.suffix.lower()
    if suf == ".csv":
        with open(p, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    if suf in (".jsonl", ".json"):
        import json

        with open(p, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    if suf == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(p).to_pylist()
    raise InputError(f"{p}: unsupported file type {suf!r} (use .csv, .jsonl or .parquet)")


def _check_columns(rows: list[dict[str, Any]], key: str, where: Any) -> None:
    missing = [c for c in _COLUMNS[key] if rows and c not in rows[0]]
    if missing:
        raise InputError(f"{where}: missing columns {', '.join(missing)} (a {HUB[key].repo} export needs "
                         f"{', '.join(_COLUMNS[key])})")


def _stereoset(rows: list[dict[str, Any]], source: str) -> list[SourceRecord]:
    """Every row: Sentence 1 = the stereotype sentence, Sentence 2 = the anti-stereotype sentence;
    intersentence prepends the context to both (as upstream)."""
    out = []
    for r in rows:
        s = _literal(r["sentences"])
        labels = [_STEREOSET_LABELS.get(x, x) if isinstance(x, int) else str(x) for x in s["gold_label"]]
        try:
            more, less = s["sentence"][labels.index("stereotype")], s["sentence"][labels.index("anti-stereotype")]
        except ValueError:
            raise InputError(f"{source} row {r['id']}: no stereotype/anti-stereotype sentence in {labels}") from None
        if source == "stereoset_inter":
            more, less = f"{r['context']} {more}", f"{r['context']} {less}"
        out.append(SourceRecord(f"{source}:{r['id']}", more, less, r["bias_type"], source, target=r["target"],
                                context=r["context"]))
    return out


def _sofa(rows: list[dict[str, Any]]) -> list[SourceRecord]:
    """One record per distinct stereotype (first row wins, as upstream); category "disabled" → "disability"."""
    out, seen, ids = [], set(), set()
    for i, r in enumerate(rows):
        st = str(r["stereotype"])
        if st in seen:
            continue
        seen.add(st)
        cat = "disability" if r["category"] == "disabled" else str(r["category"])
        rid = f"sofa:{r['id']}"
        if rid in ids:  # an id shared by two distinct stereotypes: keep both, distinguishable
            rid = f"{rid}#{i}"
        ids.add(rid)
        out.append(SourceRecord(rid, "", "", cat, "sofa", target=str(r["target"]), category=cat, stereotype=st,
                                prompt_variant="sofa"))
    return out


def _bbq(rows: list[dict[str, Any]]) -> list[SourceRecord]:
    """Negative questions with ambiguous contexts of the seven categories used by the paper; one record per
    (category, question) — identical questions give the same raw pair, which upstream drops as a duplicate
    pair (the export also drops repeated raw pairs, see ``export``)."""
    out, seen = [], set()
    for r in rows:
        cat = str(r["category"])
        if cat not in BBQ_CATEGORIES or r["question_polarity"] != "neg" or r["context_condition"] != "ambig":
            continue
        key = (cat, " ".join(str(r["question"]).split()).lower())
        if key in seen:
            continue
        seen.add(key)
        out.append(SourceRecord(f"bbq:{cat}:{r['example_id']}", "", "", BBQ_CATEGORIES[cat], "bbq", category=cat,
                                context=str(r["context"]), question=str(r["question"]), prompt_variant="bbq"))
    return out


def read_source_records(source: str = "crows_pairs", local: str | Path | None = None,
                        revision: str | None = None) -> list[SourceRecord]:
    """Inputs of ``dbb_build_concepts`` (paper §3.1.1; upstream src/concept_analysis.py).

    ``crows_pairs``: CrowS-Pairs as pinned in the upstream DBB repository (``local=`` a copy of that repository).
    ``stereoset_intra`` / ``stereoset_inter``: McGill-NLP/stereoset, validation, every row. ``sofa``: copenlu/sofa,
    train, one row per stereotype. ``bbq``: heegyu/bbq, seven categories, negative questions in ambiguous contexts,
    one row per question. These three are read with ``datasets`` at the pinned revision (``revision=`` overrides
    it), or from ``local=`` a CSV/JSONL/Parquet export with the dataset's own columns. Any other ``source`` is a
    CSV of sentence pairs (``sent_more, sent_less`` + optional ``id, bias_type``)."""
    if source == "crows_pairs":
        return _read_pairs_csv(source, local)
    if source in STEREOSET_CONFIGS or source in ("sofa", "bbq"):
        key = "stereoset" if source in STEREOSET_CONFIGS else source
        if local is not None:
            rows, where = read_table(local), local
        else:
            rows = _hub_rows(key, revision, STEREOSET_CONFIGS.get(source))
            where = f"{HUB[key].repo}@{revision or HUB[key].revision}"
        _check_columns(rows, key, where)
        out = _stereoset(rows, source) if key == "stereoset" else _sofa(rows) if key == "sofa" else _bbq(rows)
    else:
        if not Path(source).is_file():
            if Path(source).suffix.lower() == ".csv":
                raise FileNotFoundError(f"sentence-pair file not found: {source}")
            raise InputError(f"unknown source {source!r}: use one of {', '.join(SOURCES)} or a CSV path with "
                             f"sent_more, sent_less")
        return _read_pairs_csv(source, None)
    if len({p.id for p in out}) != len(out):
        raise InputError(f"{source}: duplicate ids")
    return out


def read_sentence_pairs(source: str = "crows_pairs", local: str | Path | None = None,
                        revision: str | None = None) -> list[SourceRecord]:
    """Alias of ``read_source_records`` (kept for callers of the CrowS-Pairs/CSV-only version)."""
    return read_source_records(source, local, revision)


def _read_pairs_csv(source: str, local: str | Path | None) -> list[SourceRecord]:
    """CrowS-Pairs (``crows_pairs``, pinned upstream copy: download/verify/cache, or ``local=`` a copy of the
    repository) or a CSV with ``sent_more, sent_less`` (+ optional ``id, bias_type``)."""
    if source == "crows_pairs":
        from stereoprobe.dbb.data import UPSTREAM_KEY
        from stereoprobe.upstream import UpstreamDataError, fetch

        try:
            path, prefix = fetch(UPSTREAM_KEY, CROWS_PAIRS, local=local), "crows"
        except UpstreamDataError as e:
            raise UpstreamDataError(f"{e}; or give your own sentence pairs (columns sent_more, sent_less) with "
                                    "-T source=pairs.csv") from e
    else:
        path, prefix = Path(source), Path(source).stem
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"sent_more", "sent_less"} - set(reader.fieldnames or ())
        if missing:
            raise InputError(f"{path}: missing columns {', '.join(sorted(missing))}")
        out = []
        for i, r in enumerate(reader):
            rid = (r.get("id") or r.get("") or str(i)).strip() or str(i)
            out.append(SourceRecord(f"{prefix}:{rid}", r["sent_more"], r["sent_less"], r.get("bias_type", ""),
                                    prefix))
    if len({p.id for p in out}) != len(out):
        raise InputError(f"{path}: duplicate ids")
    return out


def hub_key(source: str) -> str | None:
    """The :data:`HUB` entry of a builder source (``None`` for CrowS-Pairs and CSV inputs)."""
    return "stereoset" if source in STEREOSET_CONFIGS else source if source in ("sofa", "bbq") else None


def read_concepts(path: str | Path) -> list[dict[str, str]]:
    """Rows of a concepts CSV (``concept_id, concept_a, concept_b`` + optional ``explanation``)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"concept file not found: {p} (write it with `stereoprobe dbb-build-export`)")
    with open(p, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"concept_id", "concept_a", "concept_b"} - set(reader.fieldnames or ())
        if missing:
            raise InputError(f"{p}: missing columns {', '.join(sorted(missing))}")
        return list(reader)


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


def export(inputs: list[str], out_dir: str | Path, progress: Any = None) -> dict[str, Path]:
    """Write ``concepts.csv`` (from dbb_build_concepts logs: kept pairs) and ``templates.csv`` +
    ``sg_variations.csv`` (from dbb_build_questions logs: complete templates) under ``out_dir``; a
    ``build_log.csv`` lists every input with its status so nothing is dropped silently. BBQ concepts whose raw
    pair repeats an earlier one of the same category (in log order) get status ``duplicate_pair``.
    ``progress(iterable, description)`` wraps the samples read (the CLI's progress bar)."""
    from stereoprobe.inputs import ReadStats, iter_samples

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    concepts, templates, variations, log_rows = [], [], [], []
    bbq_pairs: set[tuple[str, str]] = set()
    stats = ReadStats()
    samples = iter_samples(inputs, task=BUILD_TASKS, stats=stats)
    for info, s in (progress(samples, "DBB builder: reading logs") if progress else samples):
        md = s.get("metadata") or {}
        status = "error" if s.get("error") else md.get("status", "unknown")
        if status == "ok" and info.task == "dbb_build_concepts" and md.get("prompt_variant") == "bbq":
            # BBQ is deduplicated by raw pair (upstream src/concept_analysis.py): a question that gave an
            # already seen raw pair is
            # dropped, as upstream; listed in build_log as duplicate_pair
            key = (str(md.get("category", "")), str(md.get("raw_pair", "")).strip().lower())
            status = "duplicate_pair" if key in bbq_pairs else status
            bbq_pairs.add(key)
        log_rows.append({"task": info.task, "id": s["id"], "status": status, "model_roles": str(info.model_roles)})
        if status != "ok":
            continue
        if info.task == "dbb_build_concepts":
            concepts.append({"concept_id": s["id"], "concept_a": md["concept_a"], "concept_b": md["concept_b"],
                             "explanation": md["explanation"], "source": md.get("bias_type", "")})
        elif info.task == "dbb_build_variations":
            for j, (va, vb) in enumerate(zip(md.get("variations_a", []), md.get("variations_b", [])), start=1):
                variations.append({"template_id": str(s["id"]), "variation": j, "option_a": va, "option_b": vb})
        else:
            tid = str(s["id"])
            templates.append({"template_id": tid, "context": md["context"], "option_a": md["option_a"],
                              "option_b": md["option_b"], "concept_a": md["concept_a"],
                              "concept_b": md["concept_b"], "explanation": md["explanation"],
                              "source": f"built:{md.get('generator', '')}"})
            for j, (va, vb) in enumerate(zip(md.get("variations_a", []), md.get("variations_b", [])), start=1):
                variations.append({"template_id": tid, "variation": j, "option_a": va, "option_b": vb})
    for err in stats.error_ids:  # samples that failed in every log ("<task>/<model>/<id>#<epoch>")
        task, rest = err.split("/", 1)
        sid = rest.rsplit("/", 1)[-1].rsplit("#", 1)[0]
        log_rows.append({"task": task, "id": sid, "status": "error", "model_roles": ""})
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
