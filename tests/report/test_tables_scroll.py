"""Wide tables scroll (issue 42.10), checked on pages the page writer renders here; the pages of the demo-shaped
and reference folders, the judge report and GlobalBias validation are walked by the tests that build them
(tests/report/test_one_interval_per_figure.py, tests/stereotales/test_judge_report.py,
tests/globalbias/test_validation_subset.py) with the same check (tests/page_tables.py)."""

from __future__ import annotations

import pandas as pd
from page_tables import scrolling_classes, unscrolled_tables

from stereoprobe.report.html import Section, render_report

CSS = "<style>.wrap{overflow-x:auto}.tall{max-height:3rem;overflow:hidden}</style>"


def test_the_check_finds_a_table_outside_a_scrolling_wrapper() -> None:
    """The check can fail: a bare table, one in a wrapper that clips, one in a wrapper the stylesheet never
    styles."""
    assert scrolling_classes(".a{overflow:auto}.b{overflow-x:scroll;color:red}.c{overflow:hidden}"
                             ".d .e{overflow:auto}") == {"a", "b"}
    assert unscrolled_tables(f"{CSS}<table></table>") == (1, [0])
    assert unscrolled_tables(f"{CSS}<div class='tall'><table></table></div>") == (1, [0])
    assert unscrolled_tables(f"{CSS}<div class='other'><table></table></div>") == (1, [0])
    assert unscrolled_tables(f"{CSS}<div class='x wrap'><p>a<br>b</p><table></table></div><table></table>") \
        == (2, [1])


def test_a_page_with_a_wide_table_lets_it_scroll() -> None:
    wide = pd.DataFrame({f"share_{i}_of_a_long_column_name": [0.123456] for i in range(1, 30)})
    page = render_report("T", [Section("A").table(wide), Section("B").table(wide, search=True)])
    assert unscrolled_tables(page) == (2, [])
