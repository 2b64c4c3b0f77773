"""Errors that mean "the user's input is wrong", as opposed to a bug.

Library code raises :class:`InputError` (or a subclass: :class:`stereoprobe.logs.LogReadError` for an
unreadable eval log, :class:`stereoprobe.upstream.UpstreamDataError` for upstream data that cannot be
obtained or fails its checksum) with a ONE-line message that names the file, field or row, e.g.
``"results/x.csv: missing column(s) 'ppl' (found: group, descriptor)"``. The ``stereoprobe`` command line
turns these into one line on stderr and exit code 2 (``--debug`` shows the traceback), see
:func:`stereoprobe.cli.main`.
"""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad user input (file, option, table field or row); the message is one line naming what is wrong."""


def where(path: str | Path, *, row: int | None = None, field: str | None = None, member: str | None = None) -> str:
    """A location prefix for messages: ``"a.csv: row 3: field 'ppl'"``, ``"x.eval: member samples/1_epoch_1.json"``.

    ``row`` is 1-based as a person counts lines of a CSV after its header (pass the DataFrame index + 1).
    """
    parts = [str(path)]
    if member is not None:
        parts.append(f"member {member}")
    if row is not None:
        parts.append(f"row {row}")
    if field is not None:
        parts.append(f"field {field!r}")
    return ": ".join(parts)


def one_line(message: object) -> str:
    """``message`` as one line (inner newlines folded), for the CLI's error line."""
    text = str(message)
    return " ".join(text.split()) if "\n" in text else text.strip()


def reason(ex: BaseException, limit: int | None = None, *, fold: bool = False) -> str:
    """The exception line, ``"ValueError: the message"``: the one way an exception is named in a message, a
    recorded per-item error or a settings record. ``fold``: the message as one line (:func:`one_line`);
    ``limit``: the message cut to that many characters (the class name is kept)."""
    text = one_line(ex) if fold else str(ex)
    return f"{type(ex).__name__}: {text if limit is None else text[:limit]}"
