"""The release reader's columnar profile decoding (:mod:`stereoprobe.stereotales.mining.release_columns`) gives
the frame the row-by-row parse gives, and declines (None) whatever Arrow's JSON reader would read differently."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.stereotales.mining.release_columns import map_values, profiles_frame
from stereoprobe.stereotales.mining.stories_release import _profiles_by_row


def _by_row(cells: list[str], index: pd.Index) -> pd.DataFrame:
    return _profiles_by_row(Path("t.parquet"), cells, index, [f"s{i}" for i in range(len(cells))])


def test_columnar_profiles_equal_the_row_by_row_parse() -> None:
    cells = [
        json.dumps({"age": "adult", "gender": " female "}),
        json.dumps({"gender": "male", "religion": None}),  # other key order, a null
        json.dumps({"age": "caf\u00e9", "religion": "buddhist"}, ensure_ascii=True),  # \u escape
        json.dumps({"age": "caf\u00e9", "religion": ""}, ensure_ascii=False),  # literal UTF-8, empty value
        "{ \"age\" : \"unknown\" }",  # spaces around the tokens
        json.dumps({"housing_status": "homeless"}),  # a key first seen late
    ]
    index = pd.Index([10, 11, 12, 13, 14, 15])
    got = profiles_frame(pd.Series(cells, index=index))
    assert got is not None
    want = _by_row(cells, index)
    assert list(got.columns) == list(want.columns) == ["age", "gender", "religion", "housing_status"]
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.loc[11, "religion"] == "unknown" and got.loc[10, "gender"] == "female"  # stripped
    assert got.loc[12, "age"] == got.loc[13, "age"] == "caf\u00e9"


@pytest.mark.parametrize("cells", [
    ['{"age": 3}'],  # a number: str() of the parsed value decides its spelling
    ['{"age": "2020-01-01"}', '{"age": "2021-02-03"}'],  # Arrow would read dates
    ['{"age": "adult", "age": "child"}'],  # a repeated key: json keeps the last
    ['{"age":\n"adult"}'],  # a line break inside a cell
    ['{"age": {"value": "adult"}}'],  # the tolerated {"value": v} cell
    ['{"age": ["adult"]}'],  # a list (an error, named by the row-by-row parse)
    ['{"age": true}'], ['[1]'], [''], ['not json'], ['{}'],
])
def test_columnar_profiles_decline_what_arrow_reads_otherwise(cells: list[str]) -> None:
    assert profiles_frame(pd.Series(cells)) is None
    mixed = [json.dumps({"age": "adult"}), *cells]  # after a plain row: declined, or what the row parse gives
    got = profiles_frame(pd.Series(mixed))
    if got is not None:
        pd.testing.assert_frame_equal(got, _by_row(mixed, pd.RangeIndex(len(mixed))), check_exact=True)


def test_a_date_like_value_among_words_stays_the_same_string() -> None:
    cells = [json.dumps({"age": "adult"}), json.dumps({"age": "2020-01-01"})]
    got = profiles_frame(pd.Series(cells))
    assert got is not None
    pd.testing.assert_frame_equal(got, _by_row(cells, pd.RangeIndex(2)), check_exact=True)


def test_map_values_calls_once_per_value() -> None:
    calls: list[str] = []
    col = pd.Series(["b", "a", "b", "b", "a"])
    out = map_values(col, lambda v: calls.append(v) or v.upper())
    assert out.tolist() == ["B", "A", "B", "B", "A"] and sorted(calls) == ["a", "b"]
