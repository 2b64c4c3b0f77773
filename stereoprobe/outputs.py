"""Safe outputs: a run's results replace ``--out`` as a whole, in one step, or not at all.

:func:`atomic_output_dir` is used by every command that writes a folder of tables and reports (and by library
functions that write a folder); ``stereoprobe.cli.common`` re-exports it. :func:`atomic_output_file` does the
same for a single file. How a folder is replaced:

1. **Lock.** ``.<name>.lock`` beside ``out`` is held with an exclusive ``flock`` (:func:`output_lock`); the
   command line takes it before reading any input, so a second run into the same ``out`` stops at once with
   one line, and never both write. A crashed run leaves no stale lock (the kernel drops it with the process).
2. **Build beside.** The run writes into a new folder ``.<name>.tmp-XXXXXXXX`` beside ``out``. Entries of the
   old ``out`` that this run does not write and that an earlier run of the *same writer* did not write either
   (another command's tables sharing the folder, the user's files) are carried into it (hard links, else
   copies); the earlier run's own entries that this run no longer writes are dropped (unless another writer
   wrote them too), so no stale table survives an option change. ``.stereoprobe-outputs.json`` in the folder records which writer wrote which
   entries.
3. **Swap.** One ``renameat2(RENAME_EXCHANGE)`` swaps the new folder and ``out``; the old folder, now beside,
   is removed as a whole. Where the file system cannot exchange, ``out`` is renamed to ``.<name>.old`` and the
   new folder to ``out``; a crash between those two renames is repaired by the next run (the old folder comes
   back). A crash at any step leaves ``out`` entirely old or entirely new.
4. A write that fails for lack of space or permission (``ENOSPC``, ``EACCES`` ...) becomes one
   :class:`InputError` line naming the path; ``out`` keeps its earlier results.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import errno
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from stereoprobe.errors import InputError
from stereoprobe.output_paths import check_not_an_input, check_output_dir, check_output_file

__all__ = ["MANIFEST", "atomic_output_dir", "atomic_output_file", "output_lock", "writer"]

MANIFEST = ".stereoprobe-outputs.json"
DISK_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG}
_WRITER: contextvars.ContextVar[str] = contextvars.ContextVar("stereoprobe_output_writer", default="python")


@contextlib.contextmanager
def writer(name: str) -> Iterator[None]:
    """Name the writer of the outputs written inside (the command line names each command)."""
    token = _WRITER.set(name)
    try:
        yield
    finally:
        _WRITER.reset(token)


# ------------------------------------------------------------------------------------------------ lock


class _Lock:
    """An exclusive, non-blocking ``flock`` on ``path`` (released when the process ends, even on a crash)."""

    def __init__(self, path: Path, out: Path | str) -> None:
        self.path, self.out, self.fd = path, out, -1

    def acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover (Windows): exclusive creation instead of a lock
            try:
                self.fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                raise self.busy() from None
            return
        while True:
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise self.busy() from None
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

    def busy(self) -> InputError:
        return InputError(f"{self.out}: another stereoprobe run is writing into this folder (lock {self.path}); "
                          "wait for it to finish or choose another --out")

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self.fd)
            self.fd = -1


@dataclass
class _Held:
    thread: int
    lock: _Lock
    depth: int
    building: bool = False


_HELD: dict[str, _Held] = {}
_GUARD = threading.Lock()


def _make_parents(out: Path, shown: str | Path) -> list[Path]:
    created: list[Path] = []
    try:
        for parent in reversed(out.parents):
            if parent.exists():
                if not parent.is_dir():
                    raise InputError(f"{shown}: {parent} is a file, not a folder")
                continue
            parent.mkdir()
            created.append(parent)
    except BaseException:
        _remove_created(created)
        raise
    return created


def _remove_created(created: list[Path]) -> None:
    for parent in reversed(created):
        with contextlib.suppress(OSError):
            parent.rmdir()  # only if still empty


@contextlib.contextmanager
def output_lock(out: str | Path, *, build: bool = False) -> Iterator[Path]:
    """Hold the lock of the output folder ``out`` (its parents are created; removed again if ``out`` never
    appears); yields the absolute folder. Re-entrant within one thread (the command line takes it for the whole
    run, :func:`atomic_output_dir` again inside, with ``build``); another thread or process, or a second
    ``build`` inside a first, gets :class:`InputError`."""
    shown = out
    path = check_output_dir(out)
    key = str(path.parent / f".{path.name}.lock")
    me = threading.get_ident()
    with _GUARD:
        held = _HELD.get(key)
        if held is not None and (held.thread != me or (build and held.building)):
            raise held.lock.busy()
        created: list[Path] = []
        if held is None:
            created = _make_parents(path, shown)
            lock = _Lock(Path(key), shown)
            try:
                lock.acquire()
            except BaseException:
                _remove_created(created)
                raise
            held = _HELD[key] = _Held(me, lock, 0)
        held.depth += 1
        outer_building = held.building
        held.building = held.building or build
    try:
        yield path
    finally:
        with _GUARD:
            held.building = outer_building
            held.depth -= 1
            if held.depth == 0:
                del _HELD[key]
                held.lock.release()
        if not path.exists():  # the run failed: leave no folder behind that it created
            _remove_created(created)


# ------------------------------------------------------------------------------------------------ swap


class _NoExchange(Exception):
    """The file system (or the C library) cannot exchange two paths in one rename."""


def _exchange(a: Path, b: Path) -> None:
    """Swap the two paths ``a`` and ``b`` in one atomic rename (Linux ``renameat2(RENAME_EXCHANGE)``)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        raise _NoExchange from None
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise _NoExchange
        raise OSError(err, os.strerror(err), str(b))


def _discard(folder: Path) -> None:
    """Remove an old output folder as a whole."""
    shutil.rmtree(folder, ignore_errors=True)


def _old(out: Path) -> Path:
    return out.parent / f".{out.name}.old"


def _swap(new: Path, out: Path) -> None:
    """Put the folder ``new`` in place of ``out`` in one rename; the old ``out`` is removed as a whole."""
    if not out.exists():
        os.rename(new, out)
        return
    try:
        _exchange(new, out)
        _discard(new)  # ``new`` now names the old folder
    except _NoExchange:
        old = _old(out)
        os.rename(out, old)
        os.rename(new, out)  # a crash before this line: the next run puts ``old`` back
        _discard(old)


def _recover(out: Path) -> None:
    """Repair what a crashed run into ``out`` left beside it (call with the lock held)."""
    old = _old(out)
    if old.is_dir():
        if out.exists():
            _discard(old)
        else:  # interrupted between the two renames of a swap: the earlier results come back
            os.rename(old, out)
    pattern = re.compile(rf"\.{re.escape(out.name)}\.(tmp|old)-[a-z0-9_]{{8}}")
    with contextlib.suppress(OSError):
        for p in out.parent.iterdir():
            if pattern.fullmatch(p.name) and p.is_dir() and not p.is_symlink():
                _discard(p)


# ----------------------------------------------------------------------------------- carry and manifest


def _read_manifest(out: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        return {str(k): [str(e) for e in v] for k, v in data.get("writers", {}).items() if isinstance(v, list)}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


def _carry(src: Path, dst: Path) -> None:
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
    elif src.is_dir():
        shutil.copytree(src, dst, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(str(src), str(dst))


def _complete(new: Path, out: Path, name: str) -> None:
    """Carry into ``new`` the entries of ``out`` that stay, and write the manifest."""
    written = sorted(p.name for p in new.iterdir() if p.name != MANIFEST)
    before = _read_manifest(out) if out.is_dir() else {}
    others = {e for w, es in before.items() if w != name for e in es}
    dropped = set(before.get(name, [])) - others  # an entry another writer also wrote stays
    if out.is_dir():
        for entry in sorted(out.iterdir()):
            if entry.name == MANIFEST or entry.name in written or entry.name in dropped:
                continue
            _carry(entry, new / entry.name)
    writers = {w: [e for e in es if (new / e).exists() or (new / e).is_symlink()]
               for w, es in before.items() if w != name}
    writers[name] = written
    (new / MANIFEST).write_text(json.dumps({"writers": writers}, indent=1) + "\n", encoding="utf-8")


def _disk_error(exc: OSError, new: Path, out: Path | str) -> InputError:
    name = exc.filename
    if name:
        with contextlib.suppress(ValueError):
            name = str(Path(out) / Path(os.path.abspath(name)).relative_to(new))
    what = (exc.strerror or str(exc)).lower()
    return InputError(f"{name or out}: cannot write the results ({what}); {out} keeps its earlier results")


# --------------------------------------------------------------------------------------------- the API


@contextlib.contextmanager
def atomic_output_dir(out: str | Path, *, inputs: Iterable[str | Path] = (), owner: str | None = None
                      ) -> Iterator[Path]:
    """Build a run's results in a new folder beside ``out``; put it in place of ``out`` only on success.

    Yields the new folder: write every file of the run into it. On normal exit ``out`` is replaced as a whole,
    in one rename (see the module docstring): what this run wrote, plus the entries of the old ``out`` written
    by other writers (another command, the user); entries that the previous run of the same ``owner``
    (default: the command, as named by :func:`writer`, else ``"python"``) wrote and this one did not are gone.
    On an exception nothing in ``out`` changes, the new folder is removed (and so are parent folders this call
    created), and the exception propagates.

    Raises :class:`InputError` when ``out`` may not be written (see :mod:`stereoprobe.output_paths`; a symbolic
    link to a folder is followed), is one of ``inputs`` or inside an input folder, when another run holds its
    lock, or when the disk is full or not writable.
    """
    shown = out
    check_output_dir(out)
    check_not_an_input(out, inputs)
    who = owner or _WRITER.get()
    with output_lock(out, build=True) as path:
        _recover(path)
        new = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
        try:
            try:
                yield new
                _complete(new, path, who)
                _swap(new, path)
            except OSError as exc:
                if exc.errno in DISK_ERRORS:
                    raise _disk_error(exc, new, shown) from exc
                raise
        finally:
            if new.exists():
                _discard(new)


@contextlib.contextmanager
def atomic_output_file(out: str | Path, *, inputs: Iterable[str | Path] = ()) -> Iterator[Path]:
    """Write one file: yields a temporary path beside ``out``; on success it replaces ``out`` in one rename.

    ``out`` may not be a folder, a device or other non-regular file, a symbolic link or one of ``inputs``
    (:class:`InputError`); parent folders are created. On an exception ``out`` is unchanged (a full disk or a
    refused permission becomes one :class:`InputError` line naming the path).
    """
    path = check_output_file(out)
    check_not_an_input(out, inputs, inside_inputs_ok=True)
    created = _make_parents(path, out)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            yield tmp
            os.replace(tmp, path)
        except OSError as exc:
            if exc.errno in DISK_ERRORS:
                raise InputError(f"{out}: cannot write ({(exc.strerror or str(exc)).lower()}); "
                                 "an earlier file there is unchanged") from exc
            raise
    finally:
        tmp.unlink(missing_ok=True)
        if not path.exists():
            _remove_created(created)
