"""Every ``"module:function"`` string of the probe descriptors resolves (issue 35.14).

The descriptors name their leaderboard, planner and lm-eval functions as ``"module:function"`` strings, imported
only when called (:meth:`stereoprobe.probes.ProbeDescriptor.call`): invisible to the import picture and to
``tests/test_layers.py``, so a misspelt name would fail only at run time. This test walks every field of every
registered descriptor (its plan tasks and mappings included), imports each such string's module and looks the
function up.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from stereoprobe.probes import registered, report_folders

REFERENCE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """``(where, text)`` for every text inside ``value`` (dataclasses, mappings, sequences)."""
    if isinstance(value, str):
        yield where, value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _strings(getattr(value, f.name), f"{where}.{f.name}")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(v, f"{where}[{k!r}]")
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")


def references() -> list[tuple[str, str]]:
    """Every ``"module:function"`` text of the probe descriptors and the report-folder kinds."""
    found = [(where, text) for d in registered() for where, text in _strings(d, d.name)]
    found += [(where, text) for k in report_folders() for where, text in _strings(k, f"report folder {k.name}")]
    return [(where, text) for where, text in found if REFERENCE.match(text)]


def command_modules() -> list[tuple[str, str]]:
    return [(f"{d.name}.commands[{i}]", m) for d in registered() for i, m in enumerate(d.commands)]


def test_the_descriptors_hold_their_function_references() -> None:
    # 14 when this test was written (2 + 3 + 3 + 2 leaderboard functions of the four descriptors, DBB's two planning
    # functions for each of its two tasks); fewer means the walk above no longer reaches a field, not that one is gone
    assert len(references()) >= 14, references()


@pytest.mark.parametrize("where, text", references())
def test_every_function_reference_resolves(where: str, text: str) -> None:
    module, _, attr = text.partition(":")
    try:
        loaded = importlib.import_module(module)
    except ImportError as exc:  # the message names the descriptor field
        pytest.fail(f"{where} = {text!r}: module {module} cannot be imported ({exc})")
    assert hasattr(loaded, attr), f"{where} = {text!r}: {module} has no {attr}"
    assert callable(getattr(loaded, attr)), f"{where} = {text!r}: not callable"


@pytest.mark.parametrize("where, module", command_modules())
def test_every_command_module_registers(where: str, module: str) -> None:
    assert callable(getattr(importlib.import_module(module), "register", None)), f"{where} = {module!r}"
