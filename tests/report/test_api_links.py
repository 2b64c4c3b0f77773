"""The README's Python API block writes the same reports as the command line, with every link relative to the
page that holds it (issue 42.3): the block runs as written in a fresh copy of the demo-shaped workspace
(``tests/_docs_workspace.py``), from that folder, with relative output folders, and every ``href``/``src`` of
every page it writes resolves to a file beside the page."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_docs import ROOT, _run_block, extract_blocks, workspace  # noqa: E402,F401  (the session workspace)

pytestmark = pytest.mark.slow  # the workspace (shared with tests/test_docs.py) and the block's five reports

_LINK = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")


def _local_links(page: Path) -> list[str]:
    """The page's links to files (no anchor-only link, no web address, no inline data)."""
    out = []
    for href in _LINK.findall(page.read_text(encoding="utf-8")):
        parts = urlsplit(href)
        if parts.scheme or href.startswith("#") or href.startswith("data:"):
            continue
        out.append(unquote(parts.path))
    return out


def test_readme_python_block_writes_pages_whose_links_resolve(workspace: Path, tmp_path: Path) -> None:  # noqa: F811
    [block] = [b for b in extract_blocks(ROOT / "README.md") if b.language == "python" and "results/api" in b.code]
    work = tmp_path / "ws"
    shutil.copytree(workspace, work, symlinks=True)
    shutil.rmtree(work / "results" / "api", ignore_errors=True)
    done = _run_block(block, work)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    pages = sorted((work / "results" / "api").rglob("*.html"))
    # one page per output folder the block writes (StereoTales, judge, DBB, GlobalBias, leaderboard)
    assert {p.parent.name for p in pages} >= {"st", "judge", "dbb", "globalbias", "leaderboard"}, pages
    broken, checked = [], 0
    for page in pages:
        for link in _local_links(page):
            checked += 1
            if not (page.parent / link).exists():
                broken.append(f"{page.relative_to(work)}: {link}")
    assert checked > 20 and not broken, "\n".join(broken[:40])
    # every table a page's folder holds is linked from that page (a Files row without its link is a missing link)
    unlinked = [f"{page.relative_to(work)}: {t.name}" for page in pages for t in sorted(page.parent.glob("*.csv"))
                if t.name not in {Path(link).name for link in _local_links(page)}]
    assert not unlinked, "\n".join(unlinked[:40])
    # every table file a GlobalBias page names in its Files section is a link (none listed without one)
    gb = (work / "results" / "api" / "globalbias" / "report.html").read_text(encoding="utf-8")
    for name in ("incomplete_units", "min_groups", "headline", "bias_scores"):
        assert f'href="{name}.csv"' in gb, name
