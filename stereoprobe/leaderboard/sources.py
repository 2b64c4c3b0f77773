"""Find and read the output folders of the probes' post-processing commands for the leaderboard.

An input is an output folder of a registered probe (:func:`stereoprobe.probes.registered`: ``stereoprobe
associations`` (+ ``judge-report``), ``dbb``, ``globalbias``, ``profiles``, ...), or any folder above such
folders (searched recursively; ``logs`` folders and hidden folders are skipped). A folder's probe is recognised
by the tables it holds (Parquet preferred, else CSV): every table of the descriptor's ``marker_tables``
(:data:`MARKERS`); the leaderboard reads the tables of the descriptor's ``tables`` (:data:`TABLES`) and checks
that each has the columns the descriptor names (:data:`REQUIRED`) and that their values lie in the descriptor's
``domains`` (:data:`DOMAINS`), both per probe and table, so two probes may each write a table of the same name.
Table and column names come from the probes' contract modules, through their descriptors
(``stereoprobe/<probe>/probe.py``).

An input written ``LABEL=PATH`` renames the model of that folder to ``LABEL`` (``LABEL/<model>`` when the
folder holds several models), so that two runs of one model (another temperature, another scoring option)
become two leaderboard rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.probes import RegistryView, registered

#: probe -> the tables whose presence marks its output folder (all of them)
MARKERS: Mapping[str, tuple[str, ...]] = RegistryView(lambda: {d.name: d.marker_tables for d in registered() if d.tables})
#: probe -> every table the leaderboard reads from its folders
TABLES: Mapping[str, tuple[str, ...]] = RegistryView(lambda: {d.name: tuple(d.tables) for d in registered() if d.tables})


#: (probe, table) -> the columns it must have for the leaderboard (others are ignored)
REQUIRED: Mapping[tuple[str, str], tuple[str, ...]] = RegistryView(  # type: ignore[assignment]
    lambda: {(d.name, name): cols for d in registered() for name, cols in d.tables.items()})
#: (probe, table) -> column -> the closed range of its values (the descriptor's ``domains``: e.g. DBB's S and mean
#: S in percent, GlobalBias' scores and accuracies as shares); a value outside is an error naming the file, the
#: column and the rows, never a figure of the leaderboard
DOMAINS: Mapping[tuple[str, str], Mapping[str, tuple[float, float]]] = RegistryView(  # type: ignore[assignment]
    lambda: {(d.name, name): cols for d in registered() for name, cols in d.domains.items()})
_SKIP_DIRS = {"logs", "__pycache__"}


@dataclass
class Sources:
    """Every table found, concatenated per probe and table name; ``folders`` lists (probe, folder) read."""

    tables: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    folders: list[tuple[str, str]] = field(default_factory=list)
    #: probe -> the ``settings`` of each folder's ``run_info.json`` (e.g. DBB's threshold, GlobalBias' alpha)
    settings: dict[str, list[dict]] = field(default_factory=dict)
    #: one row per folder x run of its ``run_info.json`` ``runs``: probe, folder, model (as the leaderboard names
    #: it), logged model, task and the run settings (:mod:`stereoprobe.report.run_settings`)
    runs: list[dict] = field(default_factory=list)

    def get(self, probe: str, table: str) -> pd.DataFrame | None:
        return self.tables.get(probe, {}).get(table)

    @property
    def probes(self) -> list[str]:
        return sorted(self.tables)


def parse_input(text: str) -> tuple[str | None, Path]:
    """``"LABEL=PATH"`` -> (LABEL, PATH); a plain path (or an existing path holding "=") -> (None, path)."""
    if "=" in text and not os.path.exists(text):  # False (not an error) for a name too long to exist
        label, _, path = text.partition("=")
        if not label.strip():
            raise InputError(f"{text}: empty label before '=' (use LABEL=PATH)")
        return label.strip(), Path(path)
    return None, Path(text)


def _has(folder: Path, name: str) -> bool:
    return (folder / f"{name}.parquet").is_file() or (folder / f"{name}.csv").is_file()


def read_table(folder: Path, probe: str, name: str) -> pd.DataFrame | None:
    """``folder/name.parquet`` (else ``.csv``) of ``probe`` with the columns the leaderboard needs
    (:data:`REQUIRED`), their values checked against the probe's :data:`DOMAINS`; None when neither file exists
    (the one reader of output tables, :func:`stereoprobe.tables.read_table`)."""
    from stereoprobe.inputs import require_between
    from stereoprobe.tables import read_table as read_output_table

    df = read_output_table(folder, name, REQUIRED.get((probe, name), ()))
    if df is not None and len(df):
        source = folder / f"{name}.parquet" if (folder / f"{name}.parquet").is_file() else folder / f"{name}.csv"
        for column, (low, high) in DOMAINS.get((probe, name), {}).items():
            if column in df.columns:
                require_between(df, [column], source, low, high, allow_missing=True)
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

    def unreadable(exc: OSError) -> None:  # a subfolder that cannot be listed is reported, never skipped
        raise InputError(f"{exc.filename}: folder cannot be read ({exc.strerror})")

    from stereoprobe.output_paths import version_link_target

    for root, dirs, _files in os.walk(path, onerror=unreadable, followlinks=True):
        # an output folder kept as a link to its version (stereoprobe.outputs) is followed; other links are not
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith((".", "_"))
                         and (not os.path.islink(os.path.join(root, d))
                              or version_link_target(os.path.join(root, d)) is not None))
        found += [(p, Path(root)) for p in probes_in(Path(root))]
    return found


def _once(given: dict, folder: Path, probe: str | None, item: str) -> None:
    """:class:`InputError` when a folder (resolved: links, ``..``, bare and as ``LABEL=PATH``) is read a second
    time, which would count its rows twice."""
    key = (folder.resolve(), probe)
    if key in given:
        what = f"{probe} output folder {folder}" if probe else f"folder {folder}"
        raise InputError(f"{item}: the {what} is already read through the input {given[key]!r}; give each "
                         "folder once (its rows would count twice)")
    given[key] = item


def _relabel(df: pd.DataFrame, label: str | None, models: list[str]) -> pd.DataFrame:
    if label is None or "model" not in df.columns:
        return df
    mapping = {m: label if len(models) == 1 else f"{label}/{m}" for m in models}
    return df.assign(model=df["model"].astype(str).map(lambda m: mapping.get(m, m)))


def _run_rows(probe: str, folder: str, label: str | None, models: list[str]) -> list[dict]:
    """The runs table rows of one input folder: the ``runs`` of its ``run_info.json`` whose model it holds."""
    from stereoprobe.report.run_info import read_run_info
    from stereoprobe.report.run_settings import RUN_SETTINGS, settings_text

    rows = []
    for run in read_run_info(folder)["runs"] if Path(folder).is_dir() else []:
        logged = str(run.get("model", ""))
        if models and logged not in models:
            continue
        name = logged if label is None else (label if len(models) <= 1 else f"{label}/{logged}")
        rows.append({"probe": probe, "folder": folder, "model": name, "logged_model": logged,
                     "task": str(run.get("task", "")), "task_version": str(run.get("task_version") or ""),
                     "settings": settings_text(run),
                     **{k: json.dumps(run.get(k) or {}, sort_keys=True) for k in RUN_SETTINGS}})
    return rows


def _or_list(names: list[str]) -> str:
    """``a, b or c``."""
    return " or ".join(filter(None, (", ".join(names[:-1]), names[-1]))) if names else "a shipped lm-eval task"


def load_sources(inputs: Iterable[str | Path], lm_eval_options: dict | None = None) -> Sources:
    """Read every probe output folder under ``inputs`` (see the module docstring), and lm-eval
    ``--log_samples`` output of the probes' shipped lm-eval tasks for a probe without an output folder under
    the same input (:func:`stereoprobe.leaderboard.lm_eval.lm_eval_tables`; ``lm_eval_options``: the keyword
    arguments of the probes' readers; those a reader does not take are ignored). Raises :class:`InputError` when an input holds neither or when one model appears in two
    folders of the same probe."""
    from stereoprobe.leaderboard.lm_eval import lm_eval_task_names, lm_eval_tables

    lm_options = {k: v for k, v in (lm_eval_options or {}).items() if k != "skip"}
    src = Sources()
    seen: dict[tuple[str, str], str] = {}  # (probe, model) -> folder
    given: dict[tuple[Path, str | None], str] = {}  # (resolved folder, probe) read -> the input naming it
    for item in inputs:
        label, path = parse_input(str(item))
        _once(given, path, None, str(item))
        units: list[tuple[str, str, dict[str, pd.DataFrame | None]]] = [
            (probe, str(folder), {n: read_table(folder, probe, n) for n in TABLES[probe]})
            for probe, folder in find_folders(path)]
        for probe, folder, _ in units:
            _once(given, Path(folder), probe, str(item))
        done = {u[0] for u in units}
        for probe, frames in lm_eval_tables(path, skip=done, **lm_options).items():
            units.append((probe, f"{path} (lm-eval samples)", dict(frames)))
        if not units:
            commands = ", ".join(c.rsplit(".", 1)[-1].replace("_", "-") for d in registered() if d.tables
                                 for c in d.commands[:1])
            raise InputError(f"{path}: no probe output found (expected the output folder of stereoprobe "
                             f"{commands}, or lm-eval samples of {_or_list(lm_eval_task_names())})")
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
            src.runs += _run_rows(probe, folder, label, models)
    return src
