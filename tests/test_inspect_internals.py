"""inspect's internals are used through one module only (:mod:`stereoprobe.inspect_internals`).

Any other module of the package that imports ``inspect_ai._*``, a private module below a public one
(``inspect_ai.model._model``) or a private name (``from inspect_ai.model import _x``) fails this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import stereoprobe.inspect_internals as adapter
from test_layers import module_sources

ADAPTER = "stereoprobe.inspect_internals"
#: modules that still import inspect's internals directly (none: every one goes through the adapter)
NOT_YET_THROUGH_THE_ADAPTER: set[str] = set()


def _private(dotted: str) -> bool:
    return dotted.split(".")[0] == "inspect_ai" and any(p.startswith("_") for p in dotted.split(".")[1:])


def private_imports(source: str) -> list[str]:
    """Every private inspect name ``source`` imports (anywhere: module level, functions, ``TYPE_CHECKING``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _private(a.name)]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            found += [n for n in names if _private(n)]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and _private(node.args[0].value)):
            found.append(node.args[0].value)
    return found


def test_the_check_finds_every_form_of_private_import() -> None:
    source = ("import inspect_ai._util.error\n"
              "from inspect_ai._eval.registry import task_create\n"
              "def f():\n    from inspect_ai.model._model import active_model\n"
              "from inspect_ai.model import _hidden, GenerateConfig\n"
              "import importlib\nimportlib.import_module('inspect_ai._cli.util')\n"
              "from inspect_ai.model import get_model\nimport inspect_ai.util\n")
    assert sorted(private_imports(source)) == ["inspect_ai._cli.util", "inspect_ai._eval.registry.task_create",
                                               "inspect_ai._util.error", "inspect_ai.model._hidden",
                                               "inspect_ai.model._model.active_model"]


def test_no_module_but_the_adapter_imports_inspect_internals() -> None:
    sources = module_sources()
    offenders = {m: private_imports(src) for m, (src, _) in sources.items()
                 if m != ADAPTER and m not in NOT_YET_THROUGH_THE_ADAPTER}
    assert {m: found for m, found in offenders.items() if found} == {}
    # the exemptions name existing modules that still need them (an emptied one leaves the list)
    assert all(m in sources and private_imports(sources[m][0]) for m in NOT_YET_THROUGH_THE_ADAPTER)


def test_the_adapter_says_what_each_name_is_for_and_its_public_replacement() -> None:
    for name in adapter.__all__:
        obj = getattr(adapter, name)
        if name == "PrerequisiteError":  # documented where it is imported
            assert "Public replacement" in Path(adapter.__file__).read_text(encoding="utf-8")
            continue
        assert "Public replacement" in " ".join((obj.__doc__ or "").split()), name
