"""Read GlobalBias results into one long table (one row per sentence, or per group x descriptor x template).

Accepted inputs (files or folders, mixed):

- inspect eval logs (``.eval`` / ``.json``) of the ``globalbias`` task (scores ``sum_logprob, n_tokens,
  n_bytes``);
- lm-evaluation-harness ``--log_samples`` output (``samples_globalbias*.jsonl``) of the shipped
  ``globalbias`` task (log-likelihood per sentence; token counts need ``tokenizer=``, else use
  ``measure="byte"``);
- CSV files with columns ``group, descriptor, template`` and ``ppl`` or ``apx`` (optional ``name, axis,
  ethnicity, gender, target, model``), or the upstream wide layout (``Group`` as "('ETH', 'G')",
  ``firstname``, ``perplexity_1..3`` or ``apx_1..3``; the descriptor file's ``group`` column is then the
  Ghavami & Peplau target).

Output columns: ``model, group, ethnicity, gender, name, descriptor, axis, target, template`` and ``ppl``
(token or byte perplexity) or ``apx``; plus ``source`` (file).
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.globalbias.apx import byte_perplexity, token_perplexity

COLUMNS = ["model", "group", "ethnicity", "gender", "name", "descriptor", "axis", "target", "template"]


@dataclass
class LoadReport:
    files: list[str] = field(default_factory=list)
    sentences: int = 0
    unscored: int = 0
    unscored_ids: list[str] = field(default_factory=list)


def _expand(inputs: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            for q in sorted(p.rglob("*")):
                if not q.is_file():
                    continue
                if q.suffix == ".eval" or q.suffix == ".csv" or (
                    q.suffix == ".jsonl" and q.name.startswith("samples_") and "globalbias" in q.name
                ):
                    out.append(q)
                elif q.suffix == ".json" and _is_inspect_json(q):
                    out.append(q)
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such input file or folder: {p}")
    if not out:
        raise FileNotFoundError(f"no GlobalBias inputs (.eval/.json logs, lm-eval samples .jsonl, .csv) in {list(inputs)}")
    return out


def _is_inspect_json(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        head = f.read(4096)
    return '"eval"' in head and '"version"' in head and not path.name.startswith("results_")


def _split_group(g: str) -> tuple[str, str, str]:
    """'ARAB_F' or "('ARAB', 'F')" -> ('ARAB_F', 'ARAB', 'F')."""
    g = str(g).strip()
    if g.startswith("("):
        try:
            eth, gen = ast.literal_eval(g)
        except (ValueError, SyntaxError):
            raise ValueError(f"unreadable group {g!r}") from None
        return f"{eth}_{gen}", str(eth), str(gen)
    m = re.fullmatch(r"(.+)_([FM])", g)
    return (g, m.group(1), m.group(2)) if m else (g, g, "")


def _ppl(sum_lp: float, n_tokens: float, n_bytes: float, measure: str) -> float:
    if measure == "byte":
        return float(byte_perplexity(sum_lp, n_bytes))
    return float(token_perplexity(sum_lp, n_tokens))


def _from_inspect(path: Path, measure: str, rep: LoadReport) -> pd.DataFrame:
    from stereoprobe.logs import iter_raw_samples, read_header

    info = read_header(path)
    task, model = info.task, info.model
    if task != "globalbias":
        raise ValueError(f"{path}: a log of task {task!r}, not 'globalbias'")
    samples = iter_raw_samples(path)  # one zip open, plain JSON per sample: the 876,000-sentence set in minutes
    rows = []
    for s in samples:
        md = s.get("metadata") or {}
        sc = (s.get("scores") or {}).get("sentence_logprob")
        v = sc.get("value") if isinstance(sc, dict) else None
        ok = isinstance(v, dict) and v.get("n_tokens") is not None and v.get("n_tokens") == v.get("n_tokens")
        if s.get("error") or not ok:
            rep.unscored += 1
            rep.unscored_ids.append(f"{path.name}:{s.get('id')}")
            continue
        try:
            rows.append((
                model, md["group"], md["ethnicity"], md["gender"], f"{md['name_index']}:{md['name']}",
                md["descriptor"], md.get("axis"), md.get("target"), int(md["template"]),
                _ppl(v["sum_logprob"], v["n_tokens"], v["n_bytes"], measure), str(s.get("id")), s.get("epoch", 1),
            ))
        except KeyError as e:
            raise ValueError(f"{path}: sample {s.get('id')} lacks metadata field {e}") from None
    df = pd.DataFrame(rows, columns=COLUMNS + ["ppl", "id", "epoch"])
    return df.drop_duplicates(["model", "id", "epoch"]).drop(columns=["id", "epoch"])


def _first_number(x: object) -> float:
    while isinstance(x, (list, tuple)):
        if not x:
            raise ValueError("empty response")
        x = x[0]
    return float(x)


def _from_lm_eval(path: Path, measure: str, tokenizer: object, rep: LoadReport) -> pd.DataFrame:
    model = path.parent.name
    rows = []
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                doc = rec["doc"]
                ll = _first_number(rec.get("filtered_resps") or rec["resps"])
            except (json.JSONDecodeError, KeyError, ValueError, TypeError) as e:
                raise ValueError(f"{path}:{ln}: not an lm-eval globalbias sample ({e})") from None
            if not math.isfinite(ll):
                rep.unscored += 1
                rep.unscored_ids.append(f"{path.name}:{doc.get('id', ln)}")
                continue
            text = doc["text"]
            n_bytes = len(text.encode("utf-8"))
            if measure == "token":
                if tokenizer is None:
                    raise ValueError(
                        f"{path}: lm-eval samples carry no token counts; pass a tokenizer (--tokenizer) "
                        "or use the byte-normalised measure (--measure byte)"
                    )
                n_tokens = len(tokenizer(text, add_special_tokens=False)["input_ids"])
            else:
                n_tokens = float("nan")
            rows.append((model, doc["group"], doc["ethnicity"], doc["gender"], f"{doc['name_index']}:{doc['name']}",
                         doc["descriptor"], doc.get("axis") or None, doc.get("target") or None, int(doc["template"]),
                         _ppl(ll, n_tokens, n_bytes, measure)))
    return pd.DataFrame(rows, columns=COLUMNS + ["ppl"])


_WIDE = re.compile(r"^(perplexity|ppl|apx)_([123])$")


def _from_csv(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path)
    df = df.drop(columns=[c for c in df.columns if str(c).startswith("Unnamed")])
    if "Group" in df.columns:  # upstream layout: Group = name group, group = G&P target
        df = df.rename(columns={"group": "target"}).rename(columns={"Group": "group"})
    df = df.rename(columns={"firstname": "name", "Ethnicity": "ethnicity", "Gender": "gender",
                            "perplexity": "ppl"})
    wide = [c for c in df.columns if _WIDE.match(str(c))]
    if wide:
        kinds = {_WIDE.match(c).group(1) for c in wide}
        if len(kinds) > 1:
            raise ValueError(f"{path}: mixes {sorted(kinds)} columns; give perplexities or APX, not both")
        kind = "apx" if kinds == {"apx"} else "ppl"
        keep = [c for c in df.columns if c not in wide and not str(c).endswith("_norm")
                and c not in ("average_norm", "template_number")]
        df = df[keep + wide].melt(id_vars=keep, value_vars=wide, var_name="template", value_name=kind)
        df["template"] = df["template"].str[-1].astype(int)
    for col in ("group", "descriptor", "template"):
        if col not in df.columns:
            raise ValueError(f"{path}: missing column {col!r} (need group, descriptor, template and ppl or apx)")
    if ("ppl" in df.columns) == ("apx" in df.columns):
        raise ValueError(f"{path}: need exactly one of the columns 'ppl' and 'apx'")
    parts = df["group"].map(_split_group)
    df["group"] = parts.str[0]
    if "ethnicity" not in df.columns:
        df["ethnicity"] = parts.str[1]
    if "gender" not in df.columns:
        df["gender"] = parts.str[2]
    for col in ("model", "name", "axis", "target"):
        if col not in df.columns:
            df[col] = path.stem if col == "model" else None
    if df["name"].notna().any() and df["name"].isna().any():
        raise ValueError(f"{path}: column 'name' is partly empty")
    value = "apx" if "apx" in df.columns else "ppl"
    bad = ~np.isfinite(pd.to_numeric(df[value], errors="coerce"))
    if bad.any():
        raise ValueError(f"{path}: non-numeric or missing {value!r} at row(s) {list(df.index[bad][:5] + 2)}")
    df[value] = df[value].astype(float)
    df["template"] = df["template"].astype(int)
    df = df.astype({"axis": object, "target": object})
    df["axis"] = df["axis"].where(df["axis"].notna(), None)
    df["target"] = df["target"].where(df["target"].notna(), None)
    return df[COLUMNS + [value]]


def load(inputs: Iterable[str | Path], measure: str = "token", tokenizer: object = None) -> tuple[pd.DataFrame, LoadReport]:
    """Load every input into one long DataFrame (see module docstring) and a report of what was read."""
    if measure not in ("token", "byte"):
        raise ValueError(f"unknown measure {measure!r}; use 'token' or 'byte'")
    rep = LoadReport()
    frames = []
    for p in _expand(inputs):
        if p.suffix == ".csv":
            if measure == "byte":
                raise ValueError(f"{p}: CSV inputs hold perplexities already; --measure byte needs logs")
            df = _from_csv(p)
        elif p.suffix == ".jsonl":
            df = _from_lm_eval(p, measure, tokenizer, rep)
        elif p.suffix in (".eval", ".json"):
            df = _from_inspect(p, measure, rep)
        else:
            raise ValueError(f"{p}: unsupported input (expected .eval/.json logs, lm-eval samples .jsonl, .csv)")
        df["source"] = p.name
        rep.files.append(str(p))
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    kinds = {c for c in ("ppl", "apx") if c in out.columns and out[c].notna().any()}
    if len(kinds) > 1:
        raise ValueError("inputs mix perplexities and APX values; score them separately")
    rep.sentences = len(out)
    return out, rep
