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
    ['{"age": "a\rb"}'], ['{"age":\r"adult"}'],  # a carriage return: Arrow would break the line there
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


def _independent_frame(rows: list[dict]) -> pd.DataFrame:
    """The attribute columns the reader must give, computed here with json.loads and pandas alone: the first
    copy of each (model, sample id, output id); within a chunk that lacks a key, that attribute is "unknown"
    (no prompted value either); else a missing key or null is "unknown" and the prompted value replaces the
    story's base attribute; each column categorical with the values present, sorted."""
    seen, kept = set(), []
    for r in rows:
        key = (r["generator_model"], r["sample_id"], r["output_id"])
        if key not in seen:
            seen.add(key)
            kept.append(r)
    attrs = list(dict.fromkeys(k for r in rows for k in json.loads(r["extracted_attributes_json"])))
    cols: dict[str, list[str]] = {a: [] for a in attrs}
    for r in kept:
        prof = json.loads(r["extracted_attributes_json"])
        chunk_keys = {k for c in rows if c["chunk"] == r["chunk"] for k in json.loads(c["extracted_attributes_json"])}
        for a in attrs:
            v = prof.get(a) or "unknown"
            cols[a].append(r["attribute_value_key"] if a == r["target_attribute"] and a in chunk_keys else
                           v if a in chunk_keys else "unknown")
    return pd.DataFrame({a: pd.Series(v, dtype=object).astype("category") for a, v in cols.items()})


def test_the_reader_joins_chunks_into_the_categoricals_pandas_gives(tmp_path, monkeypatch) -> None:
    """Chunks of 2 rows: a key absent from a whole chunk, a null, a repeat across chunks (used once), a value
    seen in one chunk only; categories = the values present after the repeats are dropped, sorted."""
    from stereoprobe.stereotales.mining import stories_release

    profiles = [{"age": "adult", "gender": "male"}, {"age": "child", "gender": None},   # chunk 0
                {"age": "adult"}, {"age": "elder"},                                     # chunk 1: no gender
                {"gender": "female", "age": "adult"}, {"age": "adult", "gender": "male"},  # chunk 2
                {"age": "adult", "gender": "male"}]                                     # chunk 3: a repeat
    rows = [{"generator_model": "m", "language": "en", "sample_id": f"en:age:{i}:s:0" if i < 6 else "en:age:0:s:0",
             "output_id": str(i if i < 6 else 0), "target_attribute": ["age", "gender"][i % 2],
             "attribute_value_key": ["young", "female"][i % 2], "scenario_key": "s",
             "extracted_attributes_json": json.dumps(p), "chunk": i // 2} for i, p in enumerate(profiles)]
    path = tmp_path / "stories.parquet"
    pd.DataFrame(rows).drop(columns=["chunk"]).to_parquet(path, index=False)
    monkeypatch.setattr(stories_release, "RELEASE_CHUNK_ROWS", 2)
    st = stories_release.read_stories_from_release([path])
    want = _independent_frame(rows)
    assert st.attributes == ["age", "gender"] and st.issues["kind"].tolist() == ["duplicate"]
    pd.testing.assert_frame_equal(st.frame[st.attributes], want, check_exact=True)
    for a in st.attributes:
        assert st.frame[a].cat.categories.dtype == want[a].cat.categories.dtype
    assert st.frame["refused"].tolist() == [False] * 6


def test_analysing_a_release_table_never_imports_inspect_ai(tmp_path) -> None:
    """Reading a release table and writing its tables needs no inspect-ai (whose import takes seconds, paid by
    each of the two commands a user runs): the taxonomy package loads its sample builders on first use."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from stereoprobe.stereotales.mining import AssociationOptions, analyze, write\n"
        "from stereoprobe.stereotales.mining.synthetic import ATTRIBUTE_SHAPES, release_table, synthetic_stories\n"
        "shapes = {a: ATTRIBUTE_SHAPES[a] for a in ('age', 'gender', 'religion')}\n"
        "st = synthetic_stories(['p/m'], ['en'], attributes=shapes, planted=[], seed=1)\n"
        f"path = Path({str(tmp_path)!r}) / 'stories.parquet'\n"
        "release_table(st, list(shapes)).to_parquet(path, index=False)\n"
        "write(analyze([path], AssociationOptions(examples=1)), path.parent / 'out', report=False)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'inspect_ai')[:3])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
