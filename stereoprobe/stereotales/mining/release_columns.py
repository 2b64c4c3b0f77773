"""Columnar building blocks of the release reader (:mod:`.stories_release`): the profiles' JSON decoded by
Arrow's JSON reader in one call, and per-value work (normalisation, NFC, language codes) done once per
distinct value instead of once per row. Each returns what the row-by-row code returned, value for value;
where Arrow cannot vouch for that (a number, a list, a date-like string, a repeated key, a line break inside
a cell), it returns None and the reader parses row by row, with its messages naming the row.

A profile column travels as :class:`Coded` (codes into a small array of distinct values), so the 19 attribute
columns of 650k stories are never 12 million Python objects: the reader joins the chunks' codes and makes each
attribute a categorical once (:func:`join_coded`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.stereotales.contract import UNKNOWN
from stereoprobe.stereotales.mining.stories_frame import normalize_value


@dataclass(frozen=True)
class Coded:
    """One column of one chunk: row ``i`` holds ``values[codes[i]]`` (``values``: an object array of strings,
    possibly repeated; ``codes``: int64, one per row)."""

    codes: np.ndarray
    values: np.ndarray

    def decoded(self) -> np.ndarray:
        """The column as an object array of strings (one Python object per row)."""
        return self.values[self.codes]


def map_values(col: pd.Series, fn: Callable[[Any], Any]) -> pd.Series:
    """``col.map(fn)`` with ``fn`` called once per distinct value (the values repeat: models, languages)."""
    uniq = pd.unique(col)
    return col.map(dict(zip(uniq, map(fn, uniq))))


def coded_column(col: pd.Series, fn: Callable[[Any], str]) -> Coded:
    """``col`` mapped by ``fn`` (once per distinct value) as codes; ``fn`` receives None for a missing cell."""
    codes, uniq = pd.factorize(col, use_na_sentinel=True)
    values = np.array([fn(u) for u in uniq] + [fn(None)], dtype=object)
    return Coded(np.where(codes < 0, len(values) - 1, codes).astype(np.int64), values)


def _string_columns(table: Any) -> bool:
    import pyarrow as pa

    return all(pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or pa.types.is_null(f.type)
               for f in table.schema)


def _json_lines(raw: pd.Series) -> Any:
    """The cells of ``raw`` as one buffer of newline-terminated lines (one per cell), or None when a cell is
    not a string or holds a line break (Arrow would then read another number of rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        arr = pa.array(raw, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) or arr.null_count:
        return None
    arr = arr.cast(pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    text = _utf8(arr)
    if (text == 10).any() or (text == 13).any():  # a line break in a cell ("\n", "\r")
        return None
    lines = pc.binary_join_element_wise(arr, pa.scalar("", pa.large_string()), pa.scalar("\n", pa.large_string()))
    return pa.py_buffer(_utf8(lines))


def _utf8(arr: Any) -> np.ndarray:
    """The UTF-8 bytes of a large_string array's cells, one after the other (no copy)."""
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    return np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] if data is not None else np.zeros(0, np.uint8)


def profile_codes(raw: pd.Series) -> dict[str, Coded] | None:
    """The ``extracted_attributes_json`` cells of ``raw`` decoded in one call of Arrow's JSON reader, each
    attribute normalised (:func:`normalize_value`, once per distinct value), columns in order of first
    appearance, a missing key or null as ``"unknown"``: the row-by-row parse's values, as codes. None when
    every cell is not a one-line JSON object of string (or null) values: the row-by-row parse then decides."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    if not len(raw):
        return None
    lines = _json_lines(raw)
    if lines is None:
        return None
    try:
        table = pj.read_json(pa.BufferReader(lines), parse_options=pj.ParseOptions(newlines_in_values=False))
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows != len(raw) or table.num_columns == 0 or not _string_columns(table):
        return None
    cols: dict[str, Coded] = {}
    for name, column in zip(table.column_names, table.columns):
        enc = pc.dictionary_encode(column.cast(pa.large_string())).combine_chunks()
        norm = np.array([normalize_value(v) for v in enc.dictionary.to_pylist()] + [UNKNOWN], dtype=object)
        codes = enc.indices.fill_null(len(norm) - 1).to_numpy(zero_copy_only=False).astype(np.int64)
        cols[str(name)] = Coded(codes, norm)
    return cols


def coded_frame(prof: pd.DataFrame) -> dict[str, Coded]:
    """The columns of a profiles frame (object columns of normalised strings) as :class:`Coded`."""
    return {str(a): coded_column(prof[a], lambda v: UNKNOWN if v is None else v) for a in prof.columns}


def profiles_frame(raw: pd.Series) -> pd.DataFrame | None:
    """:func:`profile_codes` as the frame the row-by-row parse gives (object columns, ``raw``'s index)."""
    cols = profile_codes(raw)
    if cols is None:
        return None
    return pd.DataFrame({a: c.decoded() for a, c in cols.items()}, index=raw.index, columns=list(cols), dtype=object)


def join_coded(chunks: Sequence[tuple[int, dict[str, Coded]]], attributes: Sequence[str], keep: np.ndarray
               ) -> dict[str, pd.Categorical]:
    """Each attribute over the chunks (``(rows, columns)`` each, in file order; an attribute a chunk lacks
    reads ``"unknown"``), rows where ``keep`` is true, as a categorical with the categories
    ``astype("category")`` gives: the values present, sorted."""
    out: dict[str, pd.Categorical] = {}
    for a in attributes:
        index: dict[str, int] = {}
        parts = []
        for rows, cols in chunks:
            c = cols.get(a) or Coded(np.zeros(rows, dtype=np.int64), np.array([UNKNOWN], dtype=object))
            ids = np.array([index.setdefault(v, len(index)) for v in c.values], dtype=np.int64)
            parts.append(ids[c.codes])
        codes = np.concatenate(parts)[keep] if parts else np.zeros(0, dtype=np.int64)
        names = np.array(list(index), dtype=object)
        used = np.flatnonzero(np.bincount(codes, minlength=len(names)))
        order = used[np.argsort(names[used].astype(str), kind="stable")]
        remap = np.full(len(names), -1, dtype=np.int64)
        remap[order] = np.arange(len(order))
        categories = pd.Index(names[order].tolist(), dtype="str")
        out[a] = pd.Categorical.from_codes(remap[codes], categories=categories)
    return out
