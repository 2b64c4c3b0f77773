"""Safe outputs: a run's results replace ``--out`` as a whole, in one step, or not at all.

:func:`atomic_output_dir` is used by every command that writes a folder of tables and reports (and by library
functions that write a folder); ``stereoprobe.cli.common`` re-exports it. :func:`atomic_output_file` does the
same for a single file. How a folder is replaced:

1. **Lock.** ``.<name>.lock`` beside ``out`` is held with an exclusive, non-blocking file lock (the
   ``filelock`` package: ``flock`` on POSIX; :func:`output_lock`); the command line takes it for every output
   folder and file before reading any input, so a second run into the same ``out`` stops at once with one
   line, and never both write. A crashed run leaves no stale lock (the kernel drops it with the process).
2. **Build beside.** The run writes into a new folder ``.<name>.tmp-XXXXXXXX`` beside ``out`` (with the
   permissions of the earlier ``out``, else those the umask allows, as ``mkdir`` would). Entries of the
   old ``out`` that this run does not write and that an earlier run of the *same writer* did not write either
   (another command's tables sharing the folder, the user's files) are carried into it (hard links, else
   copies); the earlier run's own entries that this run no longer writes are dropped (unless another writer
   wrote them too), so no stale table survives an option change. ``.stereoprobe-outputs.json`` in the folder
   records which writer wrote which entries.
3. **Swap, one rename that any reader sees whole.** Where the file system can exchange two paths, one
   ``renameat2(RENAME_EXCHANGE)`` swaps the new folder and ``out`` (``out`` stays a real folder). Where it
   cannot (some network and FUSE file systems), ``out`` is a symbolic link to a version folder
   ``.<name>.v-XXXXXXXX`` beside it, and the swap renames a new link over it (``rename`` of a link is atomic
   on every POSIX file system). Either way a reader, at any instant, sees the whole earlier or the whole new
   folder, and the earlier one is then removed. One case has a window: turning a real folder, made earlier
   on such a file system, into a link takes two renames (``out`` to ``.<name>.old``, then the link in); a
   crash between them leaves ``out`` missing and its earlier results whole in ``.<name>.old``, and the next
   run puts them back first (so does :func:`recover`). Leftovers of a crashed run (a build folder, an
   unused version or link) are removed by the next run, under the lock. A folder is only ever removed as a
   leftover when it holds :data:`MARKER`, the file the run wrote into each folder it made (build folders,
   exchange tests, the folder moved aside; a regular file whose content names the folder,
   :mod:`stereoprobe.output_marker`), removed again the moment the folder becomes ``out``; a link only
   when it points to a version name. A user's folder that merely has such a name is never touched, nor is
   one whose marker is a link, a FIFO or other text (one notice).
4. A file-system error (``ENOSPC``, ``EDQUOT``, ``EACCES``, ``EROFS``, no inodes ...) while locking,
   building or swapping becomes one :class:`InputError` line naming the path and the cause; ``out`` keeps
   its earlier results.
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
from stereoprobe.output_marker import MARKER  # written into every folder made beside ``out`` (a leftover if it stays)
from stereoprobe.output_marker import check as _checked
from stereoprobe.output_marker import mark as _mark
from stereoprobe.output_marker import unmark as _unmark
from stereoprobe.output_paths import (
    check_not_an_input,
    check_output_dir,
    check_output_file,
    version_link_target,
)

__all__ = ["MANIFEST", "MARKER", "WRITER", "NoExchange", "atomic_output_dir", "atomic_output_file", "complete_entries",
           "exchange_paths", "output_lock", "recover", "writer"]

MANIFEST = ".stereoprobe-outputs.json"
DISK_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG}
WRITER: contextvars.ContextVar[str] = contextvars.ContextVar("stereoprobe_output_writer", default="python")  # writer()


@contextlib.contextmanager
def writer(name: str) -> Iterator[None]:
    """Name the writer of the outputs written inside (the command line names each command)."""
    token = WRITER.set(name)
    try:
        yield
    finally:
        WRITER.reset(token)


# ------------------------------------------------------------------------------------------------ lock


def _fs_error(exc: OSError, shown: str | Path, doing: str) -> InputError:
    """One line for a file-system error while ``doing`` something for the output ``shown``."""
    where = exc.filename or shown
    cause = (exc.strerror or str(exc)).lower()
    kept = f"{shown} keeps its earlier results" if os.path.lexists(shown) else "nothing was written"
    return InputError(f"{where}: cannot {doing} ({cause}); {kept}")


class _Lock:
    """An exclusive, non-blocking lock on the file ``path`` (``filelock``; released when the process ends,
    even on a crash)."""

    def __init__(self, path: Path, out: Path | str, what: str = "folder") -> None:
        import filelock

        self.path, self.out, self.what = path, out, what
        self.lock = filelock.FileLock(str(path), timeout=0, thread_local=False)

    def acquire(self) -> None:
        import filelock

        try:
            self.lock.acquire()
        except filelock.Timeout:
            raise self.busy() from None
        except OSError as exc:
            raise _fs_error(exc, self.out, f"create the lock file {self.path}") from exc

    def busy(self) -> InputError:
        return InputError(f"{self.out}: another stereoprobe run is writing into this {self.what} (lock {self.path}); "
                          "wait for it to finish or choose another --out")

    def release(self) -> None:
        if self.lock.is_locked:
            with contextlib.suppress(OSError):  # removed while held: a waiting peer sees an unlinked file, retries
                os.unlink(self.path)
            self.lock.release()


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
    except OSError as exc:
        _remove_created(created)
        raise _fs_error(exc, shown, "create the folder") from exc
    except BaseException:
        _remove_created(created)
        raise
    return created


def _remove_created(created: list[Path]) -> None:
    for parent in reversed(created):
        with contextlib.suppress(OSError):
            parent.rmdir()  # only if still empty


@contextlib.contextmanager
def output_lock(out: str | Path, *, build: bool = False, file: bool = False) -> Iterator[Path]:
    """Hold the lock of the output folder (``file``: file) ``out`` (its parents are created; removed again if
    ``out`` never appears); yields the absolute path. Re-entrant within one thread (the command line takes it
    for the whole run, :func:`atomic_output_dir` again inside, with ``build``); another thread or process, or a
    second ``build`` inside a first, gets :class:`InputError`."""
    shown = out
    path = check_output_file(out) if file else check_output_dir(out)
    key = str(path.parent / f".{path.name}.lock")
    me = threading.get_ident()
    with _GUARD:
        held = _HELD.get(key)
        if held is not None and (held.thread != me or (build and held.building)):
            raise held.lock.busy()
        created: list[Path] = []
        if held is None:
            created = _make_parents(path, shown)
            lock = _Lock(Path(key), shown, "file" if file else "folder")
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
        if not path.exists() and not path.is_symlink():  # the run failed: leave no folder behind that it created
            _remove_created(created)


# ------------------------------------------------------------------------------------------------ swap


class NoExchange(Exception):
    """The file system (or the C library) cannot exchange two paths in one rename."""


def exchange_paths(a: Path, b: Path) -> None:
    """Swap the two paths ``a`` and ``b`` in one atomic rename (Linux ``renameat2(RENAME_EXCHANGE)``)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        raise NoExchange from None
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise NoExchange
        raise OSError(err, os.strerror(err), str(b))


def _discard(folder: Path) -> None:
    """Remove an old output folder as a whole."""
    shutil.rmtree(folder, ignore_errors=True)


def _make_temporary(out: Path, kind: str) -> Path:
    """A new, marked folder ``.<name>.<kind>-XXXXXXXX`` beside ``out``."""
    folder = Path(tempfile.mkdtemp(prefix=f".{out.name}.{kind}-", dir=out.parent))
    try:
        _mark(folder, strict=True)
    except OSError:
        folder.rmdir()
        raise
    return folder


def _old(out: Path) -> Path:
    return out.parent / f".{out.name}.old"


def _can_exchange(out: Path) -> bool:
    """Whether the file system beside ``out`` exchanges two folders in one rename (tried on two empty ones,
    ``.<name>.x-XXXXXXXX``, which :func:`recover` removes if a crash leaves them)."""
    a = _make_temporary(out, "x")
    b = _make_temporary(out, "x")
    try:
        exchange_paths(a, b)
        return True
    except (NoExchange, OSError):
        return False
    finally:
        for p in (a, b):
            with contextlib.suppress(OSError):
                _unmark(p)
                p.rmdir()


def _relink(new: Path, out: Path) -> None:
    """Make ``new`` a version folder beside ``out`` and point the link ``out`` at it, in one rename of a link;
    the version the link pointed to before is removed."""
    tag = new.name[-8:]
    version = out.parent / f".{out.name}.v-{tag}"
    link = out.parent / f".{out.name}.link-{tag}"
    os.rename(new, version)
    os.symlink(version.name, link)
    before = version_link_target(out)
    os.replace(link, out)  # the one step a reader can see: the whole old folder, then the whole new one
    _unmark(version)  # the live folder: no longer a leftover
    if before is not None and before != version:
        _mark(before)  # no longer live: a leftover if this run stops before removing it
        _discard(before)


def _swap(new: Path, out: Path) -> None:
    """Put the folder ``new`` in place of ``out`` in one rename; the old ``out`` is removed as a whole."""
    if version_link_target(out) is not None:  # a folder kept as a link to its version (no exchange here)
        _relink(new, out)
        return
    if not out.exists():
        if _can_exchange(out):
            os.rename(new, out)
            _unmark(out)
        else:
            _relink(new, out)
        return
    try:
        exchange_paths(new, out)
        _unmark(out)  # ``out`` is the new folder now; ``new`` names the earlier one, removed next
        _mark(new)
    except NoExchange:  # a real folder on a file system that cannot exchange: once, a link from now on
        old = _old(out)
        if os.path.lexists(old):  # not one of ours (recover removed those): never replaced
            raise InputError(f"{old}: a folder of yours has the name this run needs to move {out} aside; "
                             "rename it")
        os.rename(out, old)
        _mark(old)  # moved aside by this run: the next run may put it back or remove it
        _relink(new, out)  # a crash before this ends: ``out`` is missing, the next run puts ``old`` back
        _discard(old)
        return
    _discard(new)  # ``new`` now names the old folder


def recover(out: str | Path) -> None:
    """Repair what a crashed run into ``out`` left beside it (:func:`atomic_output_dir` does it first, under
    the lock): the earlier folder comes back from ``.<name>.old`` when ``out`` is missing; build folders,
    unused versions, and the folders of an exchange test are removed, and so are links to a version that were
    never renamed into place. Only folders holding :data:`MARKER` count as leftovers: a folder of the user's
    named like one is kept."""
    out = Path(os.path.abspath(out))
    old = _old(out)
    if _checked(old):
        if out.exists():
            _discard(old)
        else:  # interrupted between the two renames of a conversion: the earlier results come back
            if out.is_symlink():
                out.unlink()
            os.rename(old, out)
            _unmark(out)
    current = version_link_target(out)
    pattern = re.compile(rf"\.{re.escape(out.name)}\.(tmp|v|link|x)-[a-z0-9_]{{8}}")
    version = re.compile(rf"\.{re.escape(out.name)}\.v-[a-z0-9_]{{8}}")
    with contextlib.suppress(OSError):
        for p in out.parent.iterdir():
            if not pattern.fullmatch(p.name) or p == current:
                continue
            if p.is_symlink():
                if version.fullmatch(os.readlink(p)):  # a link this module made, never renamed into place
                    p.unlink()
            elif _checked(p):  # a marker the run wrote; else one notice, and the folder is kept
                _discard(p)


_recover = recover


def _umask() -> int:
    """The process's umask (read from ``/proc``; elsewhere set and restored at once)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode(existing: Path, default: int) -> int:
    """The permission bits of ``existing`` (followed through links), else ``default`` less the umask."""
    try:
        return os.stat(existing).st_mode & 0o7777
    except OSError:
        return default & ~_umask()


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


def complete_entries(new: Path, out: Path, name: str) -> None:
    """Carry into ``new`` the entries of ``out`` that stay, and write the manifest."""
    written = sorted(p.name for p in new.iterdir() if p.name not in (MANIFEST, MARKER))
    before = _read_manifest(out) if out.is_dir() else {}
    others = {e for w, es in before.items() if w != name for e in es}
    dropped = set(before.get(name, [])) - others  # an entry another writer also wrote stays
    if out.is_dir():
        for entry in sorted(out.iterdir()):
            if entry.name in (MANIFEST, MARKER) or entry.name in written or entry.name in dropped:
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
    who = owner or WRITER.get()
    with output_lock(out, build=True) as path:
        try:
            _recover(path)
            new = _make_temporary(path, "tmp")
            os.chmod(new, _mode(path, 0o777))  # mkdtemp's 0o700 would hide the results from the user's group
        except OSError as exc:
            raise _fs_error(exc, shown, "write the results") from exc
        try:
            try:
                yield new
                complete_entries(new, path, who)
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
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        os.chmod(tmp_name, _mode(path, 0o666))  # mkstemp's 0o600: the earlier file's mode, else the umask's
    except OSError as exc:
        _remove_created(created)
        raise InputError(f"{exc.filename or out}: cannot write ({(exc.strerror or str(exc)).lower()}); "
                         "an earlier file there is unchanged") from exc
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
