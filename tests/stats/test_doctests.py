"""The examples in the docstrings of every ``stereoprobe.stats`` module run and give what they print."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import stereoprobe.stats as stats_package

MODULES = sorted(m.name for m in pkgutil.iter_modules(stats_package.__path__, stats_package.__name__ + "."))


def test_every_module_is_listed():
    assert "stereoprobe.stats.proportion" in MODULES and len(MODULES) >= 8


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples of {name} failed"
    assert result.attempted > 0, f"{name} has no doctest example"
