"""The jinja2 templates of the report pages (``stereoprobe/report/templates/``, shipped as package data).

One environment renders them all, with autoescape on: text passed to a template (a title, a model name, a
demo reason) is escaped there; HTML that stereoprobe built itself (a table, a figure, a section's blocks) is
passed as :class:`markupsafe.Markup` and inserted as it is. Styles and script are inlined by the templates,
so a page stays one file that opens offline.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

__all__ = ["COMPARISON", "DEMO_BANNER", "EXAMPLES", "FILES", "PAGE", "TABLE", "break_after_underscores", "render_page",
           "templates"]

PAGE = "page.html.j2"  # the skeleton of every report: head, inline styles and script, banner, sections
DEMO_BANNER = "demo_banner.html.j2"  # the DEMO banner on top of a page built from demo settings
TABLE = "table.html.j2"  # a sortable (and searchable) table
FILES = "files.html.j2"  # links to a table's or a figure's files
EXAMPLES = "examples.html.j2"  # the associations report's example stories, one block per association
COMPARISON = "comparison.html.j2"  # the leaderboard's models x headline figures table, readings and legend


@cache
def templates() -> jinja2.Environment:
    """The environment that loads the templates from the installed package (autoescape on, every file as
    written: its last line break kept, an undefined name an error)."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("stereoprobe.report", "templates"), autoescape=True,
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["break_after_underscores"] = break_after_underscores
    return env


def break_after_underscores(text: Any) -> Markup:
    """``text`` escaped, with a line-break opportunity after each underscore (a column name breaks only there,
    never mid-word in a narrow column)."""
    return escape(str(text)).replace("_", Markup("_<wbr>"))


def render_page(name: str, **context: Any) -> str:
    """Template ``name`` rendered with ``context`` (text is escaped; pass built HTML as Markup)."""
    return templates().get_template(name).render(**context)
