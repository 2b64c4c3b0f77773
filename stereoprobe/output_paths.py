"""Where results may be written: checks of output paths, and file names derived from labels.

Every command that writes checks its output path before it reads anything (:func:`check_output_dir`,
:func:`check_output_file`, :func:`check_not_an_input`); a refusal is one :class:`InputError` line (exit
code 2) and nothing is written. Refused:

- an empty path (``--out ""`` would mean the current folder), the file-system root, the current folder or a
  folder above it (the run replaces the folder it names as a whole);
- for a folder: an existing file, device, pipe or socket, or a path below a file;
- for a file: an existing folder, device, pipe or socket, or a symbolic link (replacing it would replace the
  link, not what it points to);
- an output that is one of the run's inputs, or a folder inside an input folder (the next identical run would
  read its own results), unless the command reads only its own kind of folders there (the leaderboard).

:func:`safe_file_name` turns a label (a model name, a run label) into a file name that stays inside the
folder: no path separators, no ``..``, no control characters, at most :data:`MAX_NAME` characters, and two
different labels never share a file name.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from stereoprobe.errors import InputError

__all__ = ["HUB_ENTRY", "MAX_NAME", "check_not_an_input", "check_output_dir", "check_output_file", "linked_target",
           "safe_file_name", "version_link_target"]

MAX_NAME = 100  # characters of a label-derived file name (without its extension); file systems allow 255 bytes
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a path segment kept as it is


def _absolute(path: str | Path) -> Path:
    return Path(os.path.abspath(path))


def _common_checks(text: str | Path, what: str) -> Path:
    if str(text).strip() == "":
        raise InputError(f"{str(text)!r}: empty path (name the {what} to write)")
    if "\0" in str(text):
        raise InputError(f"{str(text)!r}: the path holds a NUL character")
    try:
        str(text).encode("utf-8")
    except UnicodeEncodeError as e:  # a byte that is not UTF-8 (os.fsdecode's surrogate escape)
        shown = str(text).encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise InputError(f"{shown}: the path holds a byte that is not UTF-8 (at character {e.start}); tables, "
                         f"reports and run_info.json name it, so give the {what} a UTF-8 name") from None
    p = _absolute(text)
    if p == Path(p.anchor):
        raise InputError(f"{text}: is the file-system root (name a {what} below it)")
    cwd = _absolute(os.getcwd())
    if p == cwd or p in cwd.parents:
        raise InputError(f"{text}: is the current folder or a folder above it, which the run would replace; "
                         f"name a new {what} (e.g. --out results)")
    for parent in p.parents:
        if parent.exists() and not parent.is_dir():
            raise InputError(f"{text}: {parent} is a file, not a folder")
    return p


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def version_link_target(out: str | Path) -> Path | None:
    """The version folder ``.<name>.v-XXXXXXXX`` beside ``out`` that ``out`` links to, when ``out`` is such a
    link (how :mod:`stereoprobe.outputs` keeps a folder on a file system that cannot exchange two folders in
    one rename); else None."""
    p = Path(os.path.abspath(out))
    try:
        target = os.readlink(p)
    except (OSError, ValueError):
        return None
    if re.fullmatch(rf"\.{re.escape(p.name)}\.v-[a-z0-9_]{{8}}", target):
        return p.parent / target
    return None


HUB_ENTRY = "hub_eval_results"
"""The entry of the leaderboard's ``--out`` that holds the Hub files; ``--hub-eval-results`` links to it."""


def linked_target(link: str | Path) -> Path | None:
    """The entry ``<folder>/hub_eval_results`` that ``link`` points to, when it is such a link (made by
    :func:`stereoprobe.output_links.link_dir`; the folder may be gone), else None."""
    p = Path(os.path.abspath(link))
    try:
        target = os.readlink(p)
    except (OSError, ValueError):
        return None
    if Path(target).name != HUB_ENTRY:
        return None
    return Path(os.path.normpath(p.parent / target))


def _follow_links(p: Path, text: str | Path) -> Path:
    """The folder the link ``p`` leads to, followed one link at a time and stopping at a folder kept as a link
    to its version (so that a link to such a folder locks and replaces the folder, not its current version)."""
    for _ in range(40):
        if version_link_target(p) is not None or not p.is_symlink():
            return p
        p = Path(os.path.abspath(p.parent / os.readlink(p)))
    raise InputError(f"{text}: too many levels of symbolic links")


def check_output_dir(text: str | Path) -> Path:
    """The absolute folder to write for ``--out text``; raises :class:`InputError` when it may not be written.

    A symbolic link to a folder is followed (the folder it points to is written, the link stays); a dangling
    link is refused. A link to its own version folder (:func:`version_link_target`) is the folder itself, and
    so is a link to another output's entry (:mod:`stereoprobe.output_links`, e.g. ``--hub-eval-results``).
    """
    p = _common_checks(text, "folder")
    if version_link_target(p) is not None or linked_target(p) is not None:  # kept as a link by stereoprobe
        return p
    if p.is_symlink():
        if not p.is_dir():
            raise InputError(f"{text}: is a symbolic link to nothing (name a folder)")
        p = _follow_links(p, text)
        _common_checks(p, "folder")
    if p.exists() and not p.is_dir():
        st = p.stat()
        what = "a file" if stat.S_ISREG(st.st_mode) else _kind(st)
        raise InputError(f"{text}: exists and is not a folder (it is {what})")
    return p


def check_output_file(text: str | Path) -> Path:
    """The absolute file to write for ``--out text``; raises :class:`InputError` when it may not be written."""
    p = _common_checks(text, "file")
    if p.is_symlink():
        raise InputError(f"{text}: is a symbolic link (name the file itself; the link would be replaced)")
    if p.is_dir():
        raise InputError(f"{text}: is a folder (expected the file to write)")
    if p.exists():
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{text}: is {_kind(st)} (expected a regular file to write)")
    return p


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_not_an_input(out: str | Path, inputs: Iterable[str | Path], *, inside_inputs_ok: bool = False) -> None:
    """Raise :class:`InputError` when the output ``out`` is one of ``inputs`` or (unless ``inside_inputs_ok``)
    lies inside an input folder. Inputs inside the output folder are allowed (its unrelated entries are
    kept)."""
    o = _absolute(out)
    o_real = Path(os.path.realpath(o))
    for item in inputs:
        i = _absolute(item)
        if _same(o, i) or o_real == Path(os.path.realpath(i)):
            raise InputError(f"--out {out}: is also an input ({item}); write the results elsewhere")
        if inside_inputs_ok or not i.is_dir():
            continue
        i_real = Path(os.path.realpath(i))
        if i in o.parents or i_real in o_real.parents:
            raise InputError(f"--out {out}: is inside the input folder {item} (the next run would read its own "
                             "results); write the results outside the inputs")


def safe_file_name(label: str, *, max_len: int = MAX_NAME) -> str:
    """A file name (without extension) for ``label``, confined to its folder and distinct per label.

    ``org/model`` gives ``org__model`` (the Hub's convention); a label that is already such a name is kept.
    Anything else (other characters, ``..``, a leading dot, ``__`` or ``_`` next to ``/``, which the
    ``/`` -> ``__`` rule could confuse, or more than ``max_len`` characters) keeps its safe characters and gets
    ``-`` plus the first 10 hex digits of the label's SHA-256, so that two labels never share a file name and
    one label always gets the same one.

    >>> safe_file_name("openai/gpt-4o")
    'openai__gpt-4o'
    >>> safe_file_name("../../etc/passwd")
    'etc__passwd-3754d6cb3a'
    """
    text = str(label)
    segments = text.split("/")
    plain = (all(_PLAIN.fullmatch(s) and s not in (".", "..") for s in segments) and "__" not in text
             and not any(s.startswith("_") or s.endswith("_") for s in segments[1:] + segments[:-1]))
    name = "__".join(segments)
    if plain and len(name) <= max_len:
        return name
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-") or "label"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{cleaned[: max_len - 11].rstrip('._-')}-{digest}"
