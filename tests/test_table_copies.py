"""A table's CSV and Parquet copies must agree (issue 34.6): :func:`stereoprobe.tables.read_table` reads the
Parquet copy, and a CSV edited by hand (or a stale Parquet) was used, or not, without a word. Both copies
present and different: one line naming both files and the first difference."""

from __future__ import annotations

import pandas as pd
import pytest

from stereoprobe.errors import InputError
from stereoprobe.tables import read_table, write_table


def _table(tmp_path):
    df = pd.DataFrame({"model": ["a", "b", "=c"], "p_a": [49.3, 12.25, float("nan")], "n": [3, 4, 5],
                       "note": ["x", None, "01"]})
    write_table(df, tmp_path, "questions")
    return df


def test_agreeing_copies_are_read(tmp_path) -> None:
    df = _table(tmp_path)
    got = read_table(tmp_path, "questions", ["model", "p_a"])
    assert got["model"].tolist() == df["model"].tolist() and got["n"].tolist() == [3, 4, 5]


@pytest.mark.parametrize("edit,fragment", [
    (lambda t: t.replace("49.3", "51.0"), "column 'p_a', row 1: 51.0 vs 49.3"),
    (lambda t: t.replace("\nb,", "\nB,"), "column 'model', row 2: 'B' vs 'b'"),
    (lambda t: t + "d,1.0,6,y\n", "4 vs 3 rows"),
    (lambda t: t.replace("model,p_a,n,note", "model,pa,n,note"), "columns"),
], ids=["number", "text", "extra-row", "renamed-column"])
def test_copies_that_disagree_are_one_line_naming_both(tmp_path, edit, fragment) -> None:
    _table(tmp_path)
    csv = tmp_path / "questions.csv"
    csv.write_text(edit(csv.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_table(tmp_path, "questions")
    line = str(err.value)
    assert "\n" not in line and str(csv) in line and str(tmp_path / "questions.parquet") in line
    assert "disagree" in line and fragment in line


def test_one_copy_alone_is_read(tmp_path) -> None:
    _table(tmp_path)
    (tmp_path / "questions.parquet").unlink()
    assert read_table(tmp_path, "questions")["p_a"].iloc[0] == pytest.approx(49.3)


def test_texts_a_csv_reads_as_missing_agree(tmp_path) -> None:
    write_table(pd.DataFrame({"language": ["NA", "en", "None"], "x": [1.5, 2.0, 3.25]}), tmp_path, "t")
    assert read_table(tmp_path, "t")["language"].tolist() == ["NA", "en", "None"]
