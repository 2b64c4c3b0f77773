"""CSV outputs are safe to open in a spreadsheet (issue 34.4): a text cell starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return is written with a single quote in front (OWASP, "CSV injection"), in every
CSV and never in Parquet; numbers stay numbers; the tool's own reader gives back the exact values."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stereoprobe.cli import main
from stereoprobe.tables import csv_cell, csv_value, read_table, restore_csv_cells, write_csv, write_table

# (a carriage return inside a cell is checked cell by cell below: pandas' CSV does not quote a bare one)
FORMULAS = ['=HYPERLINK("http://evil.example","x")', "@SUM(A1:A9)", "+1+cmd|' /C calc'!A0", "-2+3",
            "\tTAB", "'=already quoted"]
DANGER = ("=", "+", "-", "@", "\t", "\r")


def _cells(path: Path) -> list[str]:
    """Every cell of a CSV, header included, as a spreadsheet reads the text."""
    with open(path, newline="", encoding="utf-8") as f:
        return [cell for row in csv.reader(f) for cell in row]


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _formula_cells(path: Path) -> list[str]:
    return [c for c in _cells(path) if c.startswith(DANGER) and not _is_number(c)]


@pytest.mark.parametrize("value, written", [
    ("=1+1", "'=1+1"), ("@SUM(A1)", "'@SUM(A1)"), ("+x", "'+x"), ("-x", "'-x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("'=x", "''=x"), ("-1.5", "-1.5"), ("+2e-3", "+2e-3"), ("a=b", "a=b"), ("", ""), ("'plain", "'plain"),
])
def test_a_cell(value: str, written: str) -> None:
    assert csv_cell(value) == written
    assert csv_value(written) == value


def test_numbers_are_never_touched_and_parquet_keeps_the_value(tmp_path: Path) -> None:
    df = pd.DataFrame({"model": FORMULAS, "score": np.linspace(-3.5, 2.0, len(FORMULAS)),
                       "n": np.arange(-3, len(FORMULAS) - 3), "=col": ["-0.25"] * len(FORMULAS)})
    write_table(df, tmp_path, "t")
    assert _formula_cells(tmp_path / "t.csv") == []
    raw = pd.read_csv(tmp_path / "t.csv")
    assert raw["score"].tolist() == df["score"].tolist() and raw["n"].tolist() == df["n"].tolist()  # numbers
    assert raw["'=col"].tolist() == ["-0.25"] * len(FORMULAS) or raw["'=col"].tolist() == [-0.25] * len(FORMULAS)
    pq = pd.read_parquet(tmp_path / "t.parquet")
    assert pq["model"].tolist() == FORMULAS and "=col" in pq.columns  # Parquet: the values as they are
    (tmp_path / "t.parquet").unlink()
    back = read_table(tmp_path, "t")  # the CSV fallback of the tool's reader gives back every value
    assert back["model"].tolist() == FORMULAS and back["score"].tolist() == df["score"].tolist()


def test_write_csv_and_restore_are_inverse(tmp_path: Path) -> None:
    df = pd.DataFrame({"a": FORMULAS + ["x"], "b": range(len(FORMULAS) + 1)})
    write_csv(df, tmp_path / "x.csv")
    back = restore_csv_cells(pd.read_csv(tmp_path / "x.csv", dtype={"a": str}, keep_default_na=False))
    assert back["a"].tolist() == df["a"].tolist()


#: modules that write a CSV without stereoprobe.tables, each naming itself the exception in its docstring
CSV_EXCEPTIONS = {"dbb/builder.py"}  # the DBB builder's exported templates and variations: a task input format


def test_no_csv_writer_bypasses_write_csv() -> None:
    """Every CSV of the tool is written by stereoprobe.tables (pandas' ``to_csv`` or the ``csv`` module's writers
    elsewhere fail), the DBB builder's dataset files, read back cell for cell by the task, being the one
    exception, named as such in its module docstring."""
    import ast

    root = Path(__file__).resolve().parents[1] / "stereoprobe"
    writers = (".to_csv(", "csv.writer(", "csv.DictWriter(")
    direct = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                    if any(w in p.read_text(encoding="utf-8") for w in writers) and p.name != "tables.py")
    assert direct == sorted(CSV_EXCEPTIONS)
    for name in CSV_EXCEPTIONS:
        doc = ast.get_docstring(ast.parse((root / name).read_text(encoding="utf-8"))) or ""
        assert "named exception" in " ".join(doc.split()) and "write_csv" in doc, name


def test_every_leaderboard_csv_including_runs_is_safe(tmp_path: Path) -> None:
    """Model names such as ``=HYPERLINK(...)`` from a folder's tables and run_info reach no CSV as a formula."""
    from leaderboard.conftest import dbb_folder

    rng = np.random.default_rng(0)
    names = ['=HYPERLINK("http://evil.example","x")', "@SUM(A1)", "-cmd"]
    folder = dbb_folder(tmp_path / "runs", {m: rng.uniform(0, 40, 20) for m in names})
    runs = [{"task": "dbb", "model": m, "model_args": {"note": "=1+1"}, "model_roles": {}, "generate_config": {}}
            for m in names]
    (folder / "run_info.json").write_text(json.dumps({"probe": "dbb", "models": names, "runs": runs}))
    out = tmp_path / "lb"
    assert main(["leaderboard", str(folder), "--out", str(out), "--n-boot", "50", "-q"]) == 0
    written = sorted(out.rglob("*.csv"))
    assert out / "runs.csv" in written and len(pd.read_csv(out / "runs.csv")) == len(names)
    assert {p.name: _formula_cells(p) for p in written} == {p.name: [] for p in written}
    assert set(pd.read_parquet(out / "leaderboard.parquet")["model"]) == set(names)


def _columns() -> dict[str, pd.Series]:
    n = 3000
    words = np.array(["=SUM(A1)", "plain", "-1.5", "@x", "model/a", "'=y"], dtype=object)
    picks = np.arange(n) % len(words)
    with_none = words[picks].copy()
    with_none[::7] = None
    with_nan = words[picks].copy()
    with_nan[::5] = np.nan
    mixed = words[picks].copy()
    mixed[::9] = 3.5
    both = words[picks].copy()
    both[::4], both[1::4] = None, np.nan
    return {"object": pd.Series(words[picks], dtype=object), "none": pd.Series(with_none, dtype=object),
            "nan": pd.Series(with_nan, dtype=object), "str": pd.Series(words[picks], dtype="str"),
            "str_na": pd.Series(with_none, dtype="str"), "mixed": pd.Series(mixed, dtype=object),
            "none_and_nan": pd.Series(both, dtype=object), "category": pd.Series(words[picks], dtype="category"),
            "lists": pd.Series([["a"], "=b"] * (n // 2), dtype=object), "short": pd.Series(words, dtype=object)}


@pytest.mark.parametrize("name", list(_columns()))
def test_cells_mapped_once_per_distinct_text_equal_pandas_map(name: str) -> None:
    """The writer maps each distinct text once (tables._map_distinct): values and dtype are pandas' map."""
    from stereoprobe.tables import _map_distinct

    col = _columns()[name].set_axis(pd.RangeIndex(5, 5 + len(_columns()[name])))
    got, want = _map_distinct(col.rename("c"), csv_cell), col.rename("c").map(csv_cell)
    pd.testing.assert_series_equal(got, want, check_exact=True)
    assert got.dtype == want.dtype
