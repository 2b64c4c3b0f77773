"""Every command and code block of the README and the docs runs as written.

The test extracts the fenced blocks marked ```bash (or ``sh``/``shell``) and ```python from ``README.md``,
``docs/*.md`` and the lm-eval task READMEs, and runs them in order, one document at a time, in a copy of a
demo-shaped workspace (:mod:`_docs_workspace`: ``results/demo/`` as ``make demo`` writes it, built from the test
suite's fixtures in a few minutes; ``logs/<probe>`` links to its logs): bash blocks with ``bash -euo pipefail``,
python blocks with this interpreter, in the workspace folder, offline, with ``.venv/bin`` first on ``PATH``.

A block that cannot run on a CPU machine without keys carries a marker on the line right above its fence,
invisible on the rendered page::

    <!-- doc-test: skip REASON -->

with REASON one of :data:`REASONS` (the test reports it as the skip reason). Other fenced blocks (``text``,
``bibtex``, output samples without a language) are not code and are not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "stereoprobe" / "lm_eval_tasks").glob("*/README.md"))]
RUN_LANGUAGES = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python"}
#: skip markers: REASON -> what the block needs
REASONS = {
    "api-key": "needs an API key (a model behind a paid API)",
    "gpu": "needs a GPU (or a model too large for a CPU test)",
    "paper-data": "needs the papers' full data (upstream downloads) or runs at paper scale",
    "network": "downloads a model or data set from a hub",
    "make": "one of the two top-level make commands (make test runs this test)",
    "vllm": "starts a real vLLM server from the venv of .ci/vllm_venv.sh (tests/vllm/test_real_server.py runs it)",
    "upstream": "reads pinned upstream files: run as a user with internet runs it, against a local server of the "
                "upstream copies (../shared/refdata) from an empty cache; skipped without the copies",
    "lm-eval": "runs lm-evaluation-harness on the default model, over the 10-minute limit of a block on a loaded "
               "2-core machine; tests/lm_eval/test_real_output.py runs the same lm-eval CLI on a smaller selection",
}
_MARKER = re.compile(r"^<!--\s*doc-test:\s*skip\s+(?P<reason>[\w-]+)\s*-->\s*$")
_FENCE = re.compile(r"^```\s*(?P<lang>[\w+-]*)\s*$")
TIMEOUT_S = 600
#: the README's pilots each end in a report (issue 35.8): the folders their post-processing lines write
PILOT_REPORTS = ("results/pilot_st", "results/pilot_dbb", "results/gb_demo")
#: a failure rate of 1 in a pilot's printed metrics (every extraction or answer failed; issue 35.7)
_ALL_FAILED = re.compile(r"^\s*\w*failure_rate\w*\s+1\.0+\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    document: Path
    line: int  # 1-based line of the opening fence
    language: str  # "bash" or "python"; "" for blocks that are not run
    code: str
    skip: str | None  # a REASONS key

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def extract_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with their language and skip marker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group("lang").lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        prev = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        marker = _MARKER.match(prev.strip())
        if marker and marker.group("reason") not in REASONS:
            raise AssertionError(f"{path}:{start}: unknown doc-test reason {marker.group('reason')!r}; "
                                 f"use one of {sorted(REASONS)}")
        blocks.append(Block(path, start + 1, RUN_LANGUAGES.get(lang, ""), "\n".join(lines[start + 1:j]),
                            marker.group("reason") if marker else None))
        i = j + 1
    return blocks


def test_extraction_and_markers(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("text\n\n```bash\necho run\n```\n\n<!-- doc-test: skip api-key -->\n```python\nimport x\n```\n"
                   "```text\nnot code\n```\n```\nplain\n```\n")
    blocks = extract_blocks(doc)
    assert [(b.language, b.skip, b.code) for b in blocks] == [
        ("bash", None, "echo run"), ("python", "api-key", "import x"), ("", None, "not code"), ("", None, "plain")]
    doc.write_text("<!-- doc-test: skip someday -->\n```bash\necho\n```\n")
    with pytest.raises(AssertionError, match="unknown doc-test reason 'someday'"):
        extract_blocks(doc)


def test_every_document_has_only_runnable_or_marked_code() -> None:
    """Every bash/python block either runs (below) or says why not; a synopsis is ``text``, not ``bash``."""
    runnable = [b for d in DOCUMENTS for b in extract_blocks(d) if b.language]
    assert len(runnable) >= 20  # the README and the docs hold that many code blocks
    for b in runnable:
        assert not re.search(r"\[--?[\w-]+[^\]]*\]", b.code) or b.language == "python", (
            f"{b.where}: optional-argument brackets in a {b.language} block: write it as a runnable command or "
            "mark the block ```text")


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo-shaped workspace, built once per test session (shared by xdist workers through a lock)."""
    from filelock import FileLock

    from _docs_workspace import build_workspace

    base = tmp_path_factory.getbasetemp()
    # xdist workers' base folders share the session's folder; without xdist the base folder is the session's own
    # (its parent is the user's folder of every session: a workspace there would outlive this code)
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root = shared / "docs-workspace"
    with FileLock(str(shared / "docs-workspace.lock")):
        if not (root / ".complete").is_file():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            build_workspace(root)
            (root / ".complete").write_text("ok\n")
    return root


@pytest.fixture(scope="session")
def upstream_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str] | None]:
    """The environment of a user with internet for blocks marked ``upstream``: the downloader pointed at a
    local server of the upstream copies in upstream's raw layout (tests/raw_server.py), an empty cache of its
    own; ``None`` without the copies (those blocks skip)."""
    from tests.raw_server import RawFiles, serve

    from stereoprobe import upstream

    refdata = Path(os.environ.get("STEREOPROBE_UPSTREAM_DIR") or ROOT.parent / "shared" / "refdata")
    if not (refdata / "README.md").is_file():
        yield None
        return
    with serve(RawFiles(refdata)) as base:
        yield {upstream.RAW_BASE_ENV: base, "STEREOPROBE_ALLOW_DOWNLOAD": "1",
               "STEREOPROBE_CACHE": str(tmp_path_factory.mktemp("docs-upstream-cache"))}


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MPLBACKEND="Agg",
               STEREOPROBE_NO_PROGRESS="1", INSPECT_LOG_LEVEL="warning", PYTHONUNBUFFERED="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("STEREOPROBE_UPSTREAM_DIR", None)  # paper-data blocks are skipped; upstream blocks download
    env.update(extra or {})
    return env


def _run_block(block: Block, cwd: Path, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if block.language == "bash":
        argv = ["bash", "-euo", "pipefail", "-c", block.code]
    else:
        argv = [sys.executable, "-c", block.code]
    return subprocess.run(argv, cwd=cwd, env=_env(extra), capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.slow
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_document_code_runs_as_written(document: Path, workspace: Path, tmp_path: Path,
                                       upstream_server: dict[str, str] | None) -> None:
    blocks = [b for b in extract_blocks(document) if b.language]
    if not blocks:
        pytest.skip("no code blocks")
    work = tmp_path / "ws"
    shutil.copytree(workspace, work, symlinks=True)
    failures, skipped, ran = [], [], 0
    for block in blocks:
        if block.skip and not (block.skip == "upstream" and upstream_server is not None):
            skipped.append(f"{block.where} ({REASONS[block.skip]})")
            continue
        done = _run_block(block, work, upstream_server if block.skip == "upstream" else None)
        ran += 1
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            failures.append(f"{block.where}: exit {done.returncode}\n--- block ---\n{block.code}\n--- output ---\n{tail}")
        elif m := _ALL_FAILED.search(done.stdout + done.stderr):
            failures.append(f"{block.where}: the run's metrics say every call failed: {m.group(0).strip()}")
    if document == ROOT / "README.md" and not failures:
        failures += [f"README.md: the pilot writing {d} ends in no report" for d in PILOT_REPORTS
                     if not (work / d / "report.html").is_file()]
    assert not failures, "\n\n".join(failures)
    if not ran:
        pytest.skip("every block is marked: " + "; ".join(skipped))
