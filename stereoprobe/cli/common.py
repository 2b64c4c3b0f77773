"""Shared pieces of every ``stereoprobe`` subcommand: argparse types, the help formatter, safe output folders,
console lines and progress bars.

- Argparse types with ranges (``type=positive_int`` ...): a bad value becomes argparse's one-line error and
  exit code 2, before any work starts.
- :class:`HelpFormatter`: plain text, defaults shown (``(default: 20.0)``), as ``argparse``'s
  ``ArgumentDefaultsHelpFormatter``; the command line installs it on every subcommand.
- :func:`atomic_output_dir` (from :mod:`stereoprobe.outputs`): the results of a run appear in ``--out`` all at
  once, or not at all.
- :func:`progress` / :func:`spinner` / :func:`info` / :func:`set_quiet` (from :mod:`stereoprobe.console`):
  console output on stderr / stdout that ``--quiet`` silences (progress is also silent when stderr is not a
  terminal, e.g. in CI logs or pipes). Library modules import them from there, not from the CLI package.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

from stereoprobe.cli._bounds import (
    MAX_COUNT,
    MAX_JOBS,
    MAX_MC_RESAMPLES,
    MAX_SEED,
    IntBetween,
    bootstrap_count,
    int_between,
    jobs,
    mc_resamples,
    resample_count,
    seed,
)
from stereoprobe.cli._claims import claim_outputs, out_dir, out_file
from stereoprobe.console import info, is_quiet, progress, set_quiet, spinner
from stereoprobe.errors import InputError
from stereoprobe.outputs import atomic_output_dir, atomic_output_file

__all__ = [
    "MAX_COUNT", "MAX_JOBS", "MAX_MC_RESAMPLES", "MAX_SEED", "HelpFormatter", "IntBetween", "atomic_output_dir",
    "atomic_output_file", "bootstrap_count", "claim_outputs", "comma_list", "existing_dir", "existing_file",
    "existing_path", "finite_float", "float_between", "http_url", "info", "int_between", "is_quiet", "jobs",
    "mc_resamples", "nonnegative_float", "nonnegative_int", "out_dir", "out_file", "positive_float", "positive_int",
    "probability", "progress", "resample_count", "seed", "set_quiet", "show_default", "spinner", "unit_interval",
]


# ---------------------------------------------------------------------------------------------------------
# argparse types: each raises argparse.ArgumentTypeError, which argparse prints as one line (exit code 2)


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {'an integer' if kind is int else 'a number'}"
        ) from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (e.g. ``--folds``, ``--n-boot``)."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be an integer >= 1")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (e.g. ``--permutations``, ``--examples``; 0 usually means "off")."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be an integer >= 0")
    return value


def finite_float(text: str) -> float:
    """Any finite number (no ``nan``, ``inf``)."""
    return float(_number(text, float))


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number > 0")
    return value


def nonnegative_float(text: str) -> float:
    """A finite number >= 0."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number >= 0")
    return value


def probability(text: str) -> float:
    """A number strictly between 0 and 1 (e.g. ``--alpha``, a confidence level)."""
    value = finite_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number strictly between 0 and 1")
    return value


def unit_interval(text: str) -> float:
    """A number in [0, 1] (e.g. a share or a p-value filter where 0 and 1 are meaningful)."""
    value = finite_float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number between 0 and 1")
    return value


def float_between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number in the closed range [low, high] (e.g. a threshold on a 1-5 scale)."""

    def parse(text: str) -> float:
        value = finite_float(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} must be a number from {low:g} to {high:g}")
        return value

    parse.__name__ = f"number from {low:g} to {high:g}"
    return parse


def existing_file(text: str) -> Path:
    """A path to an existing file (not a folder)."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if not p.is_file():
        raise argparse.ArgumentTypeError(f"{text}: is a folder, expected a file")
    return p


def existing_path(text: str) -> Path:
    """A path to an existing file or folder."""
    p = Path(text)
    if not p.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file or folder")
    return p


def existing_dir(text: str) -> Path:
    """A path to an existing folder."""
    p = Path(text)
    if not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: no such folder" if not p.exists() else f"{text}: not a folder")
    return p


def http_url(text: str) -> str:
    """An ``http(s)://`` URL fit to publish (no other scheme, no credentials:
    :func:`stereoprobe.redact.check_public_url`)."""
    from stereoprobe.redact import check_public_url

    try:
        return check_public_url(text, "")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None


def comma_list(text: str) -> list[str]:
    """``a,b,c`` -> ``["a", "b", "c"]`` (blanks dropped); an empty list is an error."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a comma-separated list")
    return items


# ---------------------------------------------------------------------------------------------------------
# Help


def show_default(value: object) -> str:
    """A default as help shows it: ``(1,)`` -> ``1``, ``["a", "b"]`` -> ``a,b``, ``20.0`` -> ``20``, paths as
    written; an empty string, list or tuple -> ``""`` (then no default is shown)."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(show_default(v) for v in value)
    if isinstance(value, float):
        return format(value, "g")
    return str(value)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Plain-text help with defaults: ``(default: X)`` after each option that has a meaningful default, in
    one style for every command (not for flags, ``None`` or empty defaults, or help texts that already name
    their default); sequences are shown comma-separated and floats without trailing zeros
    (:func:`show_default`)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or "default" in text.lower()
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction,
                                   argparse._VersionAction, argparse._StoreConstAction))
            or not (action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE))
        ):
            return text
        shown = show_default(default)
        if not shown:
            return text
        shown = shown.replace("%", "%%")  # help strings are %-formatted by argparse
        return f"{text} (default: {shown})" if text else f"(default: {shown})"
