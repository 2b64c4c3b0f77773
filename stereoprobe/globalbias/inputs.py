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
from stereoprobe.errors import InputError
from stereoprobe.globalbias.apx import byte_perplexity, token_perplexity
from stereoprobe.globalbias import table_checks as TC
from stereoprobe.globalbias.completeness import ExpectedCells
from stereoprobe.globalbias.contract import GROUP_SCORER, SENTENCE_COLUMNS, SENTENCE_SCORER, TASK_LIKELIHOOD, TEMPLATES
from stereoprobe.likelihood_scores import IDS, N_BYTES, N_TOKENS, SUM_LOGPROB, TEXTS_METADATA, read_results
from stereoprobe.model_labels import nfc

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
    #: the cells the logs' runs were asked to score (:class:`~stereoprobe.globalbias.completeness.ExpectedCells`
    #: frame; None without logs): pass it to ``split_complete``
    expected: pd.DataFrame | None = None
    missing_samples: dict[str, list[str]] = field(default_factory=dict)  # model -> sample ids never read
    duplicates: int = 0  # identical repeated rows dropped
    #: notices on what a table input held that the reader left aside (ignored columns, a model missing groups)
    notes: list[str] = field(default_factory=list)

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
        n_missing = sum(len(v) for v in self.missing_samples.values())
        if n_missing:
            first = next(iter(self.missing_samples.values()))[:3]
            parts.append(f"{n_missing} sample(s) of the runs' datasets never scored (e.g. {', '.join(first)})")
        if self.duplicates:
            parts.append(f"{self.duplicates} repeated row(s) dropped")
        return "; ".join(parts + self.notes)


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


def _partition(inputs: Iterable[str | Path]) -> I.Partition:
    """The inputs split once by the input layer (logs, lm-eval samples of the globalbias task, tables)."""
    return I.partition(inputs, ("logs", "lm_eval", "tables"), what="GlobalBias inputs", lm_eval_task=TASK_LIKELIHOOD)


def _row(model: str, md: dict[str, Any], *values: Any) -> tuple:
    """The sentence's :data:`COLUMNS` from its metadata (types checked), followed by ``values``."""
    for key in ("group", "ethnicity", "gender", "name", "descriptor"):
        if not isinstance(md[key], str):
            raise TypeError(f"field {key!r} is {md[key]!r}, expected text")
    if isinstance(md["name_index"], bool) or not isinstance(md["name_index"], int):
        raise TypeError(f"field 'name_index' is {md['name_index']!r}, expected an integer")
    return (model, md["group"], md["ethnicity"], md["gender"], f"{md['name_index']}:{md['name']}",
            md["descriptor"], md.get("axis"), md.get("target"), int(md["template"]), *values)


def _perplexities(sum_lp: np.ndarray, n_tokens: np.ndarray, n_bytes: np.ndarray, measure: str) -> np.ndarray:
    """:func:`_ppl` of every sentence at once (the same ufuncs element by element: the same numbers)."""
    if measure == "byte":
        return byte_perplexity(sum_lp, n_bytes)
    return token_perplexity(sum_lp, n_tokens)


def _templates(info: I.LogInfo) -> set[int]:
    """The templates the run was asked for (``-T templates``, default all of :data:`TEMPLATES`)."""
    t = info.task_args.get("templates")
    if t is None:
        return set(TEMPLATES)
    values = t if isinstance(t, list) else str(t).split(",") if isinstance(t, str) else [t]
    try:
        return {int(v) for v in values}
    except (TypeError, ValueError):
        raise InputError(f"{info.path}: task argument 'templates' is {t!r}, expected template numbers") from None


def _check_logprob(where: str, value: Any) -> None:
    """:class:`InputError` for a log-probability that is not a finite number <= 0 (NaN and -inf included: a
    NaN perplexity would shift every bias score of its descriptor without a word)."""
    if value is None:
        return
    if not math.isfinite(float(value)):
        raise InputError(f"{where}: field 'sum_logprob' is {float(value)!r}, not a finite number (the scorer "
                         "records a text it could not score as null, never as NaN or infinity)")
    if float(value) > 0:
        raise InputError(f"{where}: field 'sum_logprob' is {float(value):g} > 0 (a log-probability is at most 0)")


def _grouped_score(score: dict[str, Any], where: str) -> dict[str, Any]:
    """The ``text_logprobs`` score with its aligned lists checked: lists, numbers; lists shorter than the ids
    (a truncated score) are padded as "not scored", so their sentences count as missing."""
    meta = score.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get(IDS), list):
        raise InputError(f"{where}: score {GROUP_SCORER!r} has no list of ids in its metadata (field {IDS!r})")
    n = len(meta[IDS])
    meta = dict(meta)
    for key, fill in ((SUM_LOGPROB, None), (N_TOKENS, None), (N_BYTES, 0)):
        values = meta.get(key)
        if not isinstance(values, list):
            raise InputError(f"{where}: score {GROUP_SCORER!r} field {key!r} is not a list")
        bad = next((v for v in values if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)))),
                   None)
        if bad is not None:
            raise InputError(f"{where}: score {GROUP_SCORER!r} field {key!r} holds {bad!r}, expected numbers")
        meta[key] = values[:n] + [fill] * (n - len(values))
    for v in meta[SUM_LOGPROB]:
        _check_logprob(where, v)
    return {**score, "metadata": meta}


def _sample_rows(info: I.LogInfo, s: dict[str, Any], measure: str, rep: LoadReport, expected: ExpectedCells,
                 templates: set[int]) -> Iterator[tuple]:
    scores = s.get("scores") or {}
    md = s.get("metadata") or {}
    where = f"{info.path}: sample {s.get('id')!r}"
    try:
        if GROUP_SCORER in scores:
            texts = md[TEXTS_METADATA]
            if not isinstance(texts, list) or not all(isinstance(it, dict) for it in texts):
                raise InputError(f"{where}: metadata field {TEXTS_METADATA!r} is not a list of objects")
            items = {str(it["id"]): it for it in texts}
            descriptors = md.get("descriptors") or {}
            if not isinstance(descriptors, dict):
                raise InputError(f"{where}: metadata field 'descriptors' is not an object")
            if md.get("template") not in templates:
                raise InputError(f"{where}: metadata field 'template' is {md.get('template')!r}, not one of the "
                                 f"run's templates {sorted(templates)}")
            expected.sample(info.model, s["id"], md, texts)
            for r in read_results(_grouped_score(scores[GROUP_SCORER], where)):
                if not r.ok:
                    rep.note_unscored(f"{info.path.name}:{s.get('id')}/{r.id}")
                    continue
                if r.id not in items:
                    raise InputError(f"{where}: score id {r.id!r} is not among the sample's texts")
                it = items[r.id]
                fields = {**md, **descriptors.get(str(it.get("descriptor_index")), {}), **it}
                yield _row(info.model, fields, float(r.sum_logprob), float(r.n_tokens), float(r.n_bytes))  # type: ignore[arg-type]
            return
        if md.get("template") not in templates:
            raise InputError(f"{where}: metadata field 'template' is {md.get('template')!r}, not one of the run's "
                             f"templates {sorted(templates)}")
        expected.sample(info.model, s["id"], {k: v for k, v in md.items() if k != "descriptors"}, [md])
        sc = scores.get(SENTENCE_SCORER)
        v = sc.get("value") if isinstance(sc, dict) else None
        if not (isinstance(v, dict) and v.get(N_TOKENS) is not None and v[N_TOKENS] == v[N_TOKENS]):
            rep.note_unscored(f"{info.path.name}:{s.get('id')}")
            return
        _check_logprob(where, v[SUM_LOGPROB])
        n_bytes = v[N_BYTES]
        yield _row(info.model, md, float(v[SUM_LOGPROB]), float(v[N_TOKENS]),
                   math.nan if n_bytes is None else float(n_bytes))
    except InputError:
        raise
    except KeyError as e:
        raise InputError(f"{where}: the sample lacks the field {e} (not a stereoprobe globalbias log?)") from None
    except (TypeError, ValueError) as e:
        raise InputError(f"{where}: a field has the wrong type ({' '.join(str(e).split())[:120]})") from None


def _from_logs(paths: list[Path], measure: str, rep: LoadReport, progress: I.Progress) -> pd.DataFrame:
    stats = I.ReadStats()
    expected = ExpectedCells()
    rows: list[tuple] = []
    samples = I.iter_samples(paths, task=TASK_LIKELIHOOD, stats=stats, string_ids=True)
    seen_runs: set[Path] = set()
    for info, s in progress(samples, "GlobalBias: reading logs"):
        if info.path not in seen_runs:
            seen_runs.add(info.path)
            expected.run(info.model, info.dataset.get("sample_ids") or [])
        rows += _sample_rows(info, s, measure, rep, expected, _templates(info))
    asked: dict[str, tuple[set[int], list[str]]] = {}  # model -> the run's templates and requested groups
    for info_path in stats.files:
        from stereoprobe.logs import read_header

        h = read_header(info_path)
        if info_path not in seen_runs:  # logs whose samples were all superseded or errored
            expected.run(h.model, h.dataset.get("sample_ids") or [])
        groups = h.task_args.get("groups")
        groups = groups.split(",") if isinstance(groups, str) else groups if isinstance(groups, list) else []
        templates, names = asked.setdefault(h.model, (set(), []))
        templates.update(_templates(h))
        names += [str(g) for g in groups]
    for model, (templates, names) in asked.items():  # a --limit half, a group missing whole: incomplete
        expected.complete_run(model, templates, names)
    rep.log_stats = stats
    rep.files.extend(str(p) for p in stats.files)
    rep.expected = expected.frame()
    rep.missing_samples = expected.missing_samples()
    raw = ["sum_logprob", "n_tokens", "n_bytes"]
    df = pd.DataFrame(rows, columns=COLUMNS + raw)
    df["ppl"] = _perplexities(*(df[c].to_numpy(dtype=float) for c in raw), measure)
    df = df.drop(columns=raw)
    df["source"] = "inspect"
    return df


def _from_lm_eval(paths: list[Path], measure: str, tokenizer: object, rep: LoadReport) -> pd.DataFrame:
    stats = I.ReadStats()
    rows = []
    for rec in I.iter_lm_eval_samples(paths, TASK_LIKELIHOOD, stats=stats):
        lls = rec.loglikelihoods
        ll = lls[0] if lls else float("nan")
        doc = rec.doc
        if not math.isfinite(ll):
            rep.note_unscored(f"{rec.path.name}:{rec.doc_id}")
            continue
        if ll > 0:
            raise InputError(f"{rec.path}: line {rec.line}: log-likelihood {ll:g} > 0 (a log-probability is at most 0)")
        try:
            text = doc["text"]
            if int(doc["template"]) not in TEMPLATES:
                raise InputError(f"{rec.path}: line {rec.line}: field 'template' is {doc['template']!r}, not one of "
                                 f"{list(TEMPLATES)}")
            if measure == "token":
                if tokenizer is None:
                    raise InputError(f"{rec.path}: lm-eval samples carry no token counts; pass a tokenizer "
                                     "(--tokenizer) or use the byte-normalised measure (--measure byte)")
                n_tokens = float(len(tokenizer(text, add_special_tokens=False)["input_ids"]))  # type: ignore[operator]
            else:
                n_tokens = float("nan")
            rows.append(_row(rec.model, doc, _ppl(ll, n_tokens, len(text.encode("utf-8")), measure)))
        except InputError:
            raise
        except KeyError as e:
            raise InputError(f"{rec.path}: line {rec.line}: not an lm-eval globalbias sample (no {e})") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise InputError(f"{rec.path}: line {rec.line}: a field of the document has the wrong type "
                             f"({' '.join(str(e).split())[:120]})") from None
    rep.lm_eval_stats = stats
    rep.files.extend(str(p) for p in stats.files)
    df = pd.DataFrame(rows, columns=COLUMNS + ["ppl"])
    df["source"] = "lm-eval"
    return df


_WIDE = re.compile(r"^(perplexity|ppl|apx)_([123])$")


def _from_table(path: Path, rep: LoadReport) -> pd.DataFrame:
    df = I.read_table(path, what="GlobalBias table")
    ignored = TC.ignored_columns(df.columns)
    if ignored:
        rep.notes.append(f"{path.name}: column(s) {', '.join(ignored)} not used")
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
        long_cols = [c for c in ("template", "ppl", "apx") if c in df.columns]
        if long_cols:  # one row per template AND per-template columns: which value is the row's is unclear
            raise InputError(f"{path}: mixes the wide layout (columns {', '.join(map(str, wide))}) with the long "
                             f"one (column(s) {', '.join(long_cols)}); give one row per template with 'template' "
                             f"and 'ppl' (or 'apx'), or one row per sentence with {kind}_1..{kind}_3, not both")
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
    df["model"] = df["model"].map(lambda v: nfc(v) if isinstance(v, str) else v)  # one label per model
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
    outside = ~tmpl.isin(TEMPLATES)
    if outside.any():
        raise InputError(f"{path}: column 'template' is not one of the templates {list(TEMPLATES)} at row(s) "
                         f"{list(df.index[outside][:5] + 2)} (values {sorted(set(tmpl[outside].astype(int)))[:5]})")
    df[value] = num.astype(float)
    df["template"] = tmpl.astype(int)
    df = df.astype({"axis": object, "target": object})
    df["axis"] = df["axis"].where(df["axis"].notna(), None)
    df["target"] = df["target"].where(df["target"].notna(), None)
    out = df[COLUMNS + [value]].copy()
    out["source"] = path.name
    return out


def _check_tables(out: pd.DataFrame, rep: LoadReport) -> pd.DataFrame:
    """The rows read from tables checked (:mod:`~stereoprobe.globalbias.table_checks`): two spellings of one
    group or descriptor, or a name in two groups, are refused; group and descriptor names lose surrounding
    spaces; a model missing groups is noted in ``rep``."""
    tables = ~out["source"].isin(["inspect", "lm-eval"])
    if not tables.any():
        return out
    TC.check_spellings(out[tables])
    TC.check_names(out[tables])
    for col in ("group", "descriptor"):
        out.loc[tables, col] = out.loc[tables, col].map(lambda v: v.strip() if isinstance(v, str) else v)
    rep.notes.extend(TC.missing_groups(out[tables]))
    return out


def _drop_repeats(out: pd.DataFrame, rep: LoadReport) -> pd.DataFrame:
    """Rows repeated for one model x group x name x descriptor x template: identical values are used once
    (counted in ``rep.duplicates``); different values are an :class:`InputError` naming the sources and
    the row."""
    key = ["model", "group", "name", "descriptor", "template"]
    value = "ppl" if "ppl" in out.columns and out["ppl"].notna().any() else "apx"
    # text keys (a missing name is "", never a float NaN); tolist(): the column's values at once, the same
    # Python scalars as iterating over it (which converts an Arrow string column one value at a time)
    keyed = pd.DataFrame({k: [str(v) if v is not None and v == v else "" for v in out[k].tolist()] for k in key},
                         index=out.index)
    dup = keyed.duplicated(keep=False)
    if not dup.any():
        return out
    sub = out[dup].assign(_k=keyed[dup].agg("|".join, axis=1))
    spread = sub.groupby("_k")[value].agg(lambda v: v.max() - v.min())
    conflict = spread[spread > 1e-9 * sub[value].abs().max()]
    if len(conflict):
        rows = sub[sub["_k"] == conflict.index[0]]
        r = rows.iloc[0]
        raise InputError(f"{', '.join(sorted(set(rows['source'].astype(str))))}: model {r['model']!r} group "
                         f"{r['group']!r} name {r['name']!r} descriptor {r['descriptor']!r} template {r['template']} "
                         f"appears {len(rows)} times with different {value!r} values "
                         f"({', '.join(f'{v:g}' for v in rows[value][:3])})")
    first = ~keyed.duplicated(keep="first")
    rep.duplicates += int((~first).sum())
    return out[first].reset_index(drop=True)


def read_sentences(inputs: Iterable[str | Path], measure: str = "token", tokenizer: object = None,
         progress: I.Progress = I.no_progress) -> tuple[pd.DataFrame, LoadReport]:
    """Load every input into one long DataFrame (see module docstring) and a report of what was read
    (``rep.expected``: the cells the logs' runs were asked to score, for
    :func:`~stereoprobe.globalbias.completeness.split_complete`). ``progress``: the input layer's callback."""
    if measure not in MEASURES:
        raise InputError(f"unknown measure {measure!r}; use 'token' or 'byte'")
    inputs = list(inputs)
    part = _partition(inputs)
    logs, lm_eval, tables = part.logs, part.lm_eval, part.tables
    rep = LoadReport()
    frames = []
    if logs:
        frames.append(_from_logs(logs, measure, rep, progress))
    if lm_eval:
        frames.append(_from_lm_eval(lm_eval, measure, tokenizer, rep))
    for p in tables:
        if measure == "byte":
            raise InputError(f"{p}: CSV inputs hold perplexities already; --measure byte needs logs")
        frames.append(_from_table(p, rep))
        rep.files.append(str(p))
    out = pd.concat(frames, ignore_index=True)
    if out.empty:
        raise InputError(f"no scored GlobalBias sentence in {', '.join(map(str, inputs))}"
                         + (f" ({rep.unscored} without log-probabilities)" if rep.unscored else ""))
    kinds = {c for c in ("ppl", "apx") if c in out.columns and out[c].notna().any()}
    if len(kinds) > 1:
        raise InputError("inputs mix perplexities and APX values; score them separately")
    out = _check_tables(out, rep)
    out = _drop_repeats(out, rep)
    rep.sentences = len(out)
    return out, rep
