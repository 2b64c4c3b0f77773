"""Command-line mistakes: the command's own prefix and usage line, "did you mean", one help style."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from stereoprobe.cli import main
from stereoprobe.cli.common import HelpFormatter, show_default


def _err(capsys) -> tuple[str, str]:
    """(the error, the usage) of the one error line ``prog: error: message (usage: ...; every option: ...)``."""
    [line] = capsys.readouterr().err.splitlines()
    error, _, usage = line.rpartition(" (usage: ")
    return error, usage


def test_misspelt_option_is_the_commands_error_with_usage_and_suggestion(tmp_path: Path, capsys) -> None:
    assert main(["dbb", str(tmp_path), "--out", str(tmp_path / "o"), "--tresh", "20"]) == 2
    error, usage = _err(capsys)
    assert usage.startswith("stereoprobe dbb [options] ") and "--out" in usage
    assert usage.endswith("; every option: stereoprobe dbb --help)")
    # the echo goes through the one writer of outside input: an option name is kept, a value no key names is not
    assert error == "stereoprobe dbb: error: unrecognized arguments: --tresh *** (did you mean --threshold?)"
    assert not (tmp_path / "o").exists()


def test_misspelt_option_with_equals_sign(tmp_path: Path, capsys) -> None:
    assert main(["globalbias", str(tmp_path), "--out", str(tmp_path / "o"), "--permutatons=5"]) == 2
    error, _ = _err(capsys)
    assert error.startswith("stereoprobe globalbias: error: unrecognized arguments: --permutatons=***")
    assert error.endswith("(did you mean --permutations?)")


def test_unknown_option_without_a_close_match_has_no_suggestion(tmp_path: Path, capsys) -> None:
    assert main(["dbb", str(tmp_path), "--out", str(tmp_path / "o"), "--zzzzzz"]) == 2
    error, _ = _err(capsys)
    assert error == "stereoprobe dbb: error: unrecognized arguments: --zzzzzz"


def test_misspelt_command_and_choice(tmp_path: Path, capsys) -> None:
    assert main(["dbbb"]) == 2
    error, usage = _err(capsys)
    assert usage.startswith("stereoprobe [options] COMMAND")
    assert error.startswith("stereoprobe: error: argument COMMAND: invalid choice: 'dbbb'")
    assert error.endswith("(did you mean dbb?)")
    assert main(["associations", str(tmp_path), "--out", str(tmp_path / "o"), "--p-method", "asymptotc"]) == 2
    error, _ = _err(capsys)
    assert error.startswith("stereoprobe associations: error: argument --p-method: invalid choice")
    assert error.endswith("(did you mean asymptotic?)")


def test_plan_unknown_task_lists_the_tasks(capsys) -> None:
    assert main(["plan", "nosuchtask"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stereoprobe plan: error: unknown task 'nosuchtask'") and "\n" not in err
    listed = err.split("stereoprobe's tasks are ", 1)[1].split(", ")
    assert {"stereotales", "stereotales_judge", "dbb", "dbb_sg", "globalbias", "globalbias_profiles"} <= set(listed)
    assert main(["plan", "globalbais"]) == 2
    assert "did you mean globalbias" in capsys.readouterr().err


@pytest.mark.parametrize(("value", "shown"), [((1,), "1"), ([1, 2, 3], "1,2,3"), (("medium", "large"), "medium,large"),
                                              (20.0, "20"), (0.05, "0.05"), (500000, "500000"), ("", ""), ([], "")])
def test_show_default(value: object, shown: str) -> None:
    assert show_default(value) == shown


def _help_of(**kwargs: object) -> str:
    p = argparse.ArgumentParser(prog="x", formatter_class=HelpFormatter)
    p.add_argument("--opt", help="an option", **kwargs)
    return " ".join(p.format_help().split())


def test_help_formatter_hides_empty_and_none_defaults() -> None:
    assert "default" not in _help_of(default="")
    assert "default" not in _help_of(default=[])
    assert "default" not in _help_of(default=None)
    assert "an option (default: 1,2)" in _help_of(default=(1, 2))
    assert "an option (default: 5%)" in _help_of(default="5%")


def test_every_help_has_one_style(capsys) -> None:
    from stereoprobe.cli import build_parser

    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name in sub.choices:
        assert main([name, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        options = text.split("options:", 1)[-1]
        # defaults only as "(default: X)": no "[x]" bracket defaults, no raw tuples, no empty default
        assert not re.search(r"\[(\d[\d.,]*|auto|off|attribute|medium,large)\]", options), name
        assert "(default: )" not in text and "(default: (" not in text and "(default: [" not in text, name
        assert "(paper: " not in text, name


TOY = """
import warnings

from stereoprobe.report.run_info import write_run_info


def register(sub):
    p = sub.add_parser("zz-warn", help="a toy command that warns and writes run_info.json")
    p.add_argument("out")
    p.add_argument("--note", default="")
    p.set_defaults(func=run)


def run(args):
    warnings.warn("Tight layout not applied. The bottom and top margins cannot be made large enough", UserWarning)
    write_run_info(args.out, probe="toy")
    return 0
"""


@pytest.fixture
def warning_command(tmp_path, monkeypatch):
    import sys

    import stereoprobe.cli as cli

    (tmp_path / "zz_warn.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    original = cli.command_modules
    monkeypatch.setattr(cli, "command_modules", lambda: [*original(), "zz_warn"])
    yield
    sys.modules.pop("zz_warn", None)


def test_quiet_silences_library_warnings_and_run_info_records_the_command(warning_command, tmp_path, capsys) -> None:
    import json
    import shlex
    import warnings

    out = tmp_path / "out dir"
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # as a fresh process shows each warning once
        # the command line shows warnings itself, on stderr, credentials redacted (console.show_warning)
        assert main(["zz-warn", str(out), "--note", "it's"]) == 0
        err = capsys.readouterr().err
        assert err.count("UserWarning: Tight layout not applied. The bottom and top margins cannot be made large") == 1
        assert main(["zz-warn", str(out), "-q"]) == 0
        assert capsys.readouterr().err == ""
    info = json.loads((out / "run_info.json").read_text())
    assert shlex.split(info["command"]) == ["stereoprobe", "zz-warn", str(out), "-q"]
    from stereoprobe.report.run_info import command_line

    assert command_line() is None  # cleared after the run
