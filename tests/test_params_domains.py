"""Task parameters checked up front: repeated list entries, cache settings, and errors that inspect shows as one
line (``PrerequisiteError``) rather than a traceback."""

from __future__ import annotations

import pytest
from inspect_ai._util.error import PrerequisiteError

from stereoprobe import params as P
from stereoprobe.errors import InputError


@pytest.mark.parametrize("call, fragment", [
    (lambda: P.choices([1, 1], "templates", (1, 2, 3)), "without repeats (1 twice)"),
    (lambda: P.choices("1,3,1", "templates", (1, 2, 3)), "without repeats (1 twice)"),
    (lambda: P.choices(["2", 2], "templates", (1, 2, 3)), "without repeats (2 twice)"),
    (lambda: P.names([0, 0], "descriptors"), "without repeats ('0' twice)"),
    (lambda: P.names("en, fr, en", "languages"), "without repeats ('en' twice)"),
    (lambda: P.cache("maybe"), "an expiry"),
    (lambda: P.cache("1 week"), "an expiry"),
    (lambda: P.cache("0W"), "an expiry"),
    (lambda: P.cache(2), "an expiry"),
    (lambda: P.cache(None), "an expiry"),
    (lambda: P.integer(99, "min_extractors", 1, maximum=3), "<= 3"),
])
def test_out_of_domain_values_are_one_line_prerequisite_errors(call, fragment: str) -> None:
    with pytest.raises(PrerequisiteError) as info:
        call()
    assert isinstance(info.value, InputError)  # the stereoprobe command line's one line, exit 2, as well
    text = str(info.value)
    assert fragment in text and "\n" not in text and info.value.message == text


@pytest.mark.parametrize("value, expected", [(True, True), ("off", False), ("yes", True), (0, False),
                                             ("1W", "1W"), (" 30m ", "30m"), ("12h", "12h"), ("2Y", "2Y")])
def test_cache_settings_accepted(value, expected) -> None:
    assert P.cache(value) == expected


def test_distinct_entries_keep_their_order() -> None:
    assert P.choices("3,1", "templates", (1, 2, 3)) == [3, 1]
    assert P.names(["b", "a"], "x") == ["b", "a"]


def test_callers_error_class_is_kept() -> None:
    class MyError(InputError):
        pass

    with pytest.raises(MyError):
        P.choices([1, 1], "templates", (1, 2, 3), error=MyError)


@pytest.mark.parametrize("build, fragment", [
    (lambda: __import__("stereoprobe.tasks.globalbias", fromlist=["x"]).globalbias(source="bundled",
                                                                                   templates=[1, 1]), "templates"),
    (lambda: __import__("stereoprobe.tasks.globalbias", fromlist=["x"]).globalbias(source="bundled",
                                                                                   templates=[4]), "templates"),
    (lambda: __import__("stereoprobe.tasks.globalbias", fromlist=["x"]).globalbias(source="bundled",
                                                                                   descriptors=[0, 0]), "descriptors"),
    (lambda: __import__("stereoprobe.tasks.globalbias", fromlist=["x"]).globalbias(
        source="bundled", groups=["ARAB_F", "ARAB_F"]), "groups"),
    (lambda: __import__("stereoprobe.tasks.stereotales", fromlist=["x"]).stereotales(cache="maybe"), "cache"),
    (lambda: __import__("stereoprobe.tasks.stereotales", fromlist=["x"]).stereotales(min_extractors=0),
     "min_extractors"),
])
def test_a_task_refuses_a_bad_parameter_when_it_is_built(build, fragment: str) -> None:
    with pytest.raises((PrerequisiteError, InputError)) as info:
        build()
    assert fragment in str(info.value) and "\n" not in str(info.value)
