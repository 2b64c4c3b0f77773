"""The inspect registry keys tasks, scorers and metrics by package-qualified name: two objects of one kind
with the same name silently replace each other (a re-scored log then computes the wrong metric).
These tests keep every registered name unique and check the entry point exposes the tasks and provider."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DECORATORS = {"task", "scorer", "metric", "solver", "modelapi", "score_reducer"}


def _registered_names() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {k: [] for k in DECORATORS}
    for folder in ("tasks", "solvers", "scorers", "stereoprobe"):
        for path in (REPO / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    kind = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                    if kind not in DECORATORS:
                        continue
                    name = node.name
                    if isinstance(dec, ast.Call):
                        for kw in dec.keywords:
                            if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                                name = kw.value.value
                    found[kind].append(f"{name} ({path.relative_to(REPO)})")
    return found


def test_registered_names_are_unique_per_kind() -> None:
    for kind, entries in _registered_names().items():
        counts = Counter(e.split(" ")[0] for e in entries)
        dupes = [e for e in entries if counts[e.split(" ")[0]] > 1]
        assert not dupes, f"duplicate @{kind} names: {dupes}"


def test_entry_point_registers_tasks_and_provider() -> None:
    import stereoprobe._registry  # noqa: F401
    from inspect_ai._util.registry import registry_find

    tasks = {getattr(t, "__registry_info__").name for t in registry_find(lambda i: i.type == "task")}
    for name in ("stereotales", "stereotales_judge", "dbb", "dbb_sg", "globalbias", "globalbias_profiles"):
        assert f"stereoprobe/{name}" in tasks, sorted(tasks)
    apis = {getattr(t, "__registry_info__").name for t in registry_find(lambda i: i.type == "modelapi")}
    assert any(a.endswith("transformers") for a in apis), apis


def test_entry_point_and_globalbias_live_metric_leave_scipy_stats_unimported() -> None:
    """``inspect eval`` imports the entry point before the first sample and the GlobalBias live metrics'
    modules during the run; neither needs ``scipy.stats`` (about a second of imports on the critical path
    before the first sample, issue 44), so they import it only inside the functions that use it."""
    import subprocess
    import sys

    code = ("import sys; import stereoprobe._registry, stereoprobe.globalbias.apx, stereoprobe.scorers.globalbias; "
            "print(sorted(m for m in sys.modules if m == 'scipy.stats' or m.startswith('scipy.stats.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip() == "[]", done.stdout
