"""The shared task-parameter checks (stereoprobe.params): accepted forms, rejected forms, the one message format.

Every expected value below is worked out by hand from the documented rules, not by calling the code.
"""

from __future__ import annotations

from typing import Any

import pytest

from stereoprobe import params as P
from stereoprobe.errors import InputError
from stereoprobe.stereotales.taxonomy.files import TaxonomyError

NAN, INF = float("nan"), float("inf")


# ------------------------------------------------------------------------------------------------ integer
@pytest.mark.parametrize("value, kw, expected", [
    (1, {"minimum": 1}, 1),
    (0, {"minimum": 0}, 0),
    (7, {}, 7),
    (-5, {}, -5),                                  # no bound
    (3.0, {"minimum": 1}, 3),                      # integral float
    ("3", {"minimum": 1}, 3),                      # text of an integer
    (" 12 ", {"minimum": 1}, 12),
    ("2.0", {"minimum": 1}, 2),
    (5, {"minimum": 1, "maximum": 5}, 5),          # bounds are inclusive
    (None, {"minimum": 1, "optional": True}, None),
    (10**20, {"minimum": 1, "maximum": 10**21}, 10**20),  # large ints stay exact
    (2**63 - 1, {"minimum": 1}, 2**63 - 1),        # the largest any parameter takes (P.INTEGER_MAX)
])
def test_integer_accepts(value: Any, kw: dict[str, Any], expected: int | None) -> None:
    assert P.integer(value, "n", **kw) == expected


@pytest.mark.parametrize("value, kw, requirement", [
    (-1, {"minimum": 1}, "an integer >= 1"),
    (0, {"minimum": 1}, "an integer >= 1"),
    (2.5, {"minimum": 1}, "an integer >= 1"),
    ("2.5", {"minimum": 1}, "an integer >= 1"),
    (NAN, {"minimum": 1}, "an integer >= 1"),
    ("nan", {"minimum": 1}, "an integer >= 1"),
    (INF, {"minimum": 1}, "an integer >= 1"),
    ("-inf", {}, "an integer"),
    (10**20, {"minimum": 1}, f"an integer >= 1 and <= {2**63 - 1}"),  # no bound of its own: INTEGER_MAX, stated
    (True, {"minimum": 0}, "an integer >= 0"),    # booleans are not numbers here
    (False, {"minimum": 0}, "an integer >= 0"),
    ("three", {"minimum": 1}, "an integer >= 1"),
    ("", {"minimum": 1}, "an integer >= 1"),
    ([3], {"minimum": 1}, "an integer >= 1"),
    (None, {"minimum": 1}, "an integer >= 1"),    # not optional
    (6, {"minimum": 1, "maximum": 5}, "an integer >= 1 and <= 5"),
    (2, {"minimum": 3, "optional": True}, "an integer >= 3 or none"),
])
def test_integer_rejects(value: Any, kw: dict[str, Any], requirement: str) -> None:
    with pytest.raises(InputError) as e:
        P.integer(value, "n", **kw)
    assert str(e.value) == f"task parameter n must be {requirement}, got n={value!r}"


# ------------------------------------------------------------------------------------------------- number
@pytest.mark.parametrize("value, kw, expected", [
    (0, {"low": 0.0}, 0.0),                        # closed low bound
    (0.5, {"low": 0.0, "high": 1.0}, 0.5),
    (1, {"low": 0.0, "high": 1.0, "low_open": True}, 1.0),   # (0, 1] keeps 1
    ("0.8", {"low": 0.0}, 0.8),
    ("1e-3", {"low": 0.0}, 0.001),
    (-2, {"low": -2.0, "high": 2.0}, -2.0),
    (-1e9, {}, -1e9),                              # no bounds
    (None, {"low": 0.0, "optional": True}, None),
])
def test_number_accepts(value: Any, kw: dict[str, Any], expected: float | None) -> None:
    got = P.number(value, "x", **kw)
    assert got == expected and (got is None or isinstance(got, float))


@pytest.mark.parametrize("value, kw, requirement", [
    (NAN, {"low": 0.0}, "a finite number >= 0"),
    ("nan", {"low": 0.0}, "a finite number >= 0"),
    (INF, {}, "a finite number"),
    (-INF, {"low": 0.0}, "a finite number >= 0"),
    (-0.5, {"low": 0.0}, "a finite number >= 0"),
    (0, {"low": 0.0, "low_open": True}, "a finite number > 0"),
    (0, {"low": 0.0, "high": 1.0, "low_open": True}, "a finite number in (0, 1]"),
    (1.5, {"low": 0.0, "high": 1.0, "low_open": True}, "a finite number in (0, 1]"),
    (1, {"low": 0.0, "high": 1.0, "high_open": True}, "a finite number in [0, 1)"),
    (6, {"low": 1.0, "high": 5.0}, "a finite number in [1, 5]"),
    (120, {"low": 0.0, "high": 100.0}, "a finite number in [0, 100]"),
    (3, {"high": 2.0}, "a finite number <= 2"),
    (True, {"low": 0.0}, "a finite number >= 0"),
    ("warm", {"low": 0.0}, "a finite number >= 0"),
    (None, {"low": 0.0}, "a finite number >= 0"),
    ([0.5], {"low": 0.0}, "a finite number >= 0"),
    (-1, {"low": 0.0, "optional": True}, "a finite number >= 0 or none"),
])
def test_number_rejects(value: Any, kw: dict[str, Any], requirement: str) -> None:
    with pytest.raises(InputError) as e:
        P.number(value, "x", **kw)
    assert str(e.value) == f"task parameter x must be {requirement}, got x={value!r}"


# ------------------------------------------------------------------------------------------------ boolean
@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), (1, True), (0, False),
    ("true", True), ("false", False), ("True", True), ("FALSE", False), (" yes ", True), ("no", False),
    ("on", True), ("off", False), ("1", True), ("0", False),
])
def test_boolean_accepts(value: Any, expected: bool) -> None:
    assert P.boolean(value, "flag") is expected


@pytest.mark.parametrize("value, kw", [
    ("maybe", {}), ("", {}), (2, {}), (-1, {}), (1.0, {}), (0.5, {}), (NAN, {}), (None, {}), ([True], {}),
    (1, {"strict": True}), (0, {"strict": True}), ("true", {"strict": True}), ("yes", {"strict": True}),
])
def test_boolean_rejects(value: Any, kw: dict[str, Any]) -> None:
    with pytest.raises(InputError) as e:
        P.boolean(value, "flag", **kw)
    assert str(e.value) == f"task parameter flag must be true or false, got flag={value!r}"


def test_boolean_optional_and_strict() -> None:
    assert P.boolean(None, "flag", optional=True) is None
    assert P.boolean(True, "flag", strict=True) is True
    with pytest.raises(InputError, match="must be true or false or none, got flag='x'"):
        P.boolean("x", "flag", optional=True)


# ------------------------------------------------------------------------------------------------- choice
MODES = ("logprob", "sampled")


@pytest.mark.parametrize("value, allowed, kw, expected", [
    ("logprob", MODES, {}, "logprob"),
    (" sampled ", MODES, {}, "sampled"),           # texts are stripped
    (2, (1, 2, 3), {}, 2),
    ("2", (1, 2, 3), {}, 2),                       # the entry itself comes back, typed
    (None, MODES, {"optional": True}, None),
])
def test_choice_accepts(value: Any, allowed: tuple[Any, ...], kw: dict[str, Any], expected: Any) -> None:
    assert P.choice(value, "mode", allowed, **kw) == expected


@pytest.mark.parametrize("value, allowed, requirement, hint", [
    ("bogus", MODES, "one of 'logprob', 'sampled'", ""),
    ("LOGPROB", MODES, "one of 'logprob', 'sampled'", " (did you mean logprob?)"),     # case matters
    ("sampeld", MODES, "one of 'logprob', 'sampled'", " (did you mean sampled?)"),
    ("", MODES, "one of 'logprob', 'sampled'", ""),
    (None, MODES, "one of 'logprob', 'sampled'", ""),
    (["logprob"], MODES, "one of 'logprob', 'sampled'", ""),
    (True, (1, 2, 3), "one of 1, 2, 3", ""),                   # True == 1 in Python, but not a choice here
    (4, (1, 2, 3), "one of 1, 2, 3", ""),
    (2.5, (1, 2, 3), "one of 1, 2, 3", ""),
    (2.0, (1, 2, 3), "one of 1, 2, 3", ""),                    # a float is not template 2 (issue 34.6)
])
def test_choice_rejects(value: Any, allowed: tuple[Any, ...], requirement: str, hint: str) -> None:
    with pytest.raises(InputError) as e:
        P.choice(value, "mode", allowed)
    assert str(e.value) == f"task parameter mode must be {requirement}, got mode={value!r}{hint}"


@pytest.mark.parametrize("value, known, fragment", [
    ("arab_f", ["ARAB", "ARAB_F"], "has no group 'arab_f' (did you mean ARAB_F?), got groups='arab_f'; known: ARAB, "),
    (["ARAB", "ARABB"], ["ARAB", "ARAB_F"], "has no group 'ARABB' (did you mean ARAB or ARAB_F?)"),
    ("MARTIAN", ["ARAB"], "has no group 'MARTIAN', got groups='MARTIAN'; known: ARAB"),
])
def test_known_names_refuse_unknown_entries_with_the_closest(value: Any, known: list[str], fragment: str) -> None:
    with pytest.raises(P.TaskParameterError) as e:
        P.known_names(value, "groups", known, what="group")
    assert fragment in str(e.value) and str(e.value).startswith("task parameter groups has no group")


def test_known_names_keep_known_entries() -> None:
    assert P.known_names(["ARAB_F", "ARAB"], "groups", ["ARAB", "ARAB_F"]) == ["ARAB_F", "ARAB"]
    assert P.known_names(None, "groups", ["ARAB"]) is None
    with pytest.raises(P.TaskParameterError, match="a name or a list of names"):
        P.known_names([], "groups", ["ARAB"])  # an empty list is not "every group"


# ------------------------------------------------------------------------------------------------ choices
@pytest.mark.parametrize("value, expected", [
    (None, None),
    ("ses", ["ses"]),
    ("ses, gender", ["ses", "gender"]),            # a comma-separated text
    (["gender", "ses"], ["gender", "ses"]),        # -T x=a,b arrives as a list
    (("age",), ["age"]),
])
def test_choices_accepts(value: Any, expected: list[str] | None) -> None:
    assert P.choices(value, "categories", ("age", "gender", "ses")) == expected


def test_choices_of_numbers() -> None:
    assert P.choices(2, "templates", (1, 2, 3)) == [2]
    assert P.choices([1, 3], "templates", (1, 2, 3)) == [1, 3]
    assert P.choices("1,3", "templates", (1, 2, 3)) == [1, 3]
    assert P.choices(["1", "3"], "templates", (1, 2, 3)) == [1, 3]


@pytest.mark.parametrize("value", ["bogus", "ses,bogus", "", [], [""], ["ses", None], True, {"ses": 1}])
def test_choices_rejects(value: Any) -> None:
    with pytest.raises(InputError) as e:
        P.choices(value, "categories", ("age", "ses"))
    assert str(e.value) == f"task parameter categories must be one or more of 'age', 'ses', got categories={value!r}"


@pytest.mark.parametrize("value", [[-1], 4, [1, True], "1,4"])
def test_choices_of_numbers_rejects(value: Any) -> None:
    with pytest.raises(InputError, match=r"^task parameter templates must be one or more of 1, 2, 3, got templates="):
        P.choices(value, "templates", (1, 2, 3))


# -------------------------------------------------------------------------------------------------- names
@pytest.mark.parametrize("value, kw, expected", [
    (None, {}, None),
    ("en", {}, ["en"]),
    ("en, fr,", {}, ["en", "fr"]),                 # blanks dropped
    (["en", " fr "], {}, ["en", "fr"]),
    ([7, "x"], {}, ["7", "x"]),                    # -T ids=7,x arrives as [7, 'x']
    ("a,b", {"sep": None}, ["a,b"]),               # one name, commas kept
    ("", {"empty_is_none": True}, None),
    ([], {"empty_is_none": True}, None),
])
def test_names_accepts(value: Any, kw: dict[str, Any], expected: list[str] | None) -> None:
    assert P.names(value, "languages", **kw) == expected


@pytest.mark.parametrize("value", ["", " , ", [], [""], ["  "], 5, True, {"en": 1}, ["en", None], ["en", False]])
def test_names_rejects(value: Any) -> None:
    with pytest.raises(InputError) as e:
        P.names(value, "languages")
    assert str(e.value) == f"task parameter languages must be a name or a list of names, got languages={value!r}"


# ------------------------------------------------------------------------------------------ error classes
@pytest.mark.parametrize("check, args", [
    (P.integer, (0, "limit", 1)),
    (P.number, (NAN, "t", 0.0)),
    (P.boolean, ("maybe", "flag")),
    (P.choice, ("x", "mode", MODES)),
    (P.choices, ("x", "mode", MODES)),
    (P.names, ([], "ids")),
])
def test_the_caller_chooses_the_error_class(check: Any, args: tuple[Any, ...]) -> None:
    with pytest.raises(TaxonomyError):
        check(*args, error=TaxonomyError)
    with pytest.raises(ValueError):  # InputError is a ValueError: callers that catch ValueError keep working
        check(*args)


def test_message_is_one_line_and_names_the_parameter() -> None:
    msg = P.message("prompt", "a\nb", "a file")
    assert msg == "task parameter prompt must be a file, got prompt='a\\nb'" and "\n" not in msg
