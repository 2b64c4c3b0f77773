"""The marker of a folder a run made beside its output: a regular file the tool wrote, with content it verifies.

:mod:`stereoprobe.outputs` removes a folder named like its temporary folders (``.<name>.tmp-XXXXXXXX`` ...) as
a leftover of a crashed run only when the folder holds :data:`MARKER` written by :func:`mark`. The marker is
trusted only when

- it is a regular file (checked with ``lstat`` before anything opens it: a link, a FIFO, a socket or a device
  is never opened, so it can neither hang a run nor point elsewhere), small, and opened without following a
  link (``O_NOFOLLOW``, ``O_NONBLOCK``);
- its content is the fixed header :data:`HEADER` followed by the device and inode number of the folder that
  holds it (which a rename, and the exchange of two folders, keeps, and which a copy of the folder or a
  user's folder of the same name does not have).

A folder named like a temporary one whose marker is anything else is kept, never blocks the run, and gets one
notice on stderr (:func:`check`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

__all__ = ["HEADER", "MARKER", "check", "is_marked", "mark", "unmark"]

MARKER = ".stereoprobe-temporary"
HEADER = "made by stereoprobe for one run; removed by the next run into the folder beside it\n"
_MAX_SIZE = 4096


def _content(folder: Path) -> str:
    st = os.lstat(folder)
    return f"{HEADER}folder {st.st_dev}:{st.st_ino}\n"


def mark(folder: Path, *, strict: bool = False) -> None:
    """Write :data:`MARKER` into ``folder`` (a folder the run made or moved aside: a leftover if it stays). Not
    ``strict`` (a folder about to be removed): a failure only means a leftover the next run keeps."""
    try:
        (folder / MARKER).write_text(_content(folder), encoding="utf-8")
    except OSError:
        if strict:
            raise


def unmark(folder: Path) -> None:
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        (folder / MARKER).unlink()


def _read(path: Path) -> str | None:
    """The text of ``path`` when it is a small regular file (``lstat`` first: never open a link or a FIFO)."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_SIZE:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            return f.read(_MAX_SIZE + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def is_marked(folder: Path) -> bool:
    """Whether ``folder`` (a real folder, not a link) holds the marker :func:`mark` wrote into it."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
        return _read(folder / MARKER) == _content(folder)
    except OSError:
        return False


def check(folder: Path) -> bool:
    """:func:`is_marked`; when ``folder`` holds an entry named :data:`MARKER` that is not one the tool wrote (a
    link, a FIFO, another file, other text), one notice on stderr: the folder is kept."""
    if is_marked(folder):
        return True
    marker = folder / MARKER
    with contextlib.suppress(OSError):
        if os.path.lexists(marker) and stat.S_ISDIR(os.lstat(folder).st_mode):
            st = os.lstat(marker)
            kind = ("a link" if stat.S_ISLNK(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                    else "a file stereoprobe did not write" if stat.S_ISREG(st.st_mode) else "not a regular file")
            print(f"stereoprobe: notice: {folder} is named like a temporary folder of stereoprobe, but its "
                  f"{MARKER} is {kind}; the folder is kept (remove it yourself if it is not yours)",
                  file=sys.stderr)
    return False
