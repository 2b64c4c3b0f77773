"""Result tables: every table goes out as CSV (for people) and Parquet (for programs) (:func:`write_table`),
and is read back by the one reader of output tables (:func:`read_table`: the leaderboard, the reports).

Every CSV the tool writes goes through :func:`write_csv`, which makes it safe to open in a spreadsheet (OWASP,
"CSV injection"): a text cell (or column name) starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return gets a single quote in front (``=HYPERLINK(...)`` is written ``'=HYPERLINK(...)``), so that no cell is
read as a formula. Numbers are never touched: numeric columns, and text cells that are a plain number
(``-1.5``, ``+3e-2``). A text that already starts with quotes before such a character gets one more, so
:func:`restore_csv_cells` (used by :func:`read_table` on a CSV) gives back exactly the value written. Parquet
keeps every value as it is.

>>> csv_cell("=HYPERLINK(1)"), csv_cell("-1.5"), csv_cell("@SUM(A1)"), csv_cell("a-b"), csv_cell(-2)
("'=HYPERLINK(1)", '-1.5', "'@SUM(A1)", 'a-b', -2)
>>> all(csv_value(csv_cell(v)) == v for v in ("=1+1", "'=x", "''-y", "+", "\tx", "plain", "-3"))
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["csv_cell", "csv_value", "public_cells", "read_table", "restore_csv_cells", "write_csv", "write_table"]

#: a cell a spreadsheet would read as a formula (after any quotes this module put or kept in front)
_FORMULA = re.compile(r"'*[=+\-@\t\r]")
_NEUTRALISED = re.compile(r"'+[=+\-@\t\r]")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell: a text that a spreadsheet would read as a formula gets a ``'`` in front."""
    if isinstance(value, str) and _FORMULA.match(value) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_value(cell: Any) -> Any:
    """The value :func:`csv_cell` made ``cell`` from (the one quote it put in front removed)."""
    if isinstance(cell, str) and _NEUTRALISED.match(cell):
        return cell[1:]
    return cell


def _is_text(col: pd.Series) -> bool:
    types = pd.api.types
    return not (types.is_numeric_dtype(col) or types.is_bool_dtype(col) or types.is_datetime64_any_dtype(col))


def _cells(df: pd.DataFrame, fn: Any) -> pd.DataFrame:
    """``df`` with ``fn`` applied to every cell of its text columns and to its column names."""
    out = df.copy()
    for i in range(df.shape[1]):
        if _is_text(df.iloc[:, i]):
            out.isetitem(i, df.iloc[:, i].map(fn))
    if not isinstance(out.columns, pd.MultiIndex):
        out.columns = [fn(c) for c in out.columns]
    return out


def write_csv(df: pd.DataFrame, path: str | Path, **kwargs: Any) -> None:
    """Write ``df`` as CSV at ``path`` (``index=False`` unless given) with every text cell and column name
    through :func:`csv_cell`: the one way the tool writes a CSV."""
    kwargs.setdefault("index", False)
    _cells(df, csv_cell).to_csv(path, **kwargs)


def restore_csv_cells(df: pd.DataFrame) -> pd.DataFrame:
    """A table read from a CSV :func:`write_csv` wrote, with its cells and column names as they were."""
    return _cells(df, csv_value)


def public_cells(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every text cell and column name through :func:`stereoprobe.redact.redact_text` (a URL's
    query and user information, a key, a token: never written, whatever column holds it)."""
    from stereoprobe.redact import redact_text

    seen: dict[str, str] = {}  # a column repeats its values (models, groups): each text is checked once

    def clean(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value not in seen:
            seen[value] = redact_text(value)
        return seen[value]

    return _cells(df, clean)


def write_table(df: pd.DataFrame, out_dir: str | Path, name: str) -> Path:
    """Write ``df`` as ``out_dir/name.csv`` and ``out_dir/name.parquet``; return the CSV path. Every text cell
    is written in its public form (:func:`public_cells`), in the CSV also safe for a spreadsheet
    (:func:`write_csv`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / f"{name}.csv"
    df = public_cells(df)
    write_csv(df, csv_path)
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
        df = pd.read_parquet(path) if path == pq else restore_csv_cells(pd.read_csv(path, keep_default_na=True))
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

