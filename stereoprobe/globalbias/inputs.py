"""Read GlobalBias results into one long table (one row per sentence, or per group x descriptor x template).

Accepted inputs (files or folders, mixed), read through the shared input layer :mod:`stereoprobe.inputs`
(one record per model x task x sample id x epoch across ALL files: an ``eval-retry`` log supersedes the
interrupted original; ``inspect eval-set`` index files are skipped; error samples are counted, never read):

- inspect eval logs (``.eval`` / ``.json``) of the ``globalbias`` task: grouped samples (scorer
  ``text_logprobs``: per-sentence ``sum_logprob, n_tokens, n_bytes`` in the score metadata) or per-sentence
  samples (scorer ``sentence_logprob``);
- lm-evaluation-harness ``--log_samples`` output (``samples_globalbias*.jsonl``) of the shipped
  ``globalbias`` task (log-likelihood per sentence; token counts need a tokenizer, else use
  ``measure="byte"``);
- CSV or Parquet files with columns ``group, descriptor, template`` and ``ppl`` or ``apx`` (optional
  ``name, axis, ethnicity, gender, target, model``), or the upstream wide layout (``Group`` as "('ETH', 'G')",
  ``firstname``, ``perplexity_1..3`` or ``apx_1..3``; the descriptor file's ``group`` column is then the
  Ghavami & Peplau target).

Output columns: ``model, group, ethnicity, gender, name, descriptor, axis, target, template`` and ``ppl``
(token or byte perplexity) or ``apx``; plus ``source`` (file).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe import inputs as I
from stereoprobe.console import progress
from stereoprobe.errors import InputError
from stereoprobe.globalbias.apx import byte_perplexity, token_perplexity
from stereoprobe.globalbias.contract import GROUP_SCORER, SENTENCE_COLUMNS, SENTENCE_SCORER, TASK
from stereoprobe.likelihood import N_BYTES, N_TOKENS, SUM_LOGPROB, TEXTS_METADATA, read_results

COLUMNS = SENTENCE_COLUMNS
TABLE_SUFFIXES = (".csv", ".parquet")
MEASURES = ("token", "byte")


@dataclass
class LoadReport:
    """What was read: files, scored sentence rows, unscored sentences (with up to 20 ids), the input layer's
    statistics (superseded copies, error samples) and the console line."""

    files: list[str] = field(default_factory=list)
    sentences: int = 0
    unscored: int = 0
    unscored_ids: list[str] = field(default_factory=list)
    log_stats: I.ReadStats | None = None
    lm_eval_stats: I.ReadStats | None = None

    def note_unscored(self, ident: str) -> None:
        self.unscored += 1
        if len(self.unscored_ids) < 20:
            self.unscored_ids.append(ident)

    def summary(self) -> str:
        parts = [f"{self.sentences} scored rows from {len(self.files)} file(s)"]
        if self.log_stats is not None and self.log_stats.files:
            parts.append(f"logs: {self.log_stats.summary()}")
        if self.unscored:
            parts.append(f"{self.unscored} sentence(s) without log-probabilities left out")
        return "; ".join(parts)


def _split_group(g: str) -> tuple[str, str, str]:
    """'ARAB_F' or "('ARAB', 'F')" -> ('ARAB_F', 'ARAB', 'F')."""
    g = str(g).strip()
    if g.startswith("("):
        try:
            eth, gen = ast.literal_eval(g)
        except (ValueError, SyntaxError):
            raise InputError(f"unreadable group {g!r} (expected \"('ETHNICITY', 'F')\")") from None
        return f"{eth}_{gen}", str(eth), str(gen)
    m = re.fullmatch(r"(.+)_([FM])", g)
    return (g, m.group(1), m.group(2)) if m else (g, g, "")


def _ppl(sum_lp: float, n_tokens: float, n_bytes: float, measure: str) -> float:
    if measure == "byte":
        return float(byte_perplexity(sum_lp, n_bytes))
    return float(token_perplexity(sum_lp, n_tokens))


def _partition(inputs: Iterable[str | Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """(log inputs, lm-eval inputs, tables): explicit files by kind, folders searched for all three."""
    logs: list[Path] = []
    lm_eval: list[Path] = []
    tables: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found = I.find_logs([p])
            logs.extend(found)
            lm_eval.extend(I.find_lm_eval_samples([p], TASK))
            tables.extend(q for q in sorted(p.rglob("*")) if q.suffix in TABLE_SUFFIXES and q.is_file()
                          and not any(part.startswith(".") for part in q.relative_to(p).parts))
        elif p.is_file():
            if p.suffix in TABLE_SUFFIXES:
                tables.append(p)
            elif p.suffix == ".jsonl":
                lm_eval.extend(I.find_lm_eval_samples([p]))
            else:
                logs.extend(I.find_logs([p]))
        else:
            raise InputError(f"{p}: no such input file or folder")
    if not (logs or lm_eval or tables):
        raise InputError(f"no GlobalBias inputs (.eval/.json logs, lm-eval samples .jsonl, .csv/.parquet) in "
                         f"{', '.join(map(str, inputs))}")
    return logs, lm_eval, tables


def _row(model: str, md: dict[str, Any], ppl: float) -> tuple:
    return (model, md["group"], md["ethnicity"], md["gender"], f"{md['name_index']}:{md['name']}",
            md["descriptor"], md.get("axis"), md.get("target"), int(md["template"]), ppl)


def _sample_rows(info: I.LogInfo, s: dict[str, Any], measure: str, rep: LoadReport) -> Iterator[tuple]:
    scores = s.get("scores") or {}
    md = s.get("metadata") or {}
    where = f"{info.path.name}:{s.get('id')}"
    try:
        if GROUP_SCORER in scores:
            items = {str(it["id"]): it for it in md[TEXTS_METADATA]}
            descriptors = md.get("descriptors") or {}
            for r in read_results(scores[GROUP_SCORER]):
                if not r.ok:
                    rep.note_unscored(f"{where}/{r.id}")
                    continue
                it = items[r.id]
                fields = {**md, **descriptors.get(str(it.get("descriptor_index")), {}), **it}
                yield _row(info.model, fields, _ppl(r.sum_logprob, r.n_tokens, r.n_bytes, measure))  # type: ignore[arg-type]
            return
        sc = scores.get(SENTENCE_SCORER)
        v = sc.get("value") if isinstance(sc, dict) else None
        if not (isinstance(v, dict) and v.get(N_TOKENS) is not None and v[N_TOKENS] == v[N_TOKENS]):
            rep.note_unscored(where)
            return
        yield _row(info.model, md, _ppl(v[SUM_LOGPROB], v[N_TOKENS], v[N_BYTES], measure))
    except KeyError as e:
        raise InputError(f"{where}: the sample lacks the field {e} (not a stereoprobe globalbias log?)") from None


def _from_logs(paths: list[Path], measure: str, rep: LoadReport) -> pd.DataFrame:
    stats = I.ReadStats()
    samples = progress(I.iter_samples(paths, task=TASK, stats=stats), description="GlobalBias: reading logs")
    rows = [row for info, s in samples for row in _sample_rows(info, s, measure, rep)]
    rep.log_stats = stats
    rep.files.extend(str(p) for p in stats.files)
    df = pd.DataFrame(rows, columns=COLUMNS + ["ppl"])
    df["source"] = "inspect"
    return df


def _from_lm_eval(paths: list[Path], measure: str, tokenizer: object, rep: LoadReport) -> pd.DataFrame:
    stats = I.ReadStats()
    rows = []
    for rec in I.iter_lm_eval_samples(paths, TASK, stats=stats):
        lls = rec.loglikelihoods
        ll = lls[0] if lls else float("nan")
        doc = rec.doc
        if not math.isfinite(ll):
            rep.note_unscored(f"{rec.path.name}:{rec.doc_id}")
            continue
        try:
            text = doc["text"]
            if measure == "token":
                if tokenizer is None:
                    raise InputError(f"{rec.path}: lm-eval samples carry no token counts; pass a tokenizer "
                                     "(--tokenizer) or use the byte-normalised measure (--measure byte)")
                n_tokens = float(len(tokenizer(text, add_special_tokens=False)["input_ids"]))  # type: ignore[operator]
            else:
                n_tokens = float("nan")
            rows.append(_row(rec.model, doc, _ppl(ll, n_tokens, len(text.encode("utf-8")), measure)))
        except KeyError as e:
            raise InputError(f"{rec.path}: line {rec.line}: not an lm-eval globalbias sample (no {e})") from None
    rep.lm_eval_stats = stats
    rep.files.extend(str(p) for p in stats.files)
    df = pd.DataFrame(rows, columns=COLUMNS + ["ppl"])
    df["source"] = "lm-eval"
    return df


_WIDE = re.compile(r"^(perplexity|ppl|apx)_([123])$")


def _from_table(path: Path) -> pd.DataFrame:
    df = I.read_table(path, what="GlobalBias table")
    df = df.drop(columns=[c for c in df.columns if str(c).startswith("Unnamed")])
    if "Group" in df.columns:  # upstream layout: Group = name group, group = G&P target
        df = df.rename(columns={"group": "target"}).rename(columns={"Group": "group"})
    df = df.rename(columns={"firstname": "name", "Ethnicity": "ethnicity", "Gender": "gender",
                            "perplexity": "ppl"})
    wide = [c for c in df.columns if _WIDE.match(str(c))]
    if wide:
        kinds = {_WIDE.match(c).group(1) for c in wide}  # type: ignore[union-attr]
        if len(kinds) > 1:
            raise InputError(f"{path}: mixes {sorted(kinds)} columns; give perplexities or APX, not both")
        kind = "apx" if kinds == {"apx"} else "ppl"
        keep = [c for c in df.columns if c not in wide and not str(c).endswith("_norm")
                and c not in ("average_norm", "template_number")]
        df = df[keep + wide].melt(id_vars=keep, value_vars=wide, var_name="template", value_name=kind)
        df["template"] = df["template"].str[-1].astype(int)
    for col in ("group", "descriptor", "template"):
        if col not in df.columns:
            raise InputError(f"{path}: missing column {col!r} (need group, descriptor, template and ppl or apx)")
    if ("ppl" in df.columns) == ("apx" in df.columns):
        raise InputError(f"{path}: need exactly one of the columns 'ppl' and 'apx'")
    try:
        parts = df["group"].map(_split_group)
    except InputError as e:
        raise InputError(f"{path}: {e}") from None
    df["group"] = parts.str[0]
    if "ethnicity" not in df.columns:
        df["ethnicity"] = parts.str[1]
    if "gender" not in df.columns:
        df["gender"] = parts.str[2]
    for col in ("model", "name", "axis", "target"):
        if col not in df.columns:
            df[col] = path.stem if col == "model" else None
    if df["name"].notna().any() and df["name"].isna().any():
        raise InputError(f"{path}: column 'name' is partly empty")
    value = "apx" if "apx" in df.columns else "ppl"
    num = pd.to_numeric(df[value], errors="coerce")
    bad = ~np.isfinite(num) | (num <= 0)
    if bad.any():
        raise InputError(f"{path}: non-numeric, missing or non-positive {value!r} at row(s) "
                         f"{list(df.index[bad][:5] + 2)}")
    tmpl = pd.to_numeric(df["template"], errors="coerce")
    if tmpl.isna().any() or (tmpl != tmpl.round()).any():
        raise InputError(f"{path}: non-integer 'template' at row(s) {list(df.index[tmpl.isna()][:5] + 2)}")
    df[value] = num.astype(float)
    df["template"] = tmpl.astype(int)
    df = df.astype({"axis": object, "target": object})
    df["axis"] = df["axis"].where(df["axis"].notna(), None)
    df["target"] = df["target"].where(df["target"].notna(), None)
    out = df[COLUMNS + [value]].copy()
    out["source"] = path.name
    return out


def load(inputs: Iterable[str | Path], measure: str = "token", tokenizer: object = None) -> tuple[pd.DataFrame, LoadReport]:
    """Load every input into one long DataFrame (see module docstring) and a report of what was read."""
    if measure not in MEASURES:
        raise InputError(f"unknown measure {measure!r}; use 'token' or 'byte'")
    inputs = list(inputs)
    logs, lm_eval, tables = _partition(inputs)
    rep = LoadReport()
    frames = []
    if logs:
        frames.append(_from_logs(logs, measure, rep))
    if lm_eval:
        frames.append(_from_lm_eval(lm_eval, measure, tokenizer, rep))
    for p in tables:
        if measure == "byte":
            raise InputError(f"{p}: CSV inputs hold perplexities already; --measure byte needs logs")
        frames.append(_from_table(p))
        rep.files.append(str(p))
    out = pd.concat(frames, ignore_index=True)
    if out.empty:
        raise InputError(f"no scored GlobalBias sentence in {', '.join(map(str, inputs))}"
                         + (f" ({rep.unscored} without log-probabilities)" if rep.unscored else ""))
    kinds = {c for c in ("ppl", "apx") if c in out.columns and out[c].notna().any()}
    if len(kinds) > 1:
        raise InputError("inputs mix perplexities and APX values; score them separately")
    rep.sentences = len(out)
    return out, rep
