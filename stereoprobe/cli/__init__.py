"""The ``stereoprobe`` command line: post-processing of eval logs into tables and reports.

One module per subcommand, ``stereoprobe/cli/<command>.py``, exposing ``register(subparsers)``: it adds an
argparse sub-parser (with ``help=`` for the command list and ``description=``), sets ``func`` (called with
the parsed namespace, returns an exit code), validates options with the types of
:mod:`stereoprobe.cli.common` and writes through :func:`stereoprobe.cli.common.atomic_output_dir`. Modules keep
heavy imports inside ``func`` so ``stereoprobe --help`` stays fast. Every module of this package except
``common`` is picked up automatically, and so is every command a registered probe names
(:attr:`stereoprobe.probes.ProbeDescriptor.commands`, possibly outside this package). Order: the probes'
commands in the probes' display order, then :data:`GENERAL`, then the others alphabetically (:func:`order`).

Global options (before or after the subcommand): ``--quiet`` (no progress bars, no console lines),
``--debug`` (full traceback on errors).

Errors: bad input (:class:`stereoprobe.errors.InputError` and its subclasses ``LogReadError`` and
``UpstreamDataError``, a missing file, non-UTF-8 text, invalid JSON, a broken zip or zstd member, an
unreadable CSV/Parquet file) ends the run with ONE line on stderr, ``stereoprobe <command>: error: <message>``,
and exit code 2. A command-line mistake (an unknown or misspelt option, a bad value) is reported by the
command's own parser in the same one line, with "did you mean" suggestions for misspelt options, commands and
choices and the command's usage at the end: ``stereoprobe dbb: error: ... (usage: stereoprobe dbb [options]
inputs [inputs ...] --out OUT; every option: stereoprobe dbb --help)``. Anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import pkgutil
import re
import sys
import warnings
import zipfile
from collections.abc import Sequence
from typing import Any, NoReturn

from stereoprobe.cli.common import HelpFormatter, claim_outputs, set_quiet
from stereoprobe.console import show_warning
from stereoprobe.errors import InputError, one_line
from stereoprobe.cli._versions import COMPARING
from stereoprobe.cli._versions import add_option as add_versions_option
from stereoprobe.cli._versions import check as check_versions
from stereoprobe.harmless import safe_arg
from stereoprobe.hints import did_you_mean
from stereoprobe.redact import redact_text

PROG = "stereoprobe"

# The commands that belong to no probe, in display order after the probes' own commands.
GENERAL: tuple[str, ...] = ("leaderboard", "plan", "tasks", "index", "lm_eval_path", "default_model_path")

_NOT_COMMANDS = {"common"}


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


class Parser(argparse.ArgumentParser):
    """ArgumentParser of ``stereoprobe`` and each command: help shows defaults (:class:`HelpFormatter`); an
    error is one line, ``prog: error: message (usage: ...; every option: prog --help)`` (exit code 2), with
    "did you mean" for a misspelt option, command or choice. A command's parser (``strict``) reports unknown arguments
    itself, under its own name (``stereoprobe dbb: error: unrecognized arguments: ...``)."""

    strict = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        helps = {o for a in self._actions if isinstance(a, argparse._HelpAction) for o in a.option_strings}
        asks_help = args is not None and any(str(x) in helps for x in args)  # usage shows what is required
        if self.strict and args is not None and not asks_help:  # a typo is reported before a missing required option
            required = [a for a in self._actions if a.required]
            self._relaxed = required  # still shown as required in the usage of an error of this pass
            for a in required:
                a.required = False
            try:
                _, extras = super().parse_known_args(list(args), argparse.Namespace())
            finally:
                for a in required:
                    a.required = True
                self._relaxed = []
            if extras:
                self.error(self.unrecognized(extras))
        ns, extras = super().parse_known_args(args, namespace)
        if extras and self.strict:
            self.error(self.unrecognized(extras))
        return ns, extras

    def unrecognized(self, extras: Sequence[str]) -> str:
        """argparse's message for unknown arguments, with the closest known option of each unknown one."""
        options = [o for o in self._option_string_actions if o.startswith("--")]
        hints = [did_you_mean(x.split("=", 1)[0], options) for x in extras if x.startswith("--")]
        hint = next((h for h in hints if h), "")
        return f"unrecognized arguments: {' '.join(safe_arg(x) for x in extras)}{hint}"

    def short_usage(self) -> str:
        """``PROG [options] POSITIONALS REQUIRED-OPTIONS``: what a call needs, in one line."""
        relaxed = getattr(self, "_relaxed", [])  # required options relaxed by the typo pass: still required
        for a in relaxed:
            a.required = True
        try:
            needed = [a for a in self._actions if not a.option_strings or (a.required and a.option_strings)]
            needed = [a for a in needed if a.help is not argparse.SUPPRESS
                      and not isinstance(a, argparse._SubParsersAction)]
            formatter = self._get_formatter()
            parts = formatter._format_actions_usage(needed, [])  # argparse's own rendering of these arguments
        finally:
            for a in relaxed:
                a.required = False
        commands = " COMMAND" if self._subparsers is not None else ""
        return f"{self.prog} [options]{commands} {parts}".rstrip()

    def error(self, message: str) -> NoReturn:
        head, sep, echoed = str(message).partition("unrecognized arguments: ")
        if sep and "did you mean" not in echoed:  # argparse's own echo: each word through the one writer
            message = head + sep + " ".join(safe_arg(x) for x in echoed.split())
        text = redact_text(one_line(message))  # ``-M api_key=...`` given to a command that takes no -M
        m = _INVALID_CHOICE.search(text)
        if m and "did you mean" not in text:
            choices = re.findall(r"'([^']*)'", m.group(2))
            text += did_you_mean(m.group(1), choices)
        self.exit(2, f"{self.prog}: error: {text} (usage: {self.short_usage()}; every option: {self.prog} --help)\n")


class _OnceSubparsers:
    """Proxy of argparse's sub-parsers action: a command's ``description`` defaults to its ``help`` line, and a
    second registration of the same command name is ignored (argparse would raise)."""

    def __init__(self, action: argparse._SubParsersAction) -> None:
        self._action = action

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if name in self._action.choices:
            return Parser(prog=f"{PROG} {name} (duplicate)", add_help=False)  # a throwaway parser
        kwargs.setdefault("description", kwargs.get("help"))
        if kwargs.get("formatter_class") in (None, argparse.ArgumentDefaultsHelpFormatter, argparse.HelpFormatter):
            kwargs["formatter_class"] = HelpFormatter  # defaults shown, but never "(default: None)"
        parser = self._action.add_parser(name, **kwargs)
        if isinstance(parser, Parser):
            parser.strict = True  # unknown arguments are this command's error, under its name
        return parser

    def __getattr__(self, item: str) -> Any:
        return getattr(self._action, item)


def command_modules() -> list[str]:
    """Module names of every subcommand, in display order: each registered probe's commands (in the probes'
    order), then the modules of this package named in :data:`GENERAL`, then its other modules alphabetically."""
    import stereoprobe.cli as pkg
    from stereoprobe.probes import registered

    found = {m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")} - _NOT_COMMANDS
    probes = [c for d in registered() for c in d.commands]
    local = [n for n in GENERAL if n in found] + sorted(found - set(GENERAL))
    return list(dict.fromkeys(probes + [f"{pkg.__name__}.{n}" for n in local]))


def order() -> list[str]:
    """Command module short names in display order (``stereoprobe --help``)."""
    return [m.rsplit(".", 1)[-1] for m in command_modules()]


def _add_global_options(p: argparse.ArgumentParser, default: Any) -> None:
    have = p._option_string_actions
    if "--quiet" not in have:
        p.add_argument("--quiet", "-q", action="store_true", default=default,
                       help="no progress bars and no console lines (errors are still shown)")
    if "--debug" not in have:
        p.add_argument("--debug", action="store_true", default=default,
                       help="show the full traceback of an error")


def build_parser() -> argparse.ArgumentParser:
    """The ``stereoprobe`` parser with every subcommand registered."""
    from stereoprobe import __version__

    parser = Parser(
        prog=PROG,
        description="Post-process stereoprobe eval logs (inspect, lm-eval) into tables (CSV + Parquet) and "
        "single-file HTML reports. Run 'stereoprobe COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    _add_global_options(parser, False)
    action = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser, title="commands")
    sub = _OnceSubparsers(action)
    for name in command_modules():
        importlib.import_module(name).register(sub)
    for name, p in action.choices.items():
        _add_global_options(p, argparse.SUPPRESS)  # also accepted after the command; the top-level value wins
        if name in COMPARING:  # one comparability rule for every command that compares runs
            add_versions_option(p)
    return parser


def _input_error_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [InputError, FileNotFoundError, FileExistsError, NotADirectoryError,
                                        IsADirectoryError,
                                        PermissionError, UnicodeDecodeError, json.JSONDecodeError, zipfile.BadZipFile]
    for module, attr in (("stereoprobe.upstream", "UpstreamDataError"), ("stereoprobe.logs", "LogReadError"),
                         ("zstandard", "ZstdError"), ("pandas.errors", "EmptyDataError"),
                         ("pandas.errors", "ParserError"), ("yaml", "YAMLError")):
        mod = sys.modules.get(module)
        if mod is not None and isinstance(getattr(mod, attr, None), type):
            types.append(getattr(mod, attr))
    return tuple(types)


#: errors of the file system or the machine, not of stereoprobe: a full disk or quota, no inodes, no permission,
#: a read-only file system, a file too large, a path too long, a link loop, an I/O error, too many open files
FILE_SYSTEM_ERRNOS = frozenset(
    getattr(errno, name) for name in (
        "ENOSPC", "EDQUOT", "EACCES", "EPERM", "EROFS", "EFBIG", "ENOENT", "ENOTDIR", "EISDIR", "EEXIST",
        "ENOTEMPTY", "ENAMETOOLONG", "ELOOP", "EIO", "EMFILE", "ENFILE", "EXDEV", "EBUSY", "ETXTBSY", "EMLINK",
        "ESTALE", "ENXIO", "ENODEV", "EOVERFLOW") if hasattr(errno, name))


def is_input_error(exc: BaseException) -> bool:
    """Whether ``exc`` is bad input or a refusal of the file system (one line, exit 2) rather than a bug
    (traceback): every ``OSError`` with one of :data:`FILE_SYSTEM_ERRNOS` is one (ENOSPC, EACCES, EROFS, EDQUOT
    ... wherever it arises: a lock, a temporary file, an unreadable input or subfolder)."""
    if isinstance(exc, _input_error_types()):
        return True
    if isinstance(exc, OSError) and exc.errno in FILE_SYSTEM_ERRNOS:
        return True
    return type(exc).__module__.split(".")[0] == "pyarrow" and type(exc).__name__ in (
        "ArrowInvalid", "ArrowIOError", "ArrowTypeError")


def error_line(exc: BaseException) -> str:
    """The one-line message of an input error (file-system errors name their file and the cause)."""
    if isinstance(exc, OSError) and exc.strerror and not isinstance(exc, InputError):
        return file_system_error_line(exc)
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at position {exc.start})"
    text = one_line(exc) or type(exc).__name__
    return text


_FS_HINTS = {
    errno.ENOSPC: "the disk is full; free some space", errno.EDQUOT: "the disk quota is used up; free some space",
    errno.EROFS: "the file system is read-only; choose a writable folder",
    errno.EACCES: "no permission; check the permissions or choose another path",
    errno.EPERM: "not permitted; check the permissions or choose another path",
}


def file_system_error_line(exc: OSError) -> str:
    """``PATH: cause (hint)`` for an ``OSError``: the path (both paths of a rename), the system's message and,
    for a full disk or a refused write, what to do. ``ENOSPC`` on a file system with free bytes left is
    reported as no free inodes.

    >>> file_system_error_line(OSError(28, "No space left on device", "/r/out/x.csv"))
    '/r/out/x.csv: no space left on device (the disk is full; free some space)'
    """
    where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f)
    cause = (exc.strerror or str(exc)).lower()
    hint = _FS_HINTS.get(exc.errno or 0)
    if exc.errno == errno.ENOSPC and exc.filename:
        hint = _no_space_hint(str(exc.filename)) or hint
    text = f"{where}: {cause}" if where else f"file-system error: {cause}"
    return f"{text} ({hint})" if hint else text


def _no_space_hint(path: str) -> str | None:
    import os

    folder = os.path.dirname(os.path.abspath(path))
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    if st.f_files and st.f_favail == 0 and st.f_bavail > 0:
        return "no free inodes left on this file system: remove some files"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``stereoprobe`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code (0 ok, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or an argparse error (2, already printed)
        return exc.code if isinstance(exc.code, int) else 2
    set_quiet(bool(getattr(args, "quiet", False)))
    if getattr(args, "quiet", False):
        import logging

        logging.getLogger().setLevel(logging.WARNING)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    prog = f"{PROG} {args.command}"
    from stereoprobe.report.run_info import set_command_line, set_version_note

    set_command_line([PROG, *(sys.argv[1:] if argv is None else argv)])  # run_info.json's "command"
    quiet_warnings = warnings.catch_warnings()
    quiet_warnings.__enter__()
    warnings.showwarning = show_warning  # credentials redacted; catch_warnings restores Python's own on exit
    if getattr(args, "quiet", False):  # library warnings (matplotlib's layout notes, pandas) are console lines too
        warnings.simplefilter("ignore")
    try:
        check_versions(args)  # runs of different task versions: one line, before anything is read or written
        with claim_outputs(args, parser):  # outputs checked against the inputs and locked for the whole run
            return int(func(args) or 0)
    except SystemExit as exc:
        if isinstance(exc.code, int) or exc.code is None:
            return int(exc.code or 0)
        if getattr(args, "debug", False):
            raise
        print(f"{prog}: error: {redact_text(one_line(exc.code))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; the output folder keeps its earlier results", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 (sorted into input errors and bugs right below)
        if getattr(args, "debug", False) or not is_input_error(exc):
            raise
        print(f"{prog}: error: {redact_text(error_line(exc))}", file=sys.stderr)
        return 2
    finally:
        set_quiet(False)
        set_command_line(None)
        set_version_note(None)
        quiet_warnings.__exit__(None, None, None)


if __name__ == "__main__":
    sys.exit(main())
