"""``stereoprobe tasks``: the inspect tasks of stereoprobe, one line each with their ``-T`` parameters.

``inspect eval stereoprobe/<misspelt>`` used to say only "No inspect tasks were found"; this listing names every
task and its parameters (``stereoprobe tasks NAME``: one parameter a line, its default and the first sentence of
its description). The task modules are read, not imported (their ``@task`` functions parsed with :mod:`ast`):
importing them would import inspect_ai, seconds before the first line (issue 35.10).
"""

from __future__ import annotations

import argparse
import ast
import re
from dataclasses import dataclass
from pathlib import Path

from stereoprobe.errors import InputError

PREFIX = "stereoprobe/"


@dataclass(frozen=True)
class TaskInfo:
    """One ``@task`` function of ``tasks/``: its name, description, parameters (name, default as written)
    and the parameters' descriptions from its docstring's ``Args:`` section."""

    name: str
    description: str
    parameters: tuple[tuple[str, str], ...]
    docs: dict[str, str]


def _is_task(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Name) and target.id == "task"


def _description(decorators: list[ast.expr]) -> str:
    for d in decorators:
        if isinstance(d, ast.Call) and _is_task(d):
            for kw in d.keywords:
                if kw.arg == "description" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    return ""


def _arg_docs(docstring: str) -> dict[str, str]:
    """Parameter -> the first sentence of its entry in a Google-style ``Args:`` section."""
    docs: dict[str, str] = {}
    lines = docstring.split("Args:", 1)[1].splitlines() if "Args:" in docstring else []
    current: list[str] = []
    names: list[str] = []
    for text in lines + ["    end_of_args: "]:
        m = re.match(r"^\s{4,8}([a-z_][a-z_0-9, ]*):\s*(.*)$", text)
        if m and not text.startswith(" " * 12):
            for n in names:
                docs[n] = _first_sentence(" ".join(current))
            names = [x.strip() for x in m.group(1).split(",") if x.strip()]
            current = [m.group(2)]
        elif names and text.strip():
            current.append(text.strip())
    return docs


def _first_sentence(text: str, most: int = 160) -> str:
    text = re.sub(r"\s+", " ", text.replace("``", "")).strip()
    m = re.search(r"(?<=[a-z0-9)\]])(?<!Eq)(?<!e\.g)(?<!i\.e)\.\s", text + " ")
    text = text[:m.start() + 1] if m else text
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def _module_file(folder: Path, module: str) -> Path | None:
    """The source file of ``stereoprobe.x.y`` (or ``stereoprobe.tasks.z``), found without importing it."""
    parts = module.split(".")
    if parts[:2] == ["stereoprobe", "tasks"]:
        base, parts = folder, parts[2:]
    elif parts[0] == "stereoprobe":
        base, parts = Path(__file__).resolve().parents[1], parts[1:]
    else:
        return None
    for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def _constant(folder: Path, path: Path, name: str, depth: int = 0) -> ast.expr | None:
    """The literal assigned to ``name`` in ``path`` (following ``from M import name`` and ``import M as A``
    references ``A.name``), or None."""
    if depth > 4:
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"))
    head, _, attr = name.partition(".")
    for node in tree.body:
        if not attr and isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value if isinstance(node.value, ast.Constant) else None
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                module = f"{node.module}.{alias.name}"
                if attr and (alias.asname or alias.name) == head and (found := _module_file(folder, module)):
                    return _constant(folder, found, attr, depth + 1)
                if not attr and (alias.asname or alias.name) == name and (found := _module_file(folder, node.module)):
                    return _constant(folder, found, alias.name, depth + 1)
    return None


def _default(node: ast.expr | None, folder: Path, path: Path) -> str:
    if node is None:
        return ""
    if isinstance(node, (ast.Name, ast.Attribute)):  # a constant of another module: its value
        node = _constant(folder, path, ast.unparse(node)) or node
    text = ast.unparse(node)
    return {"None": "none", "True": "true", "False": "false"}.get(text, text.strip("'\""))


def read_tasks(folder: Path) -> list[TaskInfo]:
    """Every ``@task`` function of the modules in ``folder``, sorted by name."""
    found: list[TaskInfo] = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not any(_is_task(d) for d in node.decorator_list):
                continue
            args = node.args.args
            defaults: list[ast.expr | None] = [None] * (len(args) - len(node.args.defaults))
            defaults += list(node.args.defaults)
            params = tuple((a.arg, _default(d, folder, path)) for a, d in zip(args, defaults))
            found.append(TaskInfo(node.name, _description(node.decorator_list), params,
                                  _arg_docs(ast.get_docstring(node) or "")))
    return sorted(found, key=lambda t: t.name)


def line(info: TaskInfo) -> str:
    """``stereoprobe/NAME  -T a=default b=default ...``: one task, one line."""
    params = " ".join(f"{n}={d}" if d else n for n, d in info.parameters)
    return f"{PREFIX}{info.name}  -T {params}" if params else f"{PREFIX}{info.name}"


def details(info: TaskInfo) -> list[str]:
    """The task's description, then one line per parameter: ``-T name=default  what it is``."""
    out = [f"{PREFIX}{info.name}: {info.description}".rstrip(": ")]
    width = max((len(n) + len(d) + 1 for n, d in info.parameters), default=0)
    for n, d in info.parameters:
        shown = f"{n}={d}" if d else n
        out.append(f"  -T {shown:<{width}}  {info.docs.get(n, '')}".rstrip())
    return out


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``tasks`` subcommand."""
    p = sub.add_parser(
        "tasks",
        help="list stereoprobe's inspect tasks and their -T parameters (one line each)",
        description="List the inspect tasks of stereoprobe (run them as inspect eval stereoprobe/NAME), one line "
        "each with every -T parameter and its default; with task names, one parameter a line with what it is.",
    )
    p.add_argument("names", nargs="*", metavar="TASK", help="show these tasks' parameters one a line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the listing."""
    from stereoprobe.listings import tasks_dir
    from stereoprobe.hints import did_you_mean

    tasks = {t.name: t for t in read_tasks(tasks_dir())}
    wanted = [n[len(PREFIX):] if n.startswith(PREFIX) else n for n in args.names]
    for n in wanted:
        if n not in tasks:
            raise InputError(f"no task {n!r}{did_you_mean(n, list(tasks))} (tasks: {', '.join(tasks)})")
    text = "\n\n".join("\n".join(details(tasks[n])) for n in wanted) if wanted else "\n".join(
        line(t) for t in tasks.values())
    try:
        print(text, flush=True)
    except BrokenPipeError:  # stereoprobe tasks | head
        import os
        import sys

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
