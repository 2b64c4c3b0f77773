"""Columnar building blocks of the release reader (:mod:`.stories_release`): the profiles' JSON decoded by
Arrow's JSON reader in one call, and per-value work (normalisation, NFC, language codes) done once per
distinct value instead of once per row. Each returns what the row-by-row code returned, value for value;
where Arrow cannot vouch for that (a number, a list, a date-like string, a repeated key, a line break inside
a cell), it returns None and the reader parses row by row, with its messages naming the row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.stereotales.contract import UNKNOWN
from stereoprobe.stereotales.mining.stories_frame import normalize_value


def map_values(col: pd.Series, fn: Callable[[Any], Any]) -> pd.Series:
    """``col.map(fn)`` with ``fn`` called once per distinct value (the values repeat: models, languages)."""
    uniq = pd.unique(col)
    return col.map(dict(zip(uniq, map(fn, uniq))))


def _string_columns(table: Any) -> bool:
    import pyarrow as pa

    return all(pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or pa.types.is_null(f.type)
               for f in table.schema)


def profiles_frame(raw: pd.Series) -> pd.DataFrame | None:
    """The ``extracted_attributes_json`` cells of ``raw`` decoded in one call of Arrow's JSON reader, each
    attribute normalised (:func:`normalize_value`, once per distinct value): the frame the row-by-row parse
    gives (columns in order of first appearance, a missing key or null as ``"unknown"``). None when every
    cell is not a one-line JSON object of string (or null) values: the row-by-row parse then decides."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    values = raw.tolist()
    if not values or not all(type(v) is str for v in values):
        return None
    text = "\n".join(values)
    if "\r" in text or text.count("\n") != len(values) - 1:  # one cell, one line
        return None
    try:
        table = pj.read_json(pa.BufferReader(text.encode("utf-8")),
                             parse_options=pj.ParseOptions(newlines_in_values=False))
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows != len(raw) or table.num_columns == 0 or not _string_columns(table):
        return None
    cols: dict[str, np.ndarray] = {}
    for name, column in zip(table.column_names, table.columns):
        enc = pc.dictionary_encode(column.cast(pa.large_string())).combine_chunks()
        norm = np.array([normalize_value(v) for v in enc.dictionary.to_pylist()] + [UNKNOWN], dtype=object)
        codes = enc.indices.fill_null(len(norm) - 1).to_numpy(zero_copy_only=False)
        cols[str(name)] = norm[codes]
    return pd.DataFrame(cols, index=raw.index, columns=list(cols), dtype=object)
