"""The ``--model`` names of a run, checked before any model loads: one is given, and its provider exists.

Without ``--model`` (and ``$INSPECT_EVAL_MODEL``) inspect runs ``none/none``, which fails later with a line about
log-probabilities; a misspelt provider (``transformer/default``) fails in inspect's provider lookup with a long
traceback. Both are refused here in one line, a misspelt provider with "did you mean"
(:mod:`stereoprobe.hints`).
"""

from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from stereoprobe.errors import InputError
from stereoprobe.hints import did_you_mean

__all__ = ["ModelNameError", "builtin_providers", "check_models", "providers"]

EXAMPLE = "--model transformers/default (the bundled model) or --model openai/gpt-4o-mini"


class ModelNameError(InputError):
    """No model, or a model whose provider no installed package provides."""


@lru_cache(maxsize=1)
def builtin_providers() -> frozenset[str]:
    """The providers inspect_ai defines itself, from ``inspect_ai/model/_providers/providers.py`` (parsed)."""
    spec = importlib.util.find_spec("inspect_ai")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    path = Path(list(spec.submodule_search_locations)[0]) / "model" / "_providers" / "providers.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return frozenset()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "modelapi":
            for kw in node.keywords:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    names.add(str(kw.value.value))
    return frozenset(names)


def providers() -> set[str]:
    """inspect's built-in providers and those registered so far (stereoprobe's ``transformers`` among them)."""
    from stereoprobe.inspect_internals import registry_find, registry_info

    found = registry_find(lambda info: info.type == "modelapi")
    return set(builtin_providers()) | {registry_info(f).name.split("/")[-1] for f in found}


def _other_packages_register_providers() -> bool:
    """Whether a package other than stereoprobe has an inspect entry point (its providers load after ours)."""
    try:
        points = metadata.entry_points(group="inspect_ai")
    except Exception:  # noqa: BLE001 (unknown: assume another package may provide it)
        return True
    return any(not str(p.value).startswith("stereoprobe") for p in points)


def check_models(models: tuple[str, ...], command: str = "inspect eval") -> None:
    """:class:`ModelNameError` for no model or an unknown provider (one line, "did you mean")."""
    if not models:
        raise ModelNameError(f"{command}: no model given (no --model and no $INSPECT_EVAL_MODEL; inspect would run "
                             f"none/none): give {EXAMPLE}")
    known = providers()
    for model in models:
        if model == "none":  # inspect's own "no model" (none/none): roles do the work, or a re-score
            continue
        provider, slash, rest = model.partition("/")
        if not slash or not provider or not rest:
            raise ModelNameError(f"{command}: model {model!r} is not PROVIDER/NAME: give {EXAMPLE}")
        if provider in known:
            continue
        hint = did_you_mean(provider, sorted(known), lambda c: f"{c}/{rest}")
        if hint or not _other_packages_register_providers():
            raise ModelNameError(f"{command}: no model provider {provider!r} in {model!r}{hint} "
                                 f"(providers: {', '.join(sorted(known))})")
