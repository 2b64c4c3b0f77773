"""The model settings of the runs a report was made from, as the eval logs' headers record them.

Two runs of one model (``-M score_first_token=true``, another temperature, another ``--model-role`` helper)
must be told apart by their settings, not by the folder they were written to. For every run (task x model x
settings) of the logs a command read, :func:`log_run_settings` returns the model, the ``-M`` model arguments
(``model_args``), the ``--model-role`` bindings (``model_roles``: role -> model, with the role's own
generation settings and model arguments) and the generation settings (``generate_config``: ``--temperature``,
``--max-tokens``, ...), performance knobs left out (:data:`stereoprobe.inputs.samples.MODEL_ARG_KNOBS`,
:data:`stereoprobe.inputs.samples.GENERATE_KNOBS`: they never change what a run computes). Every command's
``run_info.json`` records them under ``runs`` (:func:`stereoprobe.report.run_info.write_run_info`), and the
leaderboard shows them per input folder (its ``runs`` table).

>>> settings_text({"model_args": {"score_first_token": True}, "model_roles": {},
...                "generate_config": {"temperature": 0.7}})
'-M score_first_token=true; temperature=0.7'
>>> settings_text({"model_args": {}, "model_roles": {"judge": "openai/gpt-4o (max_tokens=16)"},
...                "generate_config": {}})
'--model-role judge=openai/gpt-4o (max_tokens=16)'
>>> settings_text({"model_args": {}, "model_roles": {}, "generate_config": {}})
'provider defaults'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["RUN_SETTINGS", "log_run_settings", "run_settings", "settings_text"]

#: the keys of one run's settings, as ``run_info.json``'s ``runs`` entries and the leaderboard's runs table hold them
RUN_SETTINGS = ("model_args", "model_roles", "generate_config")


def _value(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def _kept(values: Mapping[str, Any] | None, knobs: Iterable[str]) -> dict[str, Any]:
    """``values`` without the performance ``knobs`` and unset values, through the one writer of outside input
    (:func:`stereoprobe.harmless.safe_settings`: a value is kept only where its key and shape are known
    harmless, everything else is ``***``)."""
    from stereoprobe.harmless import safe_settings

    knobs = set(knobs)
    if not isinstance(values, Mapping):
        return {}
    return safe_settings({k: v for k, v in sorted(values.items(), key=lambda kv: str(kv[0]))
                          if k not in knobs and v is not None})


def _role(binding: Any) -> str:
    """``model`` or ``model (key=value, ...)`` for one raw ``model_roles`` entry of an eval spec (a model name,
    or inspect's ``{model, config, args, base_url}``)."""
    from stereoprobe.inputs.samples import GENERATE_KNOBS, MODEL_ARG_KNOBS
    from stereoprobe.model_labels import model_label

    if isinstance(binding, list):
        return " | ".join(_role(b) for b in binding)
    if not isinstance(binding, Mapping):
        return model_label(str(binding))
    extra = {**_kept(binding.get("config"), GENERATE_KNOBS), **_kept(binding.get("args"), MODEL_ARG_KNOBS)}
    if binding.get("base_url"):
        from stereoprobe.harmless import safe_url

        extra["base_url"] = safe_url(str(binding["base_url"]))
    model = model_label(str(binding.get("model", "")))
    return model + (f" ({', '.join(f'{k}={_value(v)}' for k, v in extra.items())})" if extra else "")


def run_settings(spec: Mapping[str, Any]) -> dict[str, Any]:
    """``task``, ``task_version``, ``model`` and the :data:`RUN_SETTINGS` of one eval spec (:func:`stereoprobe.logs.read_eval_spec`),
    performance knobs and unset values left out, credentials redacted (:func:`stereoprobe.redact.redact`: an
    ``api_key`` model argument, ``user:password@`` or ``?key=`` in a base URL); every table, report and
    ``run_info.json`` takes a run's settings from here."""
    from stereoprobe.inputs.samples import GENERATE_KNOBS, MODEL_ARG_KNOBS
    from stereoprobe.model_labels import model_label
    from stereoprobe.redact import redact

    return redact({
        "task": str(spec.get("task", "")).split("/")[-1],
        "task_version": str(spec.get("task_version", "")),
        "model": model_label(str(spec.get("model", ""))),  # as the tables name it: public, no folder path
        "model_args": _kept(spec.get("model_args"), MODEL_ARG_KNOBS),
        "model_roles": {str(r): _role(b) for r, b in sorted((spec.get("model_roles") or {}).items())},
        "generate_config": _kept(spec.get("model_generate_config"), GENERATE_KNOBS),
    })


def log_run_settings(inputs: Iterable[str | Path]) -> list[dict[str, Any]]:
    """The distinct :func:`run_settings` of the inspect logs under ``inputs`` (files or folders), sorted by task
    and model; ``[]`` when the inputs hold no inspect log (lm-eval output, tables). A log that cannot be read
    is left out: the command that read the inputs has already reported it."""
    from stereoprobe.errors import InputError
    from stereoprobe.inputs import find_logs
    from stereoprobe.logs import read_eval_spec

    try:
        paths = find_logs([i for i in inputs if Path(i).exists()])
    except InputError:
        return []
    runs: dict[str, dict[str, Any]] = {}
    for path in paths:
        try:
            entry = run_settings(read_eval_spec(path))
        except (InputError, OSError, ValueError):
            continue
        runs.setdefault(json.dumps(entry, sort_keys=True, default=str), entry)
    return sorted(runs.values(), key=lambda r: (r["task"], r["model"], json.dumps(r, sort_keys=True, default=str)))


def settings_text(run: Mapping[str, Any]) -> str:
    """One line for a table cell: ``-M k=v``, ``--model-role role=model (...)``, then the generation settings;
    ``provider defaults`` when the run set none (credentials redacted, also in settings read from an older
    ``run_info.json``)."""
    from stereoprobe.redact import redact_text

    parts = [f"-M {k}={_value(v)}" for k, v in (run.get("model_args") or {}).items()]
    parts += [f"--model-role {r}={m}" for r, m in (run.get("model_roles") or {}).items()]
    parts += [f"{k}={_value(v)}" for k, v in (run.get("generate_config") or {}).items()]
    return redact_text("; ".join(parts)) or "provider defaults"
