"""Wide tables scroll (issue 42.10): every ``<table>`` of a page sits inside an element whose class the page's own
stylesheet gives ``overflow`` or ``overflow-x`` ``auto``/``scroll``, so a table wider than the page (the judge
summary's share_2…share_5, GlobalBias validation's last column) scrolls instead of being cut at the right edge.

Read with the standard library's HTML parser and a plain reading of the page's ``<style>``, independent of the
templates that write them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def scrolling_classes(css: str) -> set[str]:
    """Classes that a rule of ``css`` (a plain selector ``.name`` or ``.a.b``, no descendant part) makes scroll
    horizontally: ``overflow`` or ``overflow-x`` set to ``auto`` or ``scroll``."""
    found: set[str] = set()
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        decls = {k.strip(): v.strip() for k, _, v in (d.partition(":") for d in body.split(";")) if k.strip()}
        value = decls.get("overflow-x") or decls.get("overflow", "")
        if value.split()[:1] and value.split()[0] in ("auto", "scroll"):
            for sel in selectors.split(","):
                m = re.fullmatch(r"\s*(?:div)?\.([\w-]+)\s*", sel)
                if m:
                    found.add(m.group(1))
    return found


class _Walker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str]]] = []
        self.tables: list[list[set[str]]] = []  # the classes of each table's ancestors
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        if tag == "table":
            self.tables.append([c for _, c in self.stack])
        if tag == "style":
            self._in_style = True
        if tag not in _VOID:
            self.stack.append((tag, classes))

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False if tag == "style" else self._in_style
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching open tag (tolerates omitted ends)
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.css.append(data)


def unscrolled_tables(page: str) -> tuple[int, list[int]]:
    """(number of tables, positions of those with no horizontally scrolling ancestor) of one HTML page."""
    w = _Walker()
    w.feed(page)
    scroll = scrolling_classes("".join(w.css))
    bad = [i for i, ancestors in enumerate(w.tables) if not any(c & scroll for c in ancestors)]
    return len(w.tables), bad


def assert_tables_scroll(folder: Path, at_least: int = 1) -> int:
    """Every table of every ``*.html`` page under ``folder`` scrolls; returns the number of tables checked, which
    must reach ``at_least`` (a walk over no table proves nothing)."""
    total = 0
    for page in sorted(folder.rglob("*.html")):
        n, bad = unscrolled_tables(page.read_text(encoding="utf-8"))
        assert not bad, f"{page}: table(s) {bad} of {n} sit in no horizontally scrolling wrapper"
        total += n
    assert total >= at_least, f"only {total} table(s) under {folder}"
    return total
