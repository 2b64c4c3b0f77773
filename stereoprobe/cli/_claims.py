"""A command's outputs, claimed before it reads anything: checked against its inputs and locked.

:func:`claim_outputs` is entered by :func:`stereoprobe.cli.main` around every command, right after the
arguments are parsed. From the command's parser it finds the outputs (options typed :func:`out_dir` or
:func:`out_file`, re-exported by :mod:`stereoprobe.cli.common`, and the files a command names in its
``claimed_files`` default, e.g. ``index``'s ``DIR/index.html``) and the inputs (every other option or
argument naming an existing path), refuses an output that is an input or lies inside an input folder (one
line, exit code 2, nothing written), and holds the lock of every output folder and file for the whole run,
so a second run into the same output stops at once, before it reads anything, instead of computing and then
writing too. Outputs are written under the command's name (the writer of
:func:`stereoprobe.outputs.atomic_output_dir`).

A command that reads only its own kind of folders below an input (the leaderboard: folders above the
probes' output folders, ``results/ --out results/leaderboard``) sets ``out_inside_inputs_ok=True`` in its
parser's defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.output_paths import check_not_an_input, check_output_dir, check_output_file
from stereoprobe.outputs import output_lock, writer

__all__ = ["claim_outputs", "command_parser", "out_dir", "out_file"]


def out_dir(text: str) -> Path:
    """An output folder: may exist (then it must be a folder) or not yet (created at the end of the run).

    Refused (:mod:`stereoprobe.output_paths`): ``""``, the file-system root, the current folder or one above
    it, a file, device or other non-folder, a path below a file, a dangling symbolic link.
    """
    try:
        check_output_dir(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return Path(text)


def out_file(text: str) -> Path:
    """An output file: may exist (then it must be a regular file, not a symbolic link) or not yet.

    Refused: ``""``, a folder, a device, pipe or socket, a symbolic link, a path below a file.
    """
    try:
        check_output_file(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return Path(text)


def command_parser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser | None:
    """The sub-parser of ``command`` in the ``stereoprobe`` parser (None when there is none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            sub = action.choices[command]
            return sub if isinstance(sub, argparse.ArgumentParser) else None
    return None


def _paths(value: Any) -> list[Path]:
    """The existing paths a parsed value names (a path, a text, ``LABEL=PATH``, or a list of them)."""
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _paths(v)]
    if isinstance(value, Path):
        return [value] if _exists(value) else []
    if isinstance(value, str) and value:
        if _exists(Path(value)):
            return [Path(value)]
        if "=" in value and _exists(Path(value.partition("=")[2])):
            return [Path(value.partition("=")[2])]
    return []


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL: not an existing path
        return False


def _outputs_and_inputs(sub: argparse.ArgumentParser, args: argparse.Namespace
                        ) -> tuple[list[Path], list[Path], list[Path]]:
    folders: list[Path] = []
    files: list[Path] = []
    inputs: list[Path] = []
    for action in sub._actions:
        value = getattr(args, action.dest, None)
        if value is None or action.dest in ("help", "func", "command"):
            continue
        if action.type is out_dir:
            folders.append(Path(value))
        elif action.type is out_file:
            files.append(Path(value))
        elif not action.choices and not isinstance(value, (bool, int, float)):
            inputs += _paths(value)
    claimed = getattr(args, "claimed_files", None)
    files += [Path(f) for f in (claimed(args) if callable(claimed) else [])]
    return folders, files, inputs


@contextlib.contextmanager
def claim_outputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Iterator[None]:
    """Check the outputs of the parsed command against its inputs, lock its output folders for the whole run
    and name the writer; raises :class:`~stereoprobe.errors.InputError` (one line) on a refusal."""
    command = getattr(args, "command", None)
    sub = command_parser(parser, command)
    if sub is None:
        yield
        return
    folders, files, inputs = _outputs_and_inputs(sub, args)
    inside_ok = bool(getattr(args, "out_inside_inputs_ok", False))
    for out in folders:
        check_not_an_input(out, inputs, inside_inputs_ok=inside_ok)
    for out in files:
        check_not_an_input(out, inputs, inside_inputs_ok=True)
    absolute = [Path(os.path.abspath(f)) for f in folders]
    for i, a in enumerate(absolute):  # two output folders of one run: distinct, neither inside the other
        for j, b in enumerate(absolute):
            if i != j and (a == b or b in a.parents):
                raise InputError(f"{folders[i]}: is the same as or inside the other output folder {folders[j]}")
    with contextlib.ExitStack() as stack:
        for out in folders:
            stack.enter_context(output_lock(out))
        for out in dict.fromkeys(Path(os.path.abspath(f)) for f in files):
            stack.enter_context(output_lock(out, file=True))
        stack.enter_context(writer(str(command)))
        yield
