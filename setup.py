"""Package discovery (the metadata is in pyproject.toml).

Every folder under ``stereoprobe/`` is a package, and the top-level ``tasks/``, ``solvers/``, ``scorers/`` and
``datasets/`` folders with their sub-folders are installed as ``stereoprobe.tasks``, ``stereoprobe.solvers``, ...;
data-only folders (no ``__init__.py``) count as namespace packages so their files ship as package data. A new
probe package therefore needs no packaging edit.
"""

from setuptools import find_namespace_packages, setup

MAPPED = ("tasks", "solvers", "scorers", "datasets")  # top-level folders installed inside the stereoprobe namespace
EXCLUDE = ["__pycache__", "*.__pycache__", "*.__pycache__.*"]


def packages() -> list[str]:
    found = find_namespace_packages(include=["stereoprobe", "stereoprobe.*"], exclude=EXCLUDE)
    for top in MAPPED:
        found += [f"stereoprobe.{top}"] + [f"stereoprobe.{top}.{p}" for p in find_namespace_packages(where=top, exclude=EXCLUDE)]
    return sorted(found)


setup(packages=packages(), package_dir={"stereoprobe": "stereoprobe", **{f"stereoprobe.{t}": t for t in MAPPED}})
