"""Find and read the output folders of the probes' post-processing commands for the leaderboard.

An input is a folder written by ``stereoprobe associations`` (+ ``judge-report``), ``dbb``, ``globalbias`` or
``profiles``, or any folder above such folders (searched recursively; ``logs`` folders and hidden folders are
skipped). A folder's probe is recognised by the tables it holds (Parquet preferred, else CSV):

============== ========================================== ==============================================
probe          tables read                                written by
============== ========================================== ==============================================
stereotales    ``associations``, ``pair_tests``,           ``stereoprobe associations``
               ``refusal_rates``
judge          ``harm_labels``                            ``stereoprobe judge-report``
dbb            ``summary``, ``instances``                  ``stereoprobe dbb``
globalbias     ``bias_scores``, ``validation``,            ``stereoprobe globalbias``
               ``validation_detail``
               (+ ``incomplete_units``)
profiles       ``classification`` (+ ``predictions``)      ``stereoprobe profiles``
============== ========================================== ==============================================

An input written ``LABEL=PATH`` renames the model of that folder to ``LABEL`` (``LABEL/<model>`` when the
folder holds several models), so that two runs of one model (another temperature, another scoring option)
become two leaderboard rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError

# table name(s) whose presence marks a probe's output folder, and every table read from it
MARKERS: dict[str, tuple[str, ...]] = {
    "stereotales": ("associations", "pair_tests"),
    "judge": ("harm_labels",),
    "dbb": ("summary", "instances"),
    "globalbias": ("bias_scores",),
    "profiles": ("classification",),
}
TABLES: dict[str, tuple[str, ...]] = {
    "stereotales": ("associations", "pair_tests", "refusal_rates"),
    "judge": ("harm_labels",),
    "dbb": ("summary", "instances"),
    "globalbias": ("bias_scores", "validation", "validation_detail", "incomplete_units"),
    "profiles": ("classification", "predictions"),
}
# columns each table must have for the leaderboard (others are ignored)
REQUIRED: dict[str, tuple[str, ...]] = {
    "associations": ("model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value"),
    "pair_tests": ("model", "slice", "base_attribute", "compared_attribute"),
    "refusal_rates": ("model", "language", "target_attribute", "stories", "refused"),
    "harm_labels": ("association_id", "harmful"),
    "summary": ("model", "variant", "category", "count_s_ge_20", "mean_s_biased"),
    "instances": ("model", "variant", "instance_id", "template_id", "category", "s"),
    "bias_scores": ("model", "group", "descriptor", "score", "flagged"),
    "validation": ("model", "measure", "accuracy", "mrr", "n_descriptors"),
    "validation_detail": ("model", "measure", "descriptor", "reciprocal_rank", "correct"),
    "incomplete_units": ("model", "group", "descriptor"),
    "classification": ("model", "target", "accuracy", "n_profiles"),
    "predictions": ("model", "target", "item_id", "correct"),
}
_SKIP_DIRS = {"logs", "__pycache__"}


@dataclass
class Sources:
    """Every table found, concatenated per probe and table name; ``folders`` lists (probe, folder) read."""

    tables: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    folders: list[tuple[str, str]] = field(default_factory=list)
    #: probe -> the ``settings`` of each folder's ``run_info.json`` (e.g. DBB's threshold, GlobalBias' alpha)
    settings: dict[str, list[dict]] = field(default_factory=dict)

    def get(self, probe: str, table: str) -> pd.DataFrame | None:
        return self.tables.get(probe, {}).get(table)

    @property
    def probes(self) -> list[str]:
        return sorted(self.tables)


def parse_input(text: str) -> tuple[str | None, Path]:
    """``"LABEL=PATH"`` -> (LABEL, PATH); a plain path (or an existing path holding "=") -> (None, path)."""
    if "=" in text and not Path(text).exists():
        label, _, path = text.partition("=")
        if not label.strip():
            raise InputError(f"{text}: empty label before '=' (use LABEL=PATH)")
        return label.strip(), Path(path)
    return None, Path(text)


def _has(folder: Path, name: str) -> bool:
    return (folder / f"{name}.parquet").is_file() or (folder / f"{name}.csv").is_file()


def read_table(folder: Path, name: str) -> pd.DataFrame | None:
    """``folder/name.parquet`` (else ``.csv``) as a DataFrame; None when neither exists."""
    pq, csv = folder / f"{name}.parquet", folder / f"{name}.csv"
    try:
        if pq.is_file():
            df = pd.read_parquet(pq)
            path = pq
        elif csv.is_file():
            df = pd.read_csv(csv, keep_default_na=True)
            path = csv
        else:
            return None
    except pd.errors.EmptyDataError:  # a CSV without even a header: an empty table
        df, path = pd.DataFrame(), csv
    except (OSError, ValueError) as exc:  # pyarrow and pandas parse errors are ValueErrors (ArrowInvalid too)
        raise InputError(f"{pq if pq.is_file() else csv}: unreadable table ({str(exc).splitlines()[0]})") from exc
    if df.empty:  # no rows (e.g. no association in a tiny run): the required columns, no rows
        return pd.DataFrame({c: pd.Series(dtype=object) for c in dict.fromkeys([*REQUIRED.get(name, ()), *df.columns])})
    missing = [c for c in REQUIRED.get(name, ()) if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(map(str, df.columns))})")
    return df


def probes_in(folder: Path) -> list[str]:
    """The probes whose output tables ``folder`` holds."""
    return [p for p, names in MARKERS.items() if all(_has(folder, n) for n in names)]


def find_folders(path: Path) -> list[tuple[str, Path]]:
    """(probe, folder) for ``path`` and every folder below it holding a probe's output tables (sorted)."""
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    if not path.is_dir():
        raise InputError(f"{path}: not a folder (give the output folder of a probe command)")
    found: list[tuple[str, Path]] = []
    for root, dirs, _files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith((".", "_")))
        found += [(p, Path(root)) for p in probes_in(Path(root))]
    return found


def _relabel(df: pd.DataFrame, label: str | None, models: list[str]) -> pd.DataFrame:
    if label is None or "model" not in df.columns:
        return df
    mapping = {m: label if len(models) == 1 else f"{label}/{m}" for m in models}
    return df.assign(model=df["model"].astype(str).map(lambda m: mapping.get(m, m)))


def load_sources(inputs: Iterable[str | Path], lm_eval_options: dict | None = None) -> Sources:
    """Read every probe output folder under ``inputs`` (see the module docstring), and lm-eval
    ``--log_samples`` output of the shipped DBB and GlobalBias tasks for a probe without an output folder under
    the same input (:func:`stereoprobe.leaderboard.lm_eval.lm_eval_tables`; ``lm_eval_options``: its keyword
    arguments). Raises :class:`InputError` when an input holds neither or when one model appears in two
    folders of the same probe."""
    from stereoprobe.leaderboard.lm_eval import lm_eval_tables

    src = Sources()
    seen: dict[tuple[str, str], str] = {}  # (probe, model) -> folder
    for item in inputs:
        label, path = parse_input(str(item))
        units: list[tuple[str, str, dict[str, pd.DataFrame | None]]] = [
            (probe, str(folder), {n: read_table(folder, n) for n in TABLES[probe]})
            for probe, folder in find_folders(path)]
        done = {u[0] for u in units}
        for probe, frames in lm_eval_tables(path, skip=done, **(lm_eval_options or {})).items():
            units.append((probe, f"{path} (lm-eval samples)", dict(frames)))
        if not units:
            raise InputError(f"{path}: no probe output found (expected the folder of stereoprobe associations, "
                             "judge-report, dbb, globalbias or profiles, or lm-eval samples of dbb_mc, dbb_sg "
                             "or globalbias)")
        for probe, folder, frames in units:
            models: list[str] = sorted({str(m) for df in frames.values() if df is not None and "model" in df.columns
                                        for m in df["model"].dropna().unique()})
            for m in models:
                new = m if label is None else (label if len(models) == 1 else f"{label}/{m}")
                key = (probe, new)
                if key in seen and seen[key] != folder:
                    raise InputError(f"{folder}: model {new!r} of probe {probe} also in {seen[key]} "
                                     "(name the runs apart with LABEL=PATH inputs)")
                seen[key] = folder
            dest = src.tables.setdefault(probe, {})
            for name, df in frames.items():
                if df is None:
                    continue
                df = _relabel(df, label, models).assign(source=folder)
                dest[name] = df if name not in dest else pd.concat([dest[name], df], ignore_index=True)
            src.folders.append((probe, folder))
            info = Path(folder) / "run_info.json"
            if info.is_file():
                try:
                    settings = json.loads(info.read_text(encoding="utf-8")).get("settings") or {}
                except (OSError, ValueError, AttributeError):
                    settings = {}
                src.settings.setdefault(probe, []).append(settings if isinstance(settings, dict) else {})
    return src
