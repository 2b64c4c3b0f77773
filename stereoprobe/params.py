"""Validation of inspect task parameters (``-T name=value``), shared by every task of stereoprobe.

inspect parses each ``-T`` value as YAML and splits an unquoted text on commas, so a parameter may arrive as a
bool (``true``/``yes``/``on``), an int, a float (``nan``, ``.inf``), a text or a list of texts; called from
Python it may be anything. Each function here returns the typed value or raises ``error`` (default
:class:`TaskParameterError`, both an :class:`~stereoprobe.errors.InputError` and inspect's
``PrerequisiteError``, which ``inspect eval`` shows as one line instead of a traceback; callers pass a subclass
such as ``TaxonomyError`` to keep theirs) with one message format naming the parameter::

    task parameter limit_templates must be an integer >= 1, got limit_templates=-1

(the name is unquoted so that ``"<name> must be ..."`` reads as a sentence, and ``<name>=<value>`` repeats what
was given; values are shown as ``repr``, so the message is one line). Lists refuse repeated entries
(``templates=[1,1]`` would score every sentence twice).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Literal, NoReturn, TypeVar, cast, overload

from inspect_ai import Task
from stereoprobe.inspect_internals import PrerequisiteError

from stereoprobe.errors import InputError, one_line
from stereoprobe.hints import closest, did_you_mean

__all__ = ["COUNT_MAX", "INTEGER_MAX", "EpochsBoundTask", "TaskParameterError", "as_prerequisite", "boolean", "cache", "choice", "choices",
           "closest", "did_you_mean", "fail", "integer", "known_names", "message", "names", "number", "one_line_errors",
           "top_k", "unknown_entry"]


class TaskParameterError(InputError, PrerequisiteError):
    """A task parameter outside its domain: one line in ``inspect eval`` (a ``PrerequisiteError``) and in the
    ``stereoprobe`` command line (an ``InputError``)."""

    subject = "task parameter"  # how messages name the setting (see :func:`message`)

    def __init__(self, message: str) -> None:
        InputError.__init__(self, message)
        self.message = message


T = TypeVar("T")
#: the largest value any integer parameter takes (a signed 64-bit integer), stated where a parameter gives no
#: bound of its own: ``-T runs=10**30`` is refused in one line, never a ``SystemError`` or ``OverflowError`` later
INTEGER_MAX = 2**63 - 1
#: the bound of a count that multiplies a run's work (runs, epochs, stories per prompt): a larger one is a typo
COUNT_MAX = 10_000
TRUE_TEXTS = ("true", "yes", "on", "1")
FALSE_TEXTS = ("false", "no", "off", "0")


def message(name: str, value: Any, requirement: str, subject: str = "task parameter") -> str:
    """The one error message: ``task parameter NAME must be REQUIREMENT, got NAME=VALUE`` (``subject``: what
    ``NAME`` is, e.g. a provider's model argument)."""
    return f"{subject} {name} must be {requirement}, got {name}={value!r}"


def _fail(name: str, value: Any, requirement: str, error: type[Exception]) -> NoReturn:
    raise error(message(name, value, requirement, getattr(error, "subject", "task parameter")))


def fail(name: str, value: Any, requirement: str, error: type[Exception] = TaskParameterError) -> NoReturn:
    """Raise ``error`` with :func:`message` (the subject taken from ``error.subject``)."""
    _fail(name, value, requirement, error)


def _or_none(requirement: str, optional: bool) -> str:
    return f"{requirement} or none" if optional else requirement


def _finite(value: Any, name: str, requirement: str, optional: bool, error: type[Exception]) -> float | None:
    """``value`` as a finite float (from an int, a float or a text; not a bool), None if it is None and
    ``optional``; anything else fails with ``requirement``."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        _fail(name, value, requirement, error)
    try:
        f = float(value)
    except ValueError:
        _fail(name, value, requirement, error)
    if not math.isfinite(f):
        _fail(name, value, requirement, error)
    return f


@overload
def integer(value: Any, name: str, minimum: int | None = None, *, maximum: int | None = None,
            optional: Literal[False] = False, error: type[Exception] = ...) -> int: ...
@overload
def integer(value: Any, name: str, minimum: int | None = None, *, maximum: int | None = None,
            optional: bool, error: type[Exception] = ...) -> int | None: ...
def integer(value: Any, name: str, minimum: int | None = None, *, maximum: int | None = None,
            optional: bool = False, error: type[Exception] = TaskParameterError) -> int | None:
    """An integer in ``[minimum, maximum]`` (either bound may be None).

    Accepts ints, integral floats (``3.0``) and texts of integers (``"3"``); booleans, fractions, NaN, inf,
    other texts and other types are errors. ``None`` is returned as None when ``optional``, else an error.
    """
    bounds = [f">= {minimum}"] if minimum is not None else []
    bounds += [f"<= {maximum}"] if maximum is not None else []
    requirement = _or_none(" ".join(["an integer", " and ".join(bounds)]).strip(), optional)
    f = _finite(value, name, requirement, optional, error)
    if f is None:
        return None
    if f != int(f):
        _fail(name, value, requirement, error)
    n = int(value) if isinstance(value, int) else int(f)
    if (minimum is not None and n < minimum) or (maximum is not None and n > maximum):
        _fail(name, value, requirement, error)
    if maximum is None and n > INTEGER_MAX:  # no bound of its own: the largest any parameter takes, stated
        _fail(name, value, _or_none(" ".join(["an integer", " and ".join([*bounds, f"<= {INTEGER_MAX}"])]),
                                    optional), error)
    return n


def _range(low: float, high: float, low_open: bool, high_open: bool) -> str:
    if math.isinf(high) and math.isinf(low):
        return ""
    if math.isinf(high):
        return f" {'>' if low_open else '>='} {low:g}"
    if math.isinf(low):
        return f" {'<' if high_open else '<='} {high:g}"
    return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


@overload
def number(value: Any, name: str, low: float = ..., high: float = ..., *, low_open: bool = ...,
           high_open: bool = ..., optional: Literal[False] = False, error: type[Exception] = ...) -> float: ...
@overload
def number(value: Any, name: str, low: float = ..., high: float = ..., *, low_open: bool = ...,
           high_open: bool = ..., optional: bool, error: type[Exception] = ...) -> float | None: ...
def number(value: Any, name: str, low: float = -math.inf, high: float = math.inf, *, low_open: bool = False,
           high_open: bool = False, optional: bool = False, error: type[Exception] = TaskParameterError) -> float | None:
    """A finite number in ``[low, high]``; ``low_open``/``high_open`` exclude a bound (``(0, 1]``).

    Accepts ints, floats and texts of numbers; booleans, NaN, inf and other values are errors. ``None`` is
    returned as None when ``optional``.
    """
    requirement = _or_none(f"a finite number{_range(low, high, low_open, high_open)}", optional)
    f = _finite(value, name, requirement, optional, error)
    if f is not None and (f < low or f > high or (low_open and f == low) or (high_open and f == high)):
        _fail(name, value, requirement, error)
    return f


@overload
def boolean(value: Any, name: str, *, strict: bool = ..., optional: Literal[False] = False,
            error: type[Exception] = ...) -> bool: ...
@overload
def boolean(value: Any, name: str, *, strict: bool = ..., optional: bool, error: type[Exception] = ...
            ) -> bool | None: ...
def boolean(value: Any, name: str, *, strict: bool = False, optional: bool = False,
            error: type[Exception] = TaskParameterError) -> bool | None:
    """True or false.

    Accepts a bool, the ints 0 and 1, and the texts true/false, yes/no, on/off, 1/0 (any case): the forms a
    ``-T`` value or a Python caller gives. ``strict`` accepts bools only. ``None`` is returned as None when
    ``optional``.
    """
    if value is None and optional:
        return None
    if isinstance(value, bool):
        return value
    if not strict:
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in TRUE_TEXTS + FALSE_TEXTS:
            return value.strip().lower() in TRUE_TEXTS
    _fail(name, value, _or_none("true or false", optional), error)


def _match(value: Any, allowed: Sequence[T]) -> tuple[bool, T | None]:
    """The entry of ``allowed`` that ``value`` is, or whose text it is (``"2"`` for 2); booleans match nothing,
    and neither does a float an integer entry (``templates=2.0`` is not template 2: a typo, refused)."""
    if isinstance(value, bool):
        return False, None
    for c in allowed:
        if isinstance(c, bool) or (isinstance(value, float) and isinstance(c, int)):
            continue
        if value == c or (isinstance(value, str) and value.strip() == str(c)):
            return True, c
    return False, None


def _one_of(allowed: Sequence[Any]) -> str:
    return "one of " + ", ".join(repr(c) for c in allowed)


def unknown_entry(name: str, entry: Any, value: Any, known: Sequence[Any],
                  error: type[Exception] = TaskParameterError, what: str = "entry") -> NoReturn:
    """Raise ``error``: ``task parameter NAME has no ENTRY 'x' (did you mean y?); known: ...``, the closest
    entries first (case counts: ``arab_f`` is not ``ARAB_F``), one line, at most 40 known entries listed."""
    shown = [str(k) for k in known]
    listed = ", ".join(shown[:40]) + (f", ... ({len(shown)} in all)" if len(shown) > 40 else "")
    subject = getattr(error, "subject", "task parameter")
    raise error(f"{subject} {name} has no {what} {str(entry)!r}{did_you_mean(entry, known)}, got {name}={value!r}; "
                f"known: {listed}")


def known_names(value: Any, name: str, known: Sequence[str], *, what: str = "entry", sep: str | None = None,
                error: type[Exception] = TaskParameterError) -> list[str] | None:
    """:func:`names` (a list of names, one name, a ``sep``-separated text, or None), each one of ``known``
    exactly (case counts), else :func:`unknown_entry` with the closest."""
    items = names(value, name, sep=sep, error=error)
    if items is None:
        return None
    allowed = set(known)
    for x in items:
        if x not in allowed:
            unknown_entry(name, x, value, known, error, what)
    return items


@overload
def choice(value: Any, name: str, allowed: Sequence[T], *, optional: Literal[False] = False,
           error: type[Exception] = ...) -> T: ...
@overload
def choice(value: Any, name: str, allowed: Sequence[T], *, optional: bool, error: type[Exception] = ...
           ) -> T | None: ...
def choice(value: Any, name: str, allowed: Sequence[T], *, optional: bool = False,
           error: type[Exception] = TaskParameterError) -> T | None:
    """One entry of ``allowed`` (returned as that entry, so ``"2"`` gives 2 among ints).

    ``None`` is returned as None when ``optional``; anything else not in ``allowed`` is an error.
    """
    if value is None and optional:
        return None
    found, c = _match(value, allowed)
    if not found:
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise error(message(name, value, _or_none(_one_of(allowed), optional),
                            getattr(error, "subject", "task parameter")) + hint)
    return c


def _items(value: Any, sep: str | None) -> list[Any] | None:
    if isinstance(value, str):
        return [x.strip() for x in value.split(sep)] if sep else [value.strip()]
    if isinstance(value, (list, tuple)):
        return [x.strip() if isinstance(x, str) else x for x in value]
    return None


def names(value: Any, name: str, *, sep: str | None = ",", empty_is_none: bool = False,
          error: type[Exception] = TaskParameterError) -> list[str] | None:
    """A list of non-empty names from a list or a ``sep``-separated text (``"en, fr"``; ``sep=None``: one name).

    ``None`` gives None; blank entries are dropped. Numbers are taken as their text. Nothing left (``""``,
    ``[]``) gives None when ``empty_is_none``, else an error; so are other types (a dict, a bool).
    """
    requirement = "a name or a list of names"
    if value is None:
        return None
    items = _items(value, sep)
    if items is None or any(isinstance(x, bool) or not isinstance(x, (str, int, float)) for x in items):
        _fail(name, value, requirement, error)
    out = [str(x) for x in items if str(x).strip()]
    if not out:
        if empty_is_none:
            return None
        _fail(name, value, requirement, error)
    _no_repeats(out, name, value, requirement, error)
    return out


def _no_repeats(items: Sequence[Any], name: str, value: Any, requirement: str, error: type[Exception]) -> None:
    seen: list[Any] = []
    for x in items:
        if x in seen:
            _fail(name, value, f"{requirement} without repeats ({x!r} twice)", error)
        seen.append(x)


def choices(value: Any, name: str, allowed: Sequence[T], *, sep: str | None = ",",
            error: type[Exception] = TaskParameterError) -> list[T] | None:
    """A list of entries of ``allowed`` from a list, one entry, or a ``sep``-separated text (``"1,3"`` among
    ints gives ``[1, 3]``). ``None`` gives None; an empty list, an unknown entry or a bool is an error."""
    requirement = "one or more of " + ", ".join(repr(c) for c in allowed)
    if value is None:
        return None
    items = _items(value, sep)
    if items is None:
        items = [value]
    out: list[T] = []
    for x in items:
        found, c = _match(x, allowed)
        if not found or c is None:
            hint = did_you_mean(x, allowed) if isinstance(x, str) else ""
            raise error(message(name, value, requirement, getattr(error, "subject", "task parameter")) + hint)
        out.append(c)
    if not out:
        _fail(name, value, requirement, error)
    _no_repeats(out, name, value, requirement, error)
    return out


def top_k(value: Any, name: str = "top_k", *, error: type[Exception] = TaskParameterError) -> int | None:
    """A top-k setting: an integer >= 1, or ``none``/``0``/None for no top-k (returned as None)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    try:
        return integer(value, name, 0, error=error) or None
    except error as ex:
        bound = f" and <= {INTEGER_MAX}" if f"<= {INTEGER_MAX}" in str(ex) else ""  # stated where it was passed
        _fail(name, value, f"an integer >= 0{bound} or none (0 and none: no top-k)", error)


@lru_cache(maxsize=None)
def _prerequisite_type(cls: type[Exception]) -> type[Exception]:
    """``cls`` that is also inspect's ``PrerequisiteError`` (same name, caught as either)."""
    names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    return type(cls.__name__, (cls, PrerequisiteError), names)


def as_prerequisite(error: InputError) -> Exception:
    """``error`` as an instance of its own type that is also a ``PrerequisiteError`` (message, args and
    attributes kept), which ``inspect eval`` shows as one line instead of a traceback."""
    if isinstance(error, PrerequisiteError):
        return error
    converted = BaseException.__new__(_prerequisite_type(type(error)))
    from stereoprobe.redact import redact_text  # a path or URL in the message shows no credential

    converted.args = tuple(redact_text(a) if isinstance(a, str) else a for a in error.args)
    converted.__dict__.update(error.__dict__)
    converted.message = redact_text(one_line(error))  # type: ignore[attr-defined]
    return converted


F = TypeVar("F", bound=Callable[..., Any])


def one_line_errors(task_function: F) -> F:
    """Decorate a task function (under ``@task``) so that an :class:`~stereoprobe.errors.InputError` raised
    while the task is built (``UpstreamDataError``, ``DBBDataError``, ``TaxonomyError``, ...) reaches
    ``inspect eval`` as one line: it is re-raised by :func:`as_prerequisite`, still of its own type for
    callers and the ``stereoprobe`` command line."""

    @functools.wraps(task_function)
    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            return task_function(*args, **kwargs)
        except InputError as ex:
            if isinstance(ex, PrerequisiteError):
                raise
            raise as_prerequisite(ex).with_traceback(ex.__traceback__) from None

    build.__one_line_errors__ = True  # type: ignore[attr-defined]  # a test checks every task has it
    return cast(F, build)


class EpochsBoundTask(Task):
    """A ``Task`` whose epochs stay within ``[min_epochs, max_epochs]`` (``max_epochs`` None: no ceiling).

    ``inspect eval --epochs N`` replaces a task's epochs after the task was built, by assignment
    (``inspect_ai/_eval/run.py``), so the bound is checked on assignment: a run outside it is refused in one
    line before any sample runs. ``why`` says what needs the bound (e.g. "sampled mode: 10 answers per question").
    """

    def __init__(self, *args: Any, min_epochs: int = 1, max_epochs: int | None = None, why: str = "",
                 **kwargs: Any) -> None:
        self._epochs_bounds = (min_epochs, max_epochs, why)
        super().__init__(*args, **kwargs)

    @property
    def epochs(self) -> int | None:
        return self._bounded_epochs

    @epochs.setter
    def epochs(self, value: int | None) -> None:
        self.check_epochs(value)
        self._bounded_epochs = value

    def check_epochs(self, value: int | None, option: str = "inspect eval --epochs") -> None:
        """:class:`TaskParameterError` unless ``value`` (None: the task's own) is within the bound; ``option``
        names the setting in the message (``stereoprobe plan`` checks its ``--epochs`` here too)."""
        low, high, why = self._epochs_bounds
        if value is not None and (value < low or (high is not None and value > high)):
            bound = f"exactly {low}" if high == low else f"at least {low}" if high is None else f"{low} to {high}"
            raise TaskParameterError(f"epochs ({option}) must be {bound} for this task"
                                     f"{f' ({why})' if why else ''}, got epochs={value}")


EXPIRY = re.compile(r"[1-9][0-9]*[smhDWMY]")  # inspect's cache expiry: a count and a unit, e.g. "1W", "30m"


def cache(value: Any, name: str = "cache", *, error: type[Exception] = TaskParameterError) -> bool | str:
    """A cache setting: true/false (the forms :func:`boolean` takes) or an expiry such as ``"1W"`` (inspect's
    ``CachePolicy``: a count and one of s, m, h, D, W, M, Y)."""
    if isinstance(value, str) and EXPIRY.fullmatch(value.strip()):
        return value.strip()
    try:
        result = boolean(value, name, error=error)
    except error:
        _fail(name, value, 'true, false or an expiry such as "1W" (a count and one of s, m, h, D, W, M, Y)', error)
    assert result is not None
    return result
