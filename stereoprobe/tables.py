"""Result tables: every table goes out as CSV (for people) and Parquet (for programs) (:func:`write_table`),
and is read back by the one reader of output tables (:func:`read_table`: the leaderboard, the reports).

Every CSV the tool writes goes through :func:`write_csv` (one named exception: the DBB builder's exported
templates and variations, a task input format read back cell for cell; :mod:`stereoprobe.dbb.builder`),
which makes it safe to open in a spreadsheet (OWASP, "CSV injection"): a text cell (or column name) starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
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

import numpy as np
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


def _map_distinct(col: pd.Series, fn: Any) -> pd.Series:
    """``col.map(fn)``, same values and dtype, with ``fn`` applied once per distinct text (a table repeats its
    models, attributes, values): the distinct cells are mapped as a small Series of ``col``'s dtype and
    spread back. Columns of other cells (numbers, lists, mixed types) are mapped cell by cell."""
    if isinstance(col.dtype, pd.CategoricalDtype) or len(col) < 1000:
        return col.map(fn)  # a categorical maps its categories already
    try:
        codes, uniq = pd.factorize(col, use_na_sentinel=True)
    except TypeError:  # unhashable cells
        return col.map(fn)
    if not all(type(u) is str for u in uniq):
        return col.map(fn)
    na = codes < 0
    firsts = [uniq.to_numpy(dtype=object)]
    if na.any():  # every missing cell is one of a few objects (None, nan): each mapped as itself
        na_values = col[na].to_numpy(dtype=object)
        kinds = list({(type(v), v is None): v for v in na_values}.values())
        if len(kinds) > 1:
            return col.map(fn)
        firsts.append(np.array(kinds, dtype=object))
        codes = np.where(na, len(uniq), codes)
    small = pd.Series(np.concatenate(firsts), dtype=col.dtype).map(fn)
    return pd.Series(small.array.take(codes), index=col.index, name=col.name)


def _cells(df: pd.DataFrame, fn: Any) -> pd.DataFrame:
    """``df`` with ``fn`` applied to every cell of its text columns and to its column names."""
    out = df.copy()
    for i in range(df.shape[1]):
        if _is_text(df.iloc[:, i]):
            out.isetitem(i, _map_distinct(df.iloc[:, i], fn))
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
    When both copies exist they must hold the same values (a CSV edited by hand, or a stale Parquet, would be
    used or ignored without a word): else one line names both files and the first difference.
    """
    from stereoprobe.errors import InputError

    d = Path(out_dir)
    pq, csv = d / f"{name}.parquet", d / f"{name}.csv"
    path = pq if pq.is_file() else csv if csv.is_file() else None
    if path is None:
        return None
    df = _read_one(path)
    if path == pq and csv.is_file():  # both copies: one edited by hand would be used, or not, silently
        diff = _disagreement(df, _read_one(csv))
        if diff:
            raise InputError(f"{csv} and {pq} disagree ({diff}); the two copies of one table must hold the same "
                             "values: delete the stale one or write the table again")
    required = list(required)
    if df.empty:  # no rows (e.g. no association in a tiny run): the required columns, no rows
        return pd.DataFrame({c: pd.Series(dtype=object) for c in dict.fromkeys([*required, *df.columns])})
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(map(str, df.columns))})")
    return df


def _read_one(path: Path) -> pd.DataFrame:
    """One copy of a table (Parquet, or a CSV :func:`write_csv` wrote); an empty DataFrame for a CSV without
    even a header; :class:`~stereoprobe.errors.InputError` naming a file that cannot be read."""
    from stereoprobe.errors import InputError

    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return restore_csv_cells(pd.read_csv(path, keep_default_na=True))
    except pd.errors.EmptyDataError:  # a CSV without even a header: an empty table
        return pd.DataFrame()
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r})") from None
    except (OSError, ValueError) as exc:  # pyarrow and pandas parse errors are ValueErrors (ArrowInvalid too)
        raise InputError(f"{path}: unreadable table ({(str(exc).splitlines() or [''])[0][:160]})") from None


def _disagreement(parquet: pd.DataFrame, csv: pd.DataFrame) -> str:
    """How the CSV copy of a table differs from its Parquet copy ("" when they hold the same values): columns,
    row count, or the first differing cell (numbers compared as numbers, to 1e-9 relative; text as text, an
    empty CSV cell equal to a missing value)."""
    import numpy as np

    if list(map(str, parquet.columns)) != list(map(str, csv.columns)):
        return f"columns {list(map(str, csv.columns))} vs {list(map(str, parquet.columns))}"
    if len(parquet) != len(csv):
        return f"{len(csv)} vs {len(parquet)} rows"
    for i, col in enumerate(parquet.columns):
        a, b = parquet.iloc[:, i].reset_index(drop=True), csv.iloc[:, i].reset_index(drop=True)
        an, bn = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
        numeric = (an.notna() | a.isna()).all() and (bn.notna() | b.isna()).all()
        if numeric:
            same = np.isclose(an.to_numpy(dtype=float), bn.to_numpy(dtype=float), rtol=1e-9, atol=0.0,
                              equal_nan=True)
        else:
            same = (a.map(_text) == b.map(_text)).to_numpy()
        if not same.all():
            r = int(np.flatnonzero(~same)[0])
            return f"column {str(col)!r}, row {r + 1}: {_plain(b.iloc[r])!r} vs {_plain(a.iloc[r])!r}"
    return ""


#: the texts pandas reads as a missing value in a CSV (``read_csv``'s default ``na_values``)
_CSV_NA = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


def _text(value: Any) -> str:
    """A cell as text for comparing a table's two copies: a missing value (or a text a CSV reads as one) is "",
    a whole float its integer."""
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA or value in _CSV_NA:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds, for messages."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value
