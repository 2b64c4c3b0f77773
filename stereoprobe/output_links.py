"""A second output folder swapped with the first in one step: kept inside it and reached through a link.

``stereoprobe leaderboard --out OUT --hub-eval-results HUB`` writes two folders that must change together (the
Hub files state the figures of OUT's tables). Two folders anywhere on disk cannot be replaced in one rename,
so the Hub files are written inside OUT's new version, as ``OUT/hub_eval_results`` (:data:`HUB_ENTRY`), and
``HUB`` is a symbolic link to that entry. The one swap of OUT (:func:`stereoprobe.outputs.atomic_output_dir`)
then replaces both: a reader of HUB, at any instant, sees the files of the OUT it would read, never a mix.

The link is made once. :func:`prepare_linked_dir` runs inside OUT's ``atomic_output_dir``, under both locks,
before anything of the new run is visible: a HUB that is still a folder of its own (written by an earlier
version, or a first run into an existing folder) is copied into the current OUT as its Hub entry, then
exchanged with the link in one rename, so readers keep seeing the earlier files through the link. After OUT's
swap, :func:`link_dir` makes the link where HUB did not exist. A crash at any step leaves HUB the earlier
files (as a folder or through the link), or the new ones, or, on a first run, not yet there.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from stereoprobe import outputs
from stereoprobe.errors import InputError
from stereoprobe.output_paths import HUB_ENTRY, linked_target, version_link_target

__all__ = ["HUB_ENTRY", "carry_entries", "link_dir", "linked_target", "prepare_linked_dir"]

def _points_to(link: Path, entry: Path) -> bool:
    target = linked_target(link)
    return target is not None and target == Path(os.path.abspath(entry))


def _new_link(link: Path, entry: Path) -> Path:
    """A link to ``entry`` (relative, so that moving both folders together keeps it) under a free name beside
    ``link``."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{link.name}.hublink-", dir=link.parent))
    tmp.rmdir()
    os.symlink(os.path.relpath(os.path.abspath(entry), os.path.abspath(link.parent)), tmp)
    return tmp


def prepare_linked_dir(link: str | Path, out: str | Path, entry_name: str = HUB_ENTRY) -> None:
    """Before the new OUT is built: turn a folder ``link`` into a link to ``out/entry_name`` that shows the
    same files (see the module docstring); nothing to do when ``link`` is missing or already that link. A link
    of the user's to another folder is refused in one line (it would be replaced)."""
    link, out = Path(os.path.abspath(link)), Path(os.path.abspath(out))
    entry = out / entry_name
    if _points_to(link, entry) or not os.path.lexists(link):
        return
    version = version_link_target(link)
    if link.is_symlink() and version is None:
        raise InputError(f"{link}: is a symbolic link to {os.readlink(link)}; the Hub files are kept in "
                         f"{entry} and {link} becomes a link to it: remove the link or name another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{entry_name}.copy-", dir=out))
        shutil.copytree(version or link, staging / "x", symlinks=True)
        if os.path.lexists(entry):
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        os.rename(staging / "x", entry)
        staging.rmdir()
        new = _new_link(link, entry)
        try:
            outputs.exchange_paths(new, link)  # the one step a reader of HUB sees: the same files, now through the link
        except outputs.NoExchange:
            old = link.parent / f".{link.name}.old"
            os.rename(link, old)
            os.replace(new, link)
            new = old
    except OSError as exc:
        raise InputError(f"{exc.filename or link}: cannot move the Hub files into {entry} "
                         f"({(exc.strerror or str(exc)).lower()}); {link} keeps its earlier files") from exc
    _remove(new)
    if version is not None:
        _remove(version)


def carry_entries(new_entry: str | Path, out: str | Path, entry_name: str = HUB_ENTRY) -> None:
    """After the run wrote ``new_entry`` (the Hub entry of OUT's new version): carry into it what the earlier
    entry holds that this run does not write and that no earlier run of this command wrote (the user's own
    files in HUB), with the manifest, as :func:`stereoprobe.outputs.atomic_output_dir` does for a folder."""
    outputs.complete_entries(Path(new_entry), Path(os.path.abspath(out)) / entry_name, outputs.WRITER.get())


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            shutil.rmtree(path)


def link_dir(link: str | Path, entry: str | Path) -> None:
    """After OUT's swap: make ``link`` a link to ``entry`` (OUT's Hub entry) where it is not one yet (a first
    run, or a link left dangling by a removed OUT), in one rename."""
    link, entry = Path(os.path.abspath(link)), Path(os.path.abspath(entry))
    if _points_to(link, entry):
        return
    if os.path.lexists(link) and linked_target(link) is None:
        raise InputError(f"{link}: appeared during the run; the Hub files are in {entry}")
    try:
        link.parent.mkdir(parents=True, exist_ok=True)
        os.replace(_new_link(link, entry), link)
    except OSError as exc:
        raise InputError(f"{link}: cannot link to the Hub files in {entry} "
                         f"({(exc.strerror or str(exc)).lower()})") from exc
