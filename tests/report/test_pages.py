"""The report pages come from jinja2 templates shipped as package data, with autoescape on, and stay one
offline file (issue 29.11)."""

from __future__ import annotations

import re
import tomllib
from importlib.resources import files
from pathlib import Path

import pandas as pd

from stereoprobe.report.demo import demo_banner
from stereoprobe.report.html import Section, render_report
from stereoprobe.report.pages import DEMO_BANNER, PAGE, templates

ROOT = Path(__file__).parents[2]
HOSTILE = "<script>alert(1)</script> & 'q' \"dq\""
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;q&#39; &#34;dq&#34;"  # markupsafe's escaping


def _template_text(name: str) -> str:
    return (files("stereoprobe.report") / "templates" / name).read_text(encoding="utf-8")


def test_the_page_inlines_the_styles_and_script_of_its_templates_and_links_no_asset() -> None:
    page = render_report("T", [Section("A").text("x")])
    # included as written: the files hold no jinja syntax that rendering would consume
    assert f"<style>\n{_template_text('page.css.j2')}</style>" in page
    assert f"<script>\n{_template_text('page.js.j2')}</script>" in page
    assert page.startswith("<!DOCTYPE html>\n<html lang='en'><head>") and page.endswith("</body></html>\n")
    assert page.count("<style>") == 1 and page.count("<script>") == 1
    assert not re.search(r"<(script|link|img)[^>]*(src|href)=", page)  # nothing fetched: opens offline


def test_text_is_escaped_and_built_html_is_kept() -> None:
    table = Section("T", anchor="t").table(pd.DataFrame({"model": [HOSTILE]}))
    page = render_report(HOSTILE, [Section(HOSTILE, anchor="s").raw("<p class='x'>built</p>"), table],
                         subtitle=HOSTILE, demo=HOSTILE)
    assert "<script>alert(1)" not in page  # no text reaches the page unescaped
    assert f"<title>{ESCAPED}</title>" in page and f"<h1>{ESCAPED}</h1>" in page
    assert f'<p class="meta">{ESCAPED}</p>' in page  # the subtitle
    assert f'<li><a href="#s">{ESCAPED}</a></li>' in page and f'<section id="s"><h2>{ESCAPED}</h2>\n' in page
    assert "<p class='x'>built</p></section>" in page  # a section's blocks inserted as built, not escaped twice
    assert f"<td>{ESCAPED}</td>" in page  # a table cell, from the table template
    assert f"this page was {ESCAPED}. Do not quote" in page and page.index("demo-banner") < page.index("<nav>")


def test_page_layout_without_navigation_subtitle_or_sections() -> None:
    page = render_report("T", [Section("A", anchor="a"), Section("B")], nav=False)
    assert "<nav>" not in page and 'class="meta"' not in page.split("</h1>")[1].split("<section")[0]
    body = page.split("</style>")[1]
    assert '<h1>T</h1>\n<section id="a"><h2>A</h2>\n' in body and '</section>\n<section id="s1"><h2>B</h2>' in body
    assert "Nothing to show in this section for these runs." in body  # an empty section says so
    assert "</h1><nav><ul></ul></nav>\n\n<script>" in render_report("E", [])


def test_the_demo_banner_is_one_template_shared_by_every_page() -> None:
    banner = demo_banner("built from <x>")
    assert banner == ('<div class="demo-banner" role="note"><b>DEMO</b> — this page was built from &lt;x&gt;. '
                      "Do not quote or compare these figures; no model is ranked.</div>")
    assert f"<h1>T</h1>{banner}<nav>" in render_report("T", [Section("A")], demo="built from <x>")


def test_templates_ship_in_the_wheel_and_jinja2_is_a_core_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = project["tool"]["setuptools"]["package-data"]["stereoprobe.report.templates"]
    shipped = sorted(p.name for p in (ROOT / "stereoprobe" / "report" / "templates").iterdir())
    assert shipped and all(any(Path(name).match(g) for g in globs) for name in shipped)
    assert {PAGE, DEMO_BANNER} <= set(shipped) and set(templates().list_templates()) == set(shipped)
    assert any(re.match(r"jinja2\b", d) for d in project["project"]["dependencies"])
    assert templates().autoescape is True


def test_a_table_from_its_template_escapes_every_text_and_keeps_sort_values_and_links() -> None:
    from stereoprobe.report.html import MISSING, table_html

    df = pd.DataFrame({"model_name": [HOSTILE, None], "score": [0.12345, float("nan")], "n": [3, 4],
                       "page": [(HOSTILE, "https://x.org/?a=1&b='2'"), ("no link", "")]})
    html = table_html(df, caption=HOSTILE, links=["page"], files=["t.csv"], search=True)
    assert "<script>alert(1)" not in html
    assert f"<caption class='meta'>{ESCAPED}</caption>" in html
    assert '<th class="sortkey">model_<wbr>name</th>' in html  # a column name breaks after its underscore only
    named = table_html(pd.DataFrame({HOSTILE: [1]}), search=True)  # a column named by the data
    assert f'<th class="sortkey">{ESCAPED}</th>' in named and f'aria-label="filter {ESCAPED}"' in named
    assert '<th><input type="search" aria-label="filter model_name" placeholder="filter"></th>' in html
    row1 = (f'<tr><td>{ESCAPED}</td><td data-v="0.12345">0.1235</td><td data-v="3">3</td>'
            f'<td><a href="https://x.org/?a=1&amp;b=&#39;2&#39;">{ESCAPED}</a></td></tr>')
    row2 = f'<tr><td data-v="">{MISSING}</td><td data-v="">{MISSING}</td><td data-v="4">4</td><td>no link</td></tr>'
    assert f"<tbody>\n{row1}\n{row2}\n</tbody></table></div>" in html  # one line per row, as before
    assert html.startswith('<div class="table-tools">') and '<span class="meta" id="' in html
    assert "2 of 2 rows</span>" in html and html.endswith('<p class="meta">files: <a href="t.csv">t.csv</a></p>')


def test_the_leaderboard_comparison_from_its_template_escapes_model_names() -> None:
    from stereoprobe.leaderboard.compare import comparison_html
    from stereoprobe.leaderboard.headline import METRIC_COLUMNS

    rows = [(HOSTILE, "dbb", "count_s_ge_20", 1.0, 0.5, 1.5, 100, "lower", ""),
            ("b", "dbb", "count_s_ge_20", 9.0, 6.0, 12.0, 100, "lower", "")]
    html = comparison_html(pd.DataFrame([dict(zip(METRIC_COLUMNS, r)) for r in rows], columns=METRIC_COLUMNS))
    assert "<script>alert(1)" not in html
    assert f"<tr><td>{ESCAPED}</td><td class=\"best\" data-v=\"1.0\">1 <span class=\"badge best\">best</span>" in html
    assert f"<li><b>{ESCAPED}</b>: " in html and html.endswith("</ul></details>")


def test_the_example_stories_from_their_template_escape_model_output() -> None:
    from stereoprobe.stereotales.mining.report import _examples_html

    examples = pd.DataFrame({"association_id": ["a'1"], "base_attribute": ["gender"], "base_value": ["woman"],
                             "compared_attribute": ["job"], "compared_value": [HOSTILE], "model": ["m"],
                             "slice": ["all"], "language": ["en"], "sample_id": [7], "epoch": [2],
                             "excerpt": [HOSTILE]})
    html = _examples_html(examples, ["a'1", "absent"])
    assert html == (f"<div class='example' id='ex-a&#39;1'><h3>gender = woman → job = {ESCAPED}</h3><ul><li>"
                    f"<span class='meta'>m · slice all · en · sample 7 (epoch 2)</span><br>{ESCAPED}</li></ul></div>")
