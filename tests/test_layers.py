"""The package's import graph: every arrow points down the layers, and no module imports itself back.

Layers, from the bottom: the library (``stereoprobe/*``); the client's adapters (``solvers/``, ``scorers/``,
installed as ``stereoprobe.solvers`` / ``stereoprobe.scorers``, and the lm-eval task folder
``stereoprobe/lm_eval_tasks``), which never import each other; ``tasks/`` (``stereoprobe.tasks``, assembling
solvers and scorers); inspect's entry point ``stereoprobe._registry``; the command line ``stereoprobe.cli``;
``python -m stereoprobe`` (``stereoprobe.__main__``). A module may import its own layer or a lower one.

The graph is read from the source (``ast``): ``import`` and ``from ... import`` statements anywhere in a module
(inside functions and ``if TYPE_CHECKING:`` blocks too) and ``importlib.import_module("...")`` calls with a
literal name. A name imported from a package resolves to its submodule when there is one, else to the
package's ``__init__``. The same graph between the folders one level below the package (``stereoprobe/report``,
``stereoprobe/leaderboard``, ...) has no cycle either.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the installed package name of each source folder (setup.py maps tasks/, solvers/, scorers/ into stereoprobe)
FOLDERS = {"stereoprobe": ROOT / "stereoprobe", "stereoprobe.tasks": ROOT / "tasks",
           "stereoprobe.solvers": ROOT / "solvers", "stereoprobe.scorers": ROOT / "scorers"}

#: (layer prefix, rank); the longest matching prefix names a module's layer, and "stereoprobe" is the library
LAYERS: dict[str, int] = {
    "stereoprobe": 0,
    "stereoprobe.solvers": 1,
    "stereoprobe.scorers": 1,
    "stereoprobe.lm_eval_tasks": 1,
    "stereoprobe.tasks": 2,
    "stereoprobe._registry": 3,
    "stereoprobe.cli": 4,
    "stereoprobe.__main__": 5,
}


def module_sources(folders: Mapping[str, Path] = FOLDERS) -> dict[str, tuple[str, bool]]:
    """Module name -> (source text, is a package ``__init__``) of every ``.py`` file under ``folders``."""
    found: dict[str, tuple[str, bool]] = {}
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join([package, *(parts[:-1] if is_package else parts)])
            found[name] = (path.read_text(encoding="utf-8"), is_package)
    return found


def _imported_names(module: str, source: str, is_package: bool) -> Iterable[str]:
    """Every dotted name ``module``'s source imports (``from X import y`` gives ``X.y``, resolved later)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, one level up per extra dot
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            yield from (f"{origin}.{alias.name}" for alias in node.names)  # the submodule, else the package
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value


def import_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` it imports (each name resolved to the longest known module)."""
    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in sources.items():
        targets = set()
        for name in _imported_names(module, source, is_package):
            while name and name not in sources:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def layer_of(module: str) -> str:
    """The layer (a key of :data:`LAYERS`) of ``module``: its longest matching prefix."""
    matches = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return max(matches, key=len)


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """``a -> b`` for every import of a module ``b`` in a higher layer than ``a``, or in another layer of the same
    rank (solvers, scorers and the lm-eval tasks do not import each other)."""
    bad = []
    for module, targets in sorted(graph.items()):
        mine = layer_of(module)
        for target in sorted(targets):
            theirs = layer_of(target)
            if theirs != mine and LAYERS[theirs] >= LAYERS[mine]:
                bad.append(f"{module} -> {target}")
    return bad


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: every import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative depth-first search (no recursion limit on deep chains)
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def folder_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between folders: each module counted in its folder one level below the package
    (``stereoprobe.report.headlines`` in ``stereoprobe.report``; a module directly under ``stereoprobe/`` is its own
    node); an arrow from folder A to folder B for every import of a module of B by a module of A."""
    def folder(module: str) -> str:
        return ".".join(module.split(".")[:2])

    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        mine = folder(module)
        folders.setdefault(mine, set()).update(folder(t) for t in targets if folder(t) != mine)
    return folders


# ------------------------------------------------------------------------------------------------ the checks


def test_the_checks_find_an_upward_import_and_a_cycle() -> None:
    """Self-check on a made-up package: an upward import, a relative import, a lazy one and a cycle are found."""
    sources = {
        "stereoprobe": ("", True),
        "stereoprobe.stats": ("from stereoprobe.cli import main\n", False),  # library -> command line
        "stereoprobe.probe": ("def f():\n    from .scorers import toy\n", False),  # lazy, relative, upward
        "stereoprobe.scorers": ("", True),
        "stereoprobe.scorers.toy": ("from stereoprobe import solvers\n", False),  # scorers -> solvers: siblings
        "stereoprobe.solvers": ("", True),
        "stereoprobe.cli": ("import importlib\nimportlib.import_module('stereoprobe.stats')\n", True),  # fine
        "stereoprobe.a": ("from stereoprobe import b\n", False),
        "stereoprobe.b": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from stereoprobe.a import X\n",
                          False),
    }
    graph = import_graph(sources)
    assert graph["stereoprobe.probe"] == {"stereoprobe.scorers.toy"}
    assert graph["stereoprobe.cli"] == {"stereoprobe.stats"}
    assert upward_imports(graph) == ["stereoprobe.probe -> stereoprobe.scorers.toy",
                                     "stereoprobe.scorers.toy -> stereoprobe.solvers",
                                     "stereoprobe.stats -> stereoprobe.cli"]
    assert cycles(graph) == [["stereoprobe.a", "stereoprobe.b"], ["stereoprobe.cli", "stereoprobe.stats"]]
    del sources["stereoprobe.stats"], sources["stereoprobe.probe"], sources["stereoprobe.scorers.toy"]
    sources["stereoprobe.b"] = ("", False)
    clean = import_graph(sources)
    assert upward_imports(clean) == [] and cycles(clean) == []


def test_the_folder_check_finds_a_cycle_between_folders() -> None:
    """Self-check: two folders importing each other through different modules form a cycle no module cycle shows."""
    sources = {
        "stereoprobe": ("", True),
        "stereoprobe.report": ("", True),
        "stereoprobe.report.html": ("", False),
        "stereoprobe.report.headlines": ("from stereoprobe.leaderboard.headline import headline_table\n", False),
        "stereoprobe.leaderboard": ("", True),
        "stereoprobe.leaderboard.headline": ("", False),
        "stereoprobe.leaderboard.report": ("from stereoprobe.report.html import write_report\n", False),
    }
    graph = import_graph(sources)
    assert cycles(graph) == []
    assert cycles(folder_graph(graph)) == [["stereoprobe.leaderboard", "stereoprobe.report"]]
    sources["stereoprobe.report.headlines"] = ("", False)
    assert cycles(folder_graph(import_graph(sources))) == []


def test_the_graph_covers_the_package() -> None:
    graph = import_graph(module_sources())
    for module in ("stereoprobe.probes", "stereoprobe.cli", "stereoprobe.tasks.dbb", "stereoprobe.scorers.dbb",
                   "stereoprobe.solvers.dbb", "stereoprobe.lm_eval_tasks.dbb.utils", "stereoprobe._registry"):
        assert module in graph, module
    assert "stereoprobe.stats.bootstrap" in graph["stereoprobe.dbb.stats"] | {
        t for m in graph["stereoprobe.dbb.stats"] for t in graph[m]}  # resolves absolute imports


def test_no_import_points_up_the_layers() -> None:
    """The library never imports the command line, the tasks, the solvers, the scorers or the lm-eval tasks."""
    assert upward_imports(import_graph(module_sources())) == []


def test_no_import_cycles() -> None:
    assert cycles(import_graph(module_sources())) == []


def test_no_import_cycles_between_folders() -> None:
    """The folders of the library form layers too: the report pages (``stereoprobe/report``) never import the
    leaderboard or the reference that write through them (the index reads their headline figures through
    :func:`stereoprobe.probes.report_folders`), and no two folders import each other."""
    assert cycles(folder_graph(import_graph(module_sources()))) == []
