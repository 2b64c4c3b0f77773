"""Input tables (CSV, TSV, Parquet) with errors that name the file, the missing columns or the bad row."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError

def read_table(path: str | Path, required: Iterable[str] = (), *, allow_empty: bool = False,
               what: str = "table", **read_kwargs: Any) -> Any:
    """Read a CSV (``.csv``, ``.tsv``: tab-separated) or Parquet (``.parquet``) file into a DataFrame.

    Clear :class:`InputError` for a missing file, an empty file or a table without rows (unless
    ``allow_empty``), text that is not UTF-8, an unreadable file, and missing ``required`` columns (all of
    them listed, with the columns found). ``what`` names the input in messages (e.g. ``"human ratings"``).
    """
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such {what} file")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, expected a {what} file (.csv or .parquet)")
    if p.stat().st_size == 0:
        raise InputError(f"{p}: empty file (expected a {what})")
    try:
        if p.suffix == ".parquet":
            df = _read_parquet(p, read_kwargs)
        elif p.suffix in (".csv", ".tsv", ".txt"):
            kw = {"sep": "\t"} if p.suffix == ".tsv" else {}
            df = pd.read_csv(p, encoding="utf-8", **{**kw, **read_kwargs})
        else:
            raise InputError(f"{p}: unsupported {what} format (expected .csv, .tsv or .parquet)")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at position "
                         f"{exc.start}); save it as UTF-8") from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{p}: empty file (expected a {what})") from None
    except InputError:
        raise
    except Exception as exc:  # pandas' ParserError, pyarrow's ArrowInvalid (a ValueError), OSError
        if not isinstance(exc, (ValueError, OSError)) and type(exc).__module__.split(".")[0] != "pyarrow":
            raise
        kind = "Parquet " if p.suffix == ".parquet" else "CSV " if p.suffix != ".tsv" else "TSV "
        raise InputError(f"{p}: not a readable {kind}{what} ({' '.join(str(exc).split())[:160]})") from None
    require_columns(df, required, p)
    if df.empty and not allow_empty:
        raise InputError(f"{p}: the {what} has no rows")
    return df


def _read_parquet(path: Path, read_kwargs: dict[str, Any]) -> Any:
    """``pd.read_parquet`` taking the CSV reader's options that make sense for a typed file: ``columns``,
    ``filters``; ``dtype`` is applied after reading, and with ``keep_default_na=False`` (as for a CSV read
    with ``dtype=str``) missing values become empty strings."""
    import pandas as pd

    df = pd.read_parquet(path, **{k: v for k, v in read_kwargs.items() if k in ("columns", "filters")})
    if read_kwargs.get("keep_default_na") is False:
        df = df.astype(object).where(df.notna(), "")
    if "dtype" in read_kwargs:
        df = df.astype(read_kwargs["dtype"])
    return df


def require_columns(df: Any, required: Iterable[str], source: str | Path) -> None:
    """:class:`InputError` listing every column of ``required`` that ``df`` lacks (and the columns it has)."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        found = ", ".join(map(str, df.columns)) or "none"
        raise InputError(f"{source}: missing column{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(repr(c) for c in missing)} (found: {found})")


def require_finite(df: Any, columns: Iterable[str], source: str | Path, *, minimum: float | None = None) -> None:
    """:class:`InputError` naming the first rows (1-based, as counted below a CSV header) where a column is
    not a finite number (or below ``minimum``)."""
    import numpy as np
    import pandas as pd

    for col in columns:
        values = pd.to_numeric(df[col], errors="coerce")
        bad = ~np.isfinite(values.to_numpy(dtype=float))
        if minimum is not None:
            bad |= values.to_numpy(dtype=float) < minimum
        if bad.any():
            rows = [int(i) + 1 for i in np.flatnonzero(bad)[:5]]
            need = "a finite number" + (f" >= {minimum:g}" if minimum is not None else "")
            raise InputError(f"{source}: column {col!r} is not {need} in row{'s' if len(rows) > 1 else ''} "
                             f"{', '.join(map(str, rows))}")


def require_between(df: Any, columns: Iterable[str], source: str | Path, low: float, high: float, *,
                    integer: bool = False, allow_missing: bool = False) -> None:
    """:class:`InputError` naming the first rows (1-based, below a CSV header) where a column is not a
    number in ``[low, high]`` (an integer when ``integer``; empty cells pass when ``allow_missing``)."""
    import numpy as np
    import pandas as pd

    for col in columns:
        raw = df[col]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
        missing = raw.isna().to_numpy() | (raw.astype(str).str.strip() == "").to_numpy()
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(values) | (values < low) | (values > high)
            if integer:
                bad |= values != np.round(values)
        if allow_missing:
            bad &= ~missing
        if bad.any():
            rows = [int(i) + 1 for i in np.flatnonzero(bad)[:5]]
            shown = ", ".join(f"{r} ({_plain(raw.iloc[r - 1])!r})" for r in rows)
            need = f"{'an integer' if integer else 'a number'} in [{low:g}, {high:g}]"
            raise InputError(f"{source}: column {col!r} is not {need} in row{'s' if len(rows) > 1 else ''} {shown}")


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (``np.int64(150)`` -> ``150``), for messages."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value
