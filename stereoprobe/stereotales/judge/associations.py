"""Association files of the StereoTales harm judge: stable ids, reading, de-duplication.

An association is directional: base attribute A = value a -> compared attribute B = value b. Its stable id is
``association_id(A, a, B, b)`` (a hash of the four strings), the same whichever file it comes from, so LLM
ratings, human ratings and association tables join on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.stereotales.contract import association_id
from stereoprobe.stereotales.judge.contract import KEY_COLUMNS
from stereoprobe.tables import restore_csv_cells

__all__ = [
    "AssociationFileError", "association_id", "association_key", "attribute_display_name", "load_associations",
    "load_association_rows", "deduplicate_associations", "same_model",
]

UPSTREAM_KEY = "stereotales-human-study"
UPSTREAM_QUESTIONS = "data/questions.json"


class AssociationFileError(InputError):
    """An association file is unreadable or misses a required field (the message names file and field)."""


# --------------------------------------------------------------------------------------------------- ids


def association_key(base_attribute: str, base_value: str, compared_attribute: str, compared_value: str) -> str:
    """Canonical text key ``A=a -> B=b`` of an association."""
    return f"{base_attribute}={base_value} -> {compared_attribute}={compared_value}"


def attribute_display_name(name: str) -> str:
    """Attribute name as shown to the judge: ``income_level`` → ``Income Level`` (upstream rendering)."""
    return name.replace("_", " ").title()


# ------------------------------------------------------------------------------------------ association files


def load_associations(source: str | Path, local: str | Path | None = None) -> pd.DataFrame:
    """Read an association file into one row per distinct association (first-seen order).

    ``source`` is one of:
    - ``"upstream"``: the 1,580 associations of the human study (``questions.json`` at the pinned commit,
      fetched through :func:`stereoprobe.upstream.fetch`; ``local`` = a local copy of the repositories);
    - a ``.json`` file in the upstream ``questions.json`` format (array of ``{question_id, base_attribute:
      {name, value}, compared_attribute: {name, value}, avg_percentage, avg_lift, metadata: {model_list}}``);
    - a ``.csv`` / ``.parquet`` association table (the ``associations.csv`` layout: ``model, slice, base_attribute, base_value,
      compared_attribute, compared_value, ...``; ``model`` and ``slice`` optional).

    Columns of the result: ``association_id, base_attribute, base_value, compared_attribute,
    compared_value, question_id`` (upstream uuid or None), ``generator_models`` (sorted list),
    ``slices`` (sorted list), ``n_models``, ``avg_lift``, ``avg_percentage`` (NaN when absent).
    """
    rows = load_association_rows(source, local=local)
    return deduplicate_associations(rows)


def load_association_rows(source: str | Path, local: str | Path | None = None) -> pd.DataFrame:
    """Read an association file as it is: one row per (model, slice, association) in the long format.

    Columns: the four key columns, ``association_id``, ``model`` (None if unknown), ``slice`` ("all" if
    absent), ``question_id`` (None if absent), ``lift``, ``fraction`` (NaN if absent).
    """
    if str(source) == "upstream":
        from stereoprobe.upstream import fetch

        path = fetch(UPSTREAM_KEY, UPSTREAM_QUESTIONS, local=local)
    else:
        path = Path(source)
    if not path.is_file():
        raise AssociationFileError(f"association file not found: {path}")
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonl"):
        return _rows_from_questions_json(path)
    if suffix in (".csv", ".parquet"):
        return _rows_from_table(path)
    raise AssociationFileError(f"{path}: unsupported association file type {suffix!r} (use .csv, .parquet or .json)")


def _rows_from_questions_json(path: Path) -> pd.DataFrame:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix.lower() == ".json" else [json.loads(x) for x in text.splitlines() if x.strip()]
    except UnicodeDecodeError as e:
        raise AssociationFileError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except (OSError, json.JSONDecodeError) as e:
        raise AssociationFileError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(data, list):
        raise AssociationFileError(f"{path}: expected a JSON array of association records")
    out: list[dict[str, Any]] = []
    for i, rec in enumerate(data):
        where = f"{path}: record {i}"
        if not isinstance(rec, dict):
            raise AssociationFileError(f"{where}: expected an object")
        fields: dict[str, str] = {}
        for side in ("base_attribute", "compared_attribute"):
            part = rec.get(side)
            if not isinstance(part, dict):
                raise AssociationFileError(f"{where}: field {side!r} missing or not an object {{name, value}}")
            for sub in ("name", "value"):
                v = part.get(sub)
                if not isinstance(v, str) or not v.strip():
                    raise AssociationFileError(f"{where}: field {side}.{sub} missing or empty")
            prefix = side.split("_")[0]
            fields[f"{prefix}_attribute"] = part["name"].strip()
            fields[f"{prefix}_value"] = part["value"].strip()
        lift, pct = _number(rec, "avg_lift", where), _number(rec, "avg_percentage", where)
        models = (rec.get("metadata") or {}).get("model_list") or [None]
        for m in models:
            out.append(
                {
                    **fields,
                    "model": m,
                    "slice": "all",
                    "question_id": rec.get("question_id"),
                    "lift": lift,
                    "fraction": pct / 100,
                }
            )
    return _finish_rows(pd.DataFrame(out, columns=[*KEY_COLUMNS, "model", "slice", "question_id", "lift", "fraction"]), path)


def _number(rec: dict[str, Any], key: str, where: str) -> float:
    v = rec.get(key)
    if v is None:
        return float("nan")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise AssociationFileError(f"{where}: field {key!r} = {v!r} is not a number") from None


def _rows_from_table(path: Path) -> pd.DataFrame:
    try:
        df = pd.read_parquet(path) if path.suffix.lower() == ".parquet" else restore_csv_cells(
            pd.read_csv(path, dtype=str, keep_default_na=False))
    except pd.errors.EmptyDataError:
        df = pd.DataFrame(columns=KEY_COLUMNS)
    except Exception as e:  # noqa: BLE001 — re-raised with the file name
        raise AssociationFileError(f"{path}: cannot read ({e})") from e
    missing = [c for c in KEY_COLUMNS if c not in df.columns]
    if missing:
        raise AssociationFileError(f"{path}: missing column(s) {', '.join(missing)} (needs {', '.join(KEY_COLUMNS)})")
    for c in KEY_COLUMNS:
        col = df[c].astype(str).str.strip()
        bad = df.index[(col == "") | df[c].isna()]
        if len(bad):
            raise AssociationFileError(f"{path}: row {int(bad[0]) + 2}: empty {c!r}")
        df[c] = col
    out = df[KEY_COLUMNS].copy()
    out["model"] = df["model"].replace("", None) if "model" in df.columns else None
    out["slice"] = df["slice"].replace("", "all") if "slice" in df.columns else "all"
    out["question_id"] = df["question_id"].replace("", None) if "question_id" in df.columns else None
    for c in ("lift", "fraction"):
        out[c] = pd.to_numeric(df[c], errors="coerce") if c in df.columns else float("nan")
    return _finish_rows(out, path)


def _finish_rows(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    df = df.reset_index(drop=True)
    df.insert(
        0,
        "association_id",
        [association_id(*r) for r in df[KEY_COLUMNS].itertuples(index=False, name=None)] if len(df) else [],
    )
    df.attrs["source"] = str(path)
    return df


def deduplicate_associations(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per association id (first-seen order) with the generator models and slices that found it."""
    cols = [
        "association_id", *KEY_COLUMNS, "question_id", "generator_models", "slices", "n_models", "avg_lift",
        "avg_percentage",
    ]
    if rows.empty:
        out = pd.DataFrame(columns=cols)
        out.attrs.update(rows.attrs)
        return out
    g = rows.groupby("association_id", sort=False)
    first = g[KEY_COLUMNS].first()
    models = g["model"].apply(lambda s: sorted({m for m in s if isinstance(m, str) and m}))
    qid = g["question_id"].agg(lambda s: next((q for q in s if isinstance(q, str) and q), None))
    slices = g["slice"].apply(lambda s: sorted({str(x) for x in s}))
    out = pd.DataFrame(
        {
            **{c: first[c] for c in KEY_COLUMNS},
            "question_id": qid,
            "generator_models": models,
            "slices": slices,
            "n_models": models.map(len),
            "avg_lift": g["lift"].mean(),
            "avg_percentage": g["fraction"].mean() * 100,
        }
    ).reset_index()[cols]
    out.attrs.update(rows.attrs)
    return out


def same_model(a: str, b: str) -> bool:
    """Whether two model names denote the same model across naming schemes.

    Equal strings, or equal after dropping the provider prefix (``openai/gpt-4o`` vs ``azure_ai/gpt-4o``):
    the association tables name generators by inspect model names, upstream files by LiteLLM ids.
    """
    if a == b:
        return True
    return a.rsplit("/", 1)[-1].lower() == b.rsplit("/", 1)[-1].lower()
