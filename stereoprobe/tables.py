"""Result tables: every table goes out as CSV (for people) and Parquet (for programs) (:func:`write_table`),
and is read back by the one reader of output tables (:func:`read_table`: the leaderboard, the reports)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd


def write_table(df: pd.DataFrame, out_dir: str | Path, name: str) -> Path:
    """Write ``df`` as ``out_dir/name.csv`` and ``out_dir/name.parquet``; return the CSV path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / f"{name}.csv"
    df.to_csv(csv_path, index=False)
    # Parquet needs homogeneous column types: object columns holding mixed values are written as strings.
    pq = df.copy()
    for col in pq.columns:
        if pq[col].dtype == object and not pq[col].map(lambda v: v is None or isinstance(v, str)).all():
            pq[col] = pq[col].map(lambda v: None if v is None else str(v))
    pq.to_parquet(out / f"{name}.parquet", index=False)
    return csv_path


def read_table(out_dir: str | Path, name: str, required: Iterable[str] = ()) -> pd.DataFrame | None:
    """Read a table written by :func:`write_table`: ``out_dir/name.parquet``, else ``out_dir/name.csv``;
    ``None`` when neither exists.

    A table without rows (or a CSV without even a header) has at least the ``required`` columns. A file that
    cannot be read, or lacks a ``required`` column, is an :class:`~stereoprobe.errors.InputError` naming it.
    """
    from stereoprobe.errors import InputError

    d = Path(out_dir)
    pq, csv = d / f"{name}.parquet", d / f"{name}.csv"
    path = pq if pq.is_file() else csv if csv.is_file() else None
    if path is None:
        return None
    try:
        df = pd.read_parquet(path) if path == pq else pd.read_csv(path, keep_default_na=True)
    except pd.errors.EmptyDataError:  # a CSV without even a header: an empty table
        df = pd.DataFrame()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r})") from None
    except (OSError, ValueError) as exc:  # pyarrow and pandas parse errors are ValueErrors (ArrowInvalid too)
        raise InputError(f"{path}: unreadable table ({(str(exc).splitlines() or [''])[0][:160]})") from None
    required = list(required)
    if df.empty:  # no rows (e.g. no association in a tiny run): the required columns, no rows
        return pd.DataFrame({c: pd.Series(dtype=object) for c in dict.fromkeys([*required, *df.columns])})
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(map(str, df.columns))})")
    return df
