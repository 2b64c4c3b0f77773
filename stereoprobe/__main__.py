"""``python -m stereoprobe``: the command line, or one line when this Python cannot run it (issue 42.7).

Run by a Python in which stereoprobe is not installed (``python3 -m stereoprobe`` from a clone, outside its
virtual environment), or whose installation lacks a dependency, the command line would fail deep inside with a
traceback (``No module named 'filelock'``) or a misleading line ("the stereoprobe.tasks package is not
installed"). It says instead, in one line on stderr (exit code 2), which Python runs it and how to fix it.
"""

import sys

FIX = "activate the clone's virtual environment (source .venv/bin/activate) or install it (pip install -e .)"


def _not_installed() -> str | None:
    """The one line when no stereoprobe distribution is installed in this Python, else None."""
    from importlib import metadata

    try:
        metadata.distribution("stereoprobe")
    except metadata.PackageNotFoundError:
        return f"stereoprobe is not installed in this Python ({sys.executable}): {FIX}"
    return None


def _missing(exc: ModuleNotFoundError) -> str:
    return (f"stereoprobe: a module it needs is missing in this Python ({sys.executable}): {exc.name or exc}; "
            f"{FIX}")


def run() -> int:
    line = _not_installed()
    if line is not None:
        print(line, file=sys.stderr)
        return 2
    try:
        from stereoprobe.cli import main

        return main()
    except ModuleNotFoundError as exc:  # a dependency missing from this installation, found when first imported
        print(_missing(exc), file=sys.stderr)
        return 2


sys.exit(run())
