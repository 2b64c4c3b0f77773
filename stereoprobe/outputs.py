"""Safe output folders: a run's results appear in ``--out`` all at once, or not at all.

:func:`atomic_output_dir` is used by every command that writes a folder of tables and reports (and by library
functions that write a folder); ``stereoprobe.cli.common`` re-exports it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from stereoprobe.errors import InputError



class _Lock:
    """An exclusive, non-blocking ``flock`` on ``path`` (released when the process ends, even on a crash)."""

    def __init__(self, path: Path, out: Path) -> None:
        self.path, self.out, self.fd = path, out, -1

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover (Windows): exclusive creation instead of a lock
            try:
                self.fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                raise self._busy() from None
            return
        while True:
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise self._busy() from None
            try:  # the holder before us may have removed the file between our open and our lock
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self.fd = fd
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                return
            os.close(fd)

    def _busy(self) -> InputError:
        return InputError(f"{self.out}: another stereoprobe run is writing into this folder (lock {self.path}); "
                          "wait for it to finish or choose another --out")

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self.fd)
            self.fd = -1


def _replace(src: Path, dst: Path, trash: Path) -> None:
    """Move ``src`` to ``dst``, replacing a file or folder already there (a folder goes to ``trash`` first)."""
    if dst.is_dir() and not dst.is_symlink():
        os.replace(dst, trash / dst.name)
    os.replace(src, dst)


@contextlib.contextmanager
def atomic_output_dir(out: str | Path) -> Iterator[Path]:
    """Build a run's results in a temporary folder beside ``out``; move them into ``out`` only on success.

    Yields the temporary folder: write every file of the run into it. On normal exit, each top-level file or
    folder written there replaces the entry of the same name in ``out`` (``out`` is created if needed);
    **files in ``out`` that this run did not write are kept** (e.g. the tables of another command sharing
    the folder). Each file is replaced with ``os.replace`` (atomic on one file system); a replaced folder is
    swapped as a whole. On an exception nothing in ``out`` changes, the temporary folder is removed (and so
    are parent folders this call created), and the exception propagates.

    Concurrency: a lock file ``.<name>.lock`` beside ``out`` is held for the whole run; a second run into
    the same ``out`` raises :class:`InputError` at once (one line) instead of mixing tables. The lock is an
    ``flock``: a crashed run never leaves a stale lock behind.

    Raises :class:`InputError` if ``out`` (or one of its parents) exists and is not a folder.
    """
    shown = Path(out)  # as the user wrote it, for messages
    out = Path(os.path.abspath(out))  # "." or "results/.." name a real folder with a parent
    if out.exists() and not out.is_dir():
        raise InputError(f"{shown}: exists and is not a folder (--out must be a folder)")
    created: list[Path] = []
    for parent in reversed(out.parents):
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{shown}: {parent} is a file, not a folder")
            continue
        parent.mkdir()
        created.append(parent)
    lock = _Lock(out.parent / f".{out.name}.lock", shown)
    try:
        lock.acquire()
    except BaseException:
        _remove_created(created)
        raise
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
        if not out.exists():
            os.replace(tmp, out)
        else:
            trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            try:
                for entry in sorted(tmp.iterdir()):
                    _replace(entry, out / entry.name, trash)
            finally:
                shutil.rmtree(trash, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        lock.release()
        if not out.exists():  # the run failed: leave no folder behind that it created
            _remove_created(created)


def _remove_created(created: list[Path]) -> None:
    for parent in reversed(created):
        with contextlib.suppress(OSError):
            parent.rmdir()  # only if still empty
