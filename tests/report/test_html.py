from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from stereoprobe.report.html import Section, write_report  # noqa: E402


def test_report_is_single_file_and_escapes_content(tmp_path: Path) -> None:
    df = pd.DataFrame({"value": ["<script>alert(1)</script>", "b"], "lift": [2.5, float("nan")], "n": [3, 4]})
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    s = Section("Associations", anchor="assoc").text("Two rows & a plot").table(df, caption="t").figure(fig, "f")
    out = write_report(tmp_path / "r.html", "Title", [s])
    text = out.read_text()
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;" in text
    assert "data:image/png;base64," in text
    assert 'data-v="2.5"' in text and "Two rows &amp; a plot" in text
    assert "http" not in text.split("<body>")[0]  # no external assets in the head


def test_table_truncation_is_announced(tmp_path: Path) -> None:
    df = pd.DataFrame({"i": range(10)})
    out = write_report(tmp_path / "r.html", "T", [Section("S").table(df, max_rows=3)])
    assert "first 3 of 10 rows" in out.read_text()
