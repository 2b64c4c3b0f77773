"""Finding inputs: inspect logs, lm-eval samples and result files, tables; the one split of a command's inputs
into these kinds (:func:`partition`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stereoprobe.errors import InputError

LOG_SUFFIXES = (".eval", ".json")
EVAL_SET_INDEX_FILES = frozenset({"eval-set.json", "logs.json"})
TABLE_SUFFIXES = (".csv", ".parquet")
#: ``samples_<task>_<time>.jsonl`` (``lm_eval/loggers/evaluation_tracker.py`` of EleutherAI/lm-evaluation-harness)
SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[0-9\-.:]+)\.jsonl$")
RESULTS_FILE = re.compile(r"^results(_.*)?\.json$")

KINDS = ("logs", "lm_eval", "lm_eval_results", "tables")


def wanted_tasks(task: str | Sequence[str] | None) -> set[str] | None:
    """``None`` (every task), else the set of task names."""
    if task is None:
        return None
    return {task} if isinstance(task, str) else set(task)


def _looks_like_inspect_json(path: Path) -> bool:
    """Whether a ``.json`` file starts like an inspect log (an ``EvalLog``: ``version`` and ``eval`` keys)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except OSError:
        return False
    return b'"eval"' in head and b'"version"' in head


def _is_log_candidate(path: Path) -> bool:
    if path.name.startswith(".") or path.name in EVAL_SET_INDEX_FILES or path.suffix not in LOG_SUFFIXES:
        return False
    return path.suffix == ".eval" or _looks_like_inspect_json(path)


def walk_files(folder: Path) -> list[Path]:
    """Every file below ``folder`` (sorted), dot files and dot folders left out. Symbolic links to folders are
    followed, each real folder walked once (a second link to a folder already walked adds nothing). A link to
    a folder that holds the one being walked (a loop, or a link to ``/``) is an :class:`InputError` naming the
    link, as are a subfolder that cannot be listed and a link whose target does not exist (never skipped
    without a word)."""
    found: list[Path] = []
    walked: set[str] = set()

    def fail(exc: OSError) -> None:
        raise InputError(f"{exc.filename}: folder cannot be read ({exc.strerror})")

    def above(link: str, real: str) -> bool:  # the link's target holds the folder it sits in
        target = os.path.realpath(link)
        return real == target or real.startswith(target.rstrip(os.sep) + os.sep)

    for root, dirs, files in os.walk(folder, onerror=fail, followlinks=True):
        real = os.path.realpath(root)
        if real in walked:  # a folder reached twice through links: its files are already found
            dirs[:] = []
            continue
        walked.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in dirs:
            link = os.path.join(root, d)
            if os.path.islink(link) and above(link, real):
                raise InputError(f"{link}: a symbolic link to {os.readlink(link)!r}, a folder holding it (a loop); "
                                 "remove the link or give its target as an input")
        for name in files:
            if name.startswith("."):
                continue
            p = Path(root) / name
            if p.is_file():
                found.append(p)
            elif p.is_symlink() and not p.exists():
                raise InputError(f"{p}: a symbolic link to {os.readlink(p)!r}, which does not exist (a log or "
                                 "folder moved away?); remove the link or restore its target")
    return sorted(found)


def find_logs(inputs: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders (recursively) into a sorted list of inspect log files.

    In folders: ``.eval`` files and ``.json`` files that start like an inspect log; ``eval-set.json``,
    ``logs.json``, dot files and dot folders are skipped. A file named explicitly must be a log: an
    eval-set index or another suffix is an :class:`InputError`. A missing path or an unreadable subfolder is
    an :class:`InputError`.
    """
    found: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found += [q for q in walk_files(p) if _is_log_candidate(q)]
        elif p.is_file():
            if p.name in EVAL_SET_INDEX_FILES:
                raise InputError(f"{p}: an 'inspect eval-set' index file, not a log; pass its folder instead")
            if p.suffix not in LOG_SUFFIXES:
                raise InputError(f"{p}: not an inspect log (expected a .eval or .json file)")
            found.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return list(dict.fromkeys(found))


def find_lm_eval_samples(inputs: Iterable[str | Path], task: str | Sequence[str] | None = None) -> list[Path]:
    """``samples_<task>_<time>.jsonl`` files under ``inputs`` (files or folders), of ``task`` when given."""
    wanted = wanted_tasks(task)
    found: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            cands = [q for q in walk_files(p) if q.name.startswith("samples_") and q.suffix == ".jsonl"]
        elif p.is_file():
            if not SAMPLES_FILE.match(p.name):
                raise InputError(f"{p}: not an lm-eval samples file (expected samples_<task>_<time>.jsonl)")
            cands = [p]
        else:
            raise InputError(f"{p}: no such file or folder")
        for q in cands:
            m = SAMPLES_FILE.match(q.name)
            if m and (wanted is None or m["task"] in wanted):
                found.append(q)
    return list(dict.fromkeys(found))


@dataclass
class Partition:
    """A command's inputs split once by kind (:func:`partition`): inspect logs, lm-eval samples files,
    lm-eval results files, tables (``.csv`` / ``.parquet``); ``explicit`` holds the files named on the
    command line (a folder's files are found by searching it)."""

    logs: list[Path] = field(default_factory=list)
    lm_eval: list[Path] = field(default_factory=list)
    lm_eval_results: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)
    explicit: set[Path] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.logs or self.lm_eval or self.lm_eval_results or self.tables)


def partition(inputs: Iterable[str | Path], kinds: Sequence[str] = KINDS, *, what: str = "inputs",
              lm_eval_task: str | Sequence[str] | None = None, wrong_file: str | None = None) -> Partition:
    """Split files and folders (searched recursively, dot files and folders left out) into a :class:`Partition`.

    ``kinds``: the kinds the command reads (a subset of ``"logs"``, ``"lm_eval"``, ``"lm_eval_results"``,
    ``"tables"``). In folders every file of a wanted kind is taken (lm-eval samples only of
    ``lm_eval_task`` when given; ``.json`` files only when they start like an inspect log or are named
    ``results*.json``); other files are ignored. A file named explicitly must be of a wanted kind, else an
    :class:`InputError` naming it and the kinds expected (or ``"<file>: <wrong_file>"``); so is a missing
    path, an unreadable subfolder, and inputs holding nothing of a wanted kind (``what`` names them).
    """
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown input kinds {sorted(unknown)}; use {KINDS}")
    inputs = [str(i) for i in inputs]
    out = Partition()
    wanted = wanted_tasks(lm_eval_task)
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            for q in walk_files(p):
                kind = _kind(q, kinds)
                if kind == "lm_eval":
                    m = SAMPLES_FILE.match(q.name)
                    if wanted is not None and m is not None and m["task"] not in wanted:
                        continue
                if kind is not None:
                    getattr(out, kind).append(q)
        elif p.is_file():
            kind = _kind(p, kinds, explicit=True)
            if kind is None:
                raise InputError(f"{p}: {wrong_file or f'not one of the {what} this command reads'} "
                                 f"({_describe(kinds)})")
            if kind == "logs":
                find_logs([p])  # an eval-set index named as a log: its own message
            if kind == "lm_eval" and not SAMPLES_FILE.match(p.name):
                raise InputError(f"{p}: not an lm-eval samples file (expected samples_<task>_<time>.jsonl)")
            getattr(out, kind).append(p)
            out.explicit.add(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    for kind in KINDS:
        setattr(out, kind, list(dict.fromkeys(getattr(out, kind))))
    if not out:
        raise InputError(f"no {what} ({_describe(kinds)}) in {', '.join(inputs) or 'the inputs'}")
    return out


def _kind(p: Path, kinds: Sequence[str], explicit: bool = False) -> str | None:
    name, suffix = p.name, p.suffix
    if "lm_eval" in kinds and suffix == ".jsonl" and (explicit or name.startswith("samples_")):
        return "lm_eval"
    if "lm_eval_results" in kinds and RESULTS_FILE.match(name):
        return "lm_eval_results"
    if "tables" in kinds and suffix in TABLE_SUFFIXES:
        return "tables"
    if "logs" in kinds and suffix in LOG_SUFFIXES:
        if explicit:
            return "logs"
        return "logs" if _is_log_candidate(p) else None
    return None


def _describe(kinds: Sequence[str]) -> str:
    names = {"logs": "inspect logs .eval/.json", "lm_eval": "lm-eval samples_*.jsonl",
             "lm_eval_results": "lm-eval results_*.json", "tables": "tables .csv/.parquet"}
    return ", ".join(names[k] for k in KINDS if k in kinds)
