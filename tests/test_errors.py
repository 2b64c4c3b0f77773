"""The exception line (:func:`stereoprobe.errors.reason`) and the one-line rule it folds with."""

from __future__ import annotations

from stereoprobe.errors import one_line, reason


def test_reason_names_the_class_and_keeps_the_message() -> None:
    assert reason(ValueError("bad value")) == "ValueError: bad value"
    assert reason(KeyError("k")) == "KeyError: 'k'"  # str() of the exception, as the hand-built lines had it
    assert reason(RuntimeError()) == "RuntimeError: "


def test_reason_folds_and_cuts_the_message_only() -> None:
    ex = OSError("first line\n  second   line")
    assert reason(ex) == "OSError: first line\n  second   line"
    assert reason(ex, fold=True) == "OSError: first line second line" == f"OSError: {one_line(ex)}"
    assert reason(ex, 5, fold=True) == "OSError: first"  # the class name is never cut
    assert reason(ValueError("abcdef"), 3) == "ValueError: abc"
