"""What the upstream copies' README (``../shared/refdata/README.md``) says about its files, read by the pin test
and the download test: the folder table (repository and commit of each folder), the files that are NOT
upstream's ("Paths" section: renderings and flattened copies that can never be downloaded) and the paragraph
naming the upstream files that are not there ("Not here ...").

The README is prose; the parsing is strict enough that a change of its shape fails the tests that read it rather
than letting them pass with nothing checked.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

_BACKTICKED = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class RefdataReadme:
    folders: dict[str, tuple[str, str]]  # folder -> (repository cell, commit cell) of the table
    exceptions: tuple[str, ...]  # paths/globs (a trailing "/" = a whole folder) that are not upstream files
    absent_text: str  # the paragraph naming upstream files that are not among the copies

    def is_exception(self, rel: str) -> bool:
        """True when ``rel`` (``<folder>/<path>``) is one of the listed files that are not upstream's."""
        return any(rel.startswith(p) if p.endswith("/") else fnmatch.fnmatchcase(rel, p) for p in self.exceptions)


def read_readme(refdata: Path) -> RefdataReadme:
    text = (refdata / "README.md").read_text(encoding="utf-8")
    folders: dict[str, tuple[str, str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 3:
            folders[cells[0].strip("`").rstrip("/")] = (cells[1], cells[2])
    assert folders, "refdata README: no folder table (| `folder/` | repository | commit | ...)"
    paths = text.split("## Paths", 1)
    assert len(paths) == 2, "refdata README: no '## Paths' section"
    exceptions: list[str] = []
    for line in paths[1].splitlines():
        if line.startswith("- "):  # "- `a` and `b`: why" -> a, b (the paths before the first "`:")
            exceptions += _BACKTICKED.findall(line.split("`:", 1)[0] + "`")
    for p in exceptions:
        assert p.split("/", 1)[0] in folders, f"refdata README: exception {p!r} is under no folder of the table"
    absent = re.search(r"^Not here\b.*?(?=\n\s*\n|\n`|\Z)", text, re.S | re.M)  # to a blank or a "`..." line
    assert absent, "refdata README: no 'Not here ...' paragraph naming the upstream files that are absent"
    return RefdataReadme(folders, tuple(exceptions), absent.group(0))
