"""``summary/<model>.json`` (one per model, validated against the versioned JSON schema in
``datasets/leaderboard/summary.schema.json``) and the Hugging Face Hub ``.eval_results/*.yaml`` export.

Hub export: a model repository shows evaluation results from YAML files in its ``.eval_results/`` folder,
each a list of entries ``{dataset: {id, task_id}, value, date, source: {url, name}, notes}`` pointing at a
benchmark dataset described by an Inspect-based ``eval.yaml`` (https://huggingface.co/docs/hub/eval-results).
:func:`write_hub_eval_results` writes one file per probe and model from the leaderboard's figures, with the
dataset id and task ids of the probe's listing (``tasks/<probe>.eval.yaml``,
section ``hub``).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd


SCHEMA_VERSION = "1.0"
def data_dir() -> Path:
    """The ``datasets/leaderboard`` folder (source tree or installed package)."""
    from stereoprobe.paths import datasets_dir

    return datasets_dir() / "leaderboard"


def load_schema() -> dict[str, Any]:
    return json.loads((data_dir() / "summary.schema.json").read_text(encoding="utf-8"))


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) or math.isinf(f) else f


def safe_name(model: str) -> str:
    """A file name for a model id, confined to its folder and distinct per id (``openai/gpt-4o`` ->
    ``openai__gpt-4o``; hostile or long labels get a stable hash, :func:`stereoprobe.output_paths.safe_file_name`)."""
    from stereoprobe.output_paths import safe_file_name

    return safe_file_name(model)


def model_summary(model: str, metrics: pd.DataFrame, pairwise: pd.DataFrame, sources: list[tuple[str, str]],
                  level: float, created: str | None = None) -> dict[str, Any]:
    """The summary object of one model (see the schema)."""
    from stereoprobe import __version__

    probes: dict[str, dict[str, Any]] = {}
    for r in metrics[metrics["model"] == model].itertuples(index=False):
        probes.setdefault(r.probe, {})[r.metric] = {
            "estimate": _num(r.estimate), "ci_low": _num(r.ci_low), "ci_high": _num(r.ci_high), "n": _num(r.n),
            "better": r.better or "", "method": r.method}
    pw = []
    for r in pairwise.itertuples(index=False):
        if model not in (r.model_a, r.model_b):
            continue
        sign = 1.0 if r.model_a == model else -1.0
        lo, hi = _num(r.ci_low), _num(r.ci_high)
        if sign < 0:
            lo, hi = (None if hi is None else -hi), (None if lo is None else -lo)
        est = _num(r.estimate)
        pw.append({"probe": r.probe, "metric": r.metric, "other_model": r.model_b if sign > 0 else r.model_a,
                   "estimate": None if est is None else sign * est, "ci_low": lo, "ci_high": hi,
                   "p_value": _num(r.p_value), "q_value": _num(r.q_value)})
    return {"schema_version": SCHEMA_VERSION, "model": model,
            "created": created or datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "stereoprobe_version": __version__, "confidence_level": level,
            "sources": [{"probe": p, "folder": f} for p, f in sources], "probes": probes, "pairwise": pw}


def validate_summary(obj: dict[str, Any]) -> None:
    """Raise :class:`ValueError` naming the first violation when ``obj`` does not follow the schema."""
    import jsonschema

    try:
        jsonschema.validate(obj, load_schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(map(str, exc.absolute_path)) or "(root)"
        raise ValueError(f"summary of {obj.get('model')!r} violates the schema at {where}: {exc.message}") from exc


def write_summaries(out: Path, metrics: pd.DataFrame, pairwise: pd.DataFrame, sources: list[tuple[str, str]],
                    level: float) -> list[Path]:
    """Write and validate ``out/summary/<model>.json`` for every model; return the paths."""
    from stereoprobe.redact import redact  # a source folder's path or URL shows no credential

    folder = out / "summary"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for model in sorted(metrics["model"].unique()):
        obj = model_summary(model, metrics, pairwise, sources, level)
        validate_summary(obj)
        p = folder / f"{safe_name(model)}.json"
        p.write_text(json.dumps(redact(obj), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        paths.append(p)
    return paths


# -------------------------------------------------------------------------------------------- Hub export
def load_listing(probe: str) -> dict[str, Any]:
    """The ``eval.yaml`` listing of a probe (``tasks/<probe>.eval.yaml``; :mod:`stereoprobe.listings`)."""
    from stereoprobe.listings import load_listing as _load_listing

    return _load_listing(probe)


def hub_entries(model: str, metrics: pd.DataFrame, source_url: str | None = None,
                date: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """file stem -> entries of ``.eval_results/<stem>.yaml`` for one model: one entry per figure named in a
    listing's ``hub.tasks`` (``task_id`` -> ``probe`` + ``metric``), value = the leaderboard estimate."""
    day = date or datetime.now(timezone.utc).date().isoformat()
    out: dict[str, list[dict[str, Any]]] = {}
    mine = metrics[metrics["model"] == model].set_index(["probe", "metric"])
    from stereoprobe.probes import registered

    for listing_probe in dict.fromkeys(d.listing for d in registered() if d.listing):
        hub = load_listing(listing_probe).get("hub") or {}
        for t in hub.get("tasks", []):
            key = (t["probe"], t["metric"])
            if key not in mine.index:
                continue
            r = mine.loc[key]
            value = _num(r["estimate"])
            if value is None:
                continue
            lo, hi = _num(r["ci_low"]), _num(r["ci_high"])
            entry: dict[str, Any] = {"dataset": {"id": hub["dataset_id"], "task_id": t["task_id"]}, "value": value,
                                     "date": day}
            url = source_url or hub.get("source_url")
            if url:  # the Hub requires a url whenever a source is given
                entry["source"] = {"url": url, "name": "stereoprobe leaderboard"}
            notes = f"{t.get('description', t['metric'])}"
            if lo is not None and hi is not None:
                notes += f"; 95% CI [{lo:.4g}, {hi:.4g}]"
            entry["notes"] = notes
            out.setdefault(f"stereoprobe_{listing_probe}_{t['task_id']}", []).append(entry)
    return out


#: file name of a probe's Hub benchmark definition beside its listing: ``tasks/<probe>.hub.yaml``
HUB_DEFINITION_SUFFIX = ".hub.yaml"
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


def load_hub_definition(probe: str) -> dict[str, Any]:
    """The Hub benchmark definition of ``probe`` (``tasks/<probe>.hub.yaml``, the Hub's ``eval.yaml`` format:
    ``name``, ``description``, ``evaluation_framework``, ``tasks[].id``), to upload as ``eval.yaml`` to the
    benchmark dataset of the listing's ``hub.dataset_id``."""
    import yaml

    from stereoprobe.errors import InputError
    from stereoprobe.listings import tasks_dir

    path = tasks_dir() / f"{probe}{HUB_DEFINITION_SUFFIX}"
    if not path.is_file():
        raise InputError(f"{path}: no Hub benchmark definition for probe {probe!r}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise InputError(f"{path}: not a Hub eval.yaml (a mapping with a 'tasks' list)")
    return data


def parse_hub_model_ids(items: list[str] | None, labels: list[str]) -> dict[str, str]:
    """``LABEL=org/name`` items -> {label: Hub model id}. A label the leaderboard does not have, a label given
    twice, or an id that is not ``org/name`` is one :class:`~stereoprobe.errors.InputError` line."""
    from stereoprobe.errors import InputError

    ids: dict[str, str] = {}
    for item in items or []:
        label, sep, hub_id = item.rpartition("=")
        if not sep or not label:
            raise InputError(f"--hub-model-id {item!r}: expected LABEL=org/name")
        if label not in labels:
            raise InputError(f"--hub-model-id {item!r}: no model labelled {label!r} in the leaderboard "
                             f"(models: {', '.join(labels)})")
        if label in ids:
            raise InputError(f"--hub-model-id {item!r}: label {label!r} given twice")
        if not _HUB_ID.fullmatch(hub_id) or ".." in hub_id or len(hub_id) > 96:
            raise InputError(f"--hub-model-id {item!r}: {hub_id!r} is not a Hub model id (org/name)")
        if hub_id in ids.values():
            raise InputError(f"--hub-model-id {item!r}: {hub_id!r} is already the id of another label")
        ids[label] = hub_id
    return ids


def write_hub_eval_results(out: Path, metrics: pd.DataFrame, source_url: str | None = None,
                           date: str | None = None, model_ids: dict[str, str] | None = None) -> list[Path]:
    """Write ``out/<model>/.eval_results/<file>.yaml`` for every model; return the files written.
    ``model_ids``: label -> Hub model id (``org/name``); a mapped model's files go under the id's folder
    (``org__name``), the others under their label's."""
    import yaml

    from stereoprobe.redact import check_public_url, redact

    if source_url is not None:  # published on the Hub: an http(s) URL without credentials only
        check_public_url(source_url, "hub source URL")
    paths = []
    model_ids = model_ids or {}
    for model in sorted(metrics["model"].unique()):
        folder = out / safe_name(model_ids.get(str(model), str(model))) / ".eval_results"
        for stem, entries in hub_entries(model, metrics, source_url, date).items():
            folder.mkdir(parents=True, exist_ok=True)
            p = folder / f"{stem}.yaml"
            p.write_text(yaml.safe_dump(redact(entries), sort_keys=False, allow_unicode=True), encoding="utf-8")
            paths.append(p)
    return paths
