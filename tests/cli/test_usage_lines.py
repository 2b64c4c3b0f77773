"""Usage lines say what a command needs (issue 35.12): a required ``--out`` is shown as required in ``--help``
and in an error's usage, and the commands name their log inputs alike (``INPUT``, as the docs do)."""

from __future__ import annotations

import re

import pytest

from stereoprobe.cli import build_parser, main

PARSER = build_parser()
COMMANDS = sorted(PARSER._subparsers._group_actions[0].choices.items())  # type: ignore[union-attr]
WITH_OUT = [name for name, p in COMMANDS if any("--out" in a.option_strings and a.required for a in p._actions)]
LOG_INPUTS = ["associations", "dbb", "dbb-build-export", "globalbias", "judge-report", "leaderboard", "profiles"]


def test_commands_with_a_required_out_exist() -> None:
    assert {"dbb", "globalbias", "leaderboard", "associations"} <= set(WITH_OUT)


@pytest.mark.parametrize("command", WITH_OUT)
def test_help_shows_out_as_required(command: str, capsys) -> None:
    assert main([command, "--help"]) == 0  # main returns argparse's exit code
    usage = " ".join(capsys.readouterr().out.split("\n\n")[0].split())
    assert re.search(r"(?<!\[)--out [A-Z_]+(?!\])", usage), usage
    assert "[--out" not in usage


def test_an_error_usage_shows_out_as_required(capsys) -> None:
    assert main(["dbb", "/no/such/logs", "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert "usage: stereoprobe dbb [options] INPUT [INPUT ...] --out OUT;" in err


@pytest.mark.parametrize("command", LOG_INPUTS)
def test_log_inputs_are_named_input(command: str) -> None:
    parser = dict(COMMANDS)[command]
    positionals = [a for a in parser._actions if not a.option_strings]
    assert [a.metavar for a in positionals] == ["INPUT"]
