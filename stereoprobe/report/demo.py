"""Pages built from demo settings say so: a DEMO banner on top, and no best/worst badges.

A report is a demo when the runs behind it used the bundled default model ``transformers/default`` (the
135M-parameter SmolLM2 that ``make demo`` runs: it proves the plumbing, its numbers mean nothing), as model
under evaluation or in a ``--model-role``, or when its ``run_info.json`` carries ``"demo": true``. The runs
come from ``run_info.json`` (``runs``: each run's ``model``, or the leaderboard's ``logged_model``, and its
``model_roles``; ``models`` for files without ``runs``), which every post-processing command writes from the
logs' own headers, so a relabelled model (the leaderboard's ``LABEL=PATH``) is still recognised.

>>> demo_reason({"runs": [{"model": "transformers/default", "model_roles": {}}]})
'built from the bundled default model transformers/default (135M parameters): its numbers show that the pipeline runs and mean nothing about bias'
>>> demo_reason({"runs": [{"model": "openai/gpt-4o", "model_roles": {"judge": "transformers/default (max_tokens=16)"}}]}) is not None
True
>>> demo_reason({"runs": [{"model": "transformers/HuggingFaceTB/SmolLM2-1.7B"}]}) is None
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["DEMO_MODELS", "demo_banner", "demo_reason", "demo_reason_of_folder", "demo_reason_of_runs"]

#: the model names that mark a run as a demo (the bundled default model)
DEMO_MODELS = ("transformers/default",)
_REASON = ("built from the bundled default model {model} (135M parameters): its numbers show that the pipeline "
           "runs and mean nothing about bias")


def _demo_model(name: object) -> str | None:
    text = str(name or "").strip()
    for model in DEMO_MODELS:
        if text == model or text.startswith(model + " "):  # a model-role binding: "model (key=value, ...)"
            return model
    return None


def demo_reason_of_runs(runs: Iterable[Mapping[str, Any]]) -> str | None:
    """Why runs (``run_info.json``'s ``runs`` entries or the leaderboard's runs table records) are a demo, or
    None."""
    for run in runs:
        if not isinstance(run, Mapping):
            continue
        roles = run.get("model_roles") or {}
        if isinstance(roles, str):
            try:
                roles = json.loads(roles)
            except ValueError:
                roles = {}
        names = [run.get("logged_model"), run.get("model"), *(roles.values() if isinstance(roles, Mapping) else [])]
        for name in names:
            model = _demo_model(name)
            if model:
                return _REASON.format(model=model)
    return None


def demo_reason(info: Mapping[str, Any]) -> str | None:
    """Why the report described by a ``run_info.json`` mapping is a demo, or None (module docstring)."""
    if info.get("demo") is True:
        return "built from demo settings (run_info.json: demo)"
    runs = info.get("runs")
    reason = demo_reason_of_runs(runs if isinstance(runs, list) else [])
    if reason:
        return reason
    models = info.get("models")
    names = models if isinstance(models, list) else [models]
    return next((_REASON.format(model=m) for m in map(_demo_model, names) if m), None)


def demo_reason_of_folder(folder: str | Path) -> str | None:
    """:func:`demo_reason` of ``folder/run_info.json``; None without a readable one."""
    from stereoprobe.report.run_info import RUN_INFO

    path = Path(folder) / RUN_INFO
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return demo_reason(info) if isinstance(info, dict) else None


def demo_banner(reason: str) -> str:
    """The banner shown at the top of a demo page (the template every page includes,
    :data:`stereoprobe.report.pages.DEMO_BANNER`)."""
    from stereoprobe.report.pages import DEMO_BANNER, render_page

    return render_page(DEMO_BANNER, demo=reason)
