"""The leaderboard: every probe's headline figures per model with intervals, and paired model-vs-model tests.

Python API (what ``stereoprobe leaderboard`` calls)::

    from stereoprobe.leaderboard import build_leaderboard, write_leaderboard
    lb = build_leaderboard(["results/run_a/dbb", "variant=results/run_b/dbb"])
    lb.wide          # one row per model: <probe>.<metric>, _ci_low, _ci_high
    lb.pairwise      # probe, metric, model_a, model_b, estimate, ci_low, ci_high, p_value, q_value, n, test
    write_leaderboard(lb, "results/leaderboard")

Modules: :mod:`~stereoprobe.leaderboard.sources` (find and read probe output folders),
:mod:`~stereoprobe.leaderboard.headline` (figures and intervals per model),
:mod:`~stereoprobe.leaderboard.pairwise` (paired comparisons; the statistics are in :mod:`stereoprobe.stats`),
:mod:`~stereoprobe.leaderboard.summary` (summary JSON and Hub export),
:mod:`~stereoprobe.leaderboard.report` (HTML).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.leaderboard.headline import headline_table, wide_table
from stereoprobe.leaderboard.pairwise import pairwise_table
from stereoprobe.leaderboard.sources import load_sources
from stereoprobe.probes import LeaderboardOptions, registered

__all__ = ["RUNS_COLUMNS", "Leaderboard", "build_leaderboard", "write_leaderboard"]

#: the columns of the leaderboard's ``runs`` table (:attr:`stereoprobe.leaderboard.sources.Sources.runs`)
RUNS_COLUMNS = ["probe", "folder", "model", "logged_model", "task", "task_version", "settings", "model_args",
                "model_roles", "generate_config"]


@dataclass
class Leaderboard:
    """Result of :func:`build_leaderboard`."""

    metrics: pd.DataFrame  #: long form: model, probe, metric, estimate, ci_low, ci_high, n, better, method
    wide: pd.DataFrame  #: one row per model
    pairwise: pd.DataFrame  #: paired comparisons with q-values
    sources: list[tuple[str, str]]  #: (probe, folder) read
    level: float = 0.95
    #: one row per input folder x run: the model settings its logs recorded (``-M`` arguments, model roles,
    #: generation settings; :data:`RUNS_COLUMNS`), so two runs of one model are told apart by their settings
    runs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=RUNS_COLUMNS))
    #: the user's note accepting runs of different task versions side by side (:mod:`.versions`), as the page
    #: shows it; None when every task's runs share one comparability version
    version_note: str | None = None


def _setting(src, probe: str, key: str, given: float | None, default: float) -> float:
    """``given``, else the one value of ``key`` in the probe folders' run_info settings, else ``default``."""
    if given is not None:
        return given
    values = {float(s[key]) for s in src.settings.get(probe, []) if isinstance(s.get(key), (int, float))}
    if len(values) > 1:
        raise InputError(f"the {probe} folders were made with different {key} values ({', '.join(map(str, sorted(values)))}); "
                         f"choose one with --{key}")
    return values.pop() if values else default


def build_leaderboard(inputs: Iterable[str | Path], n_boot: int = 2000, seed: int = 0, level: float = 0.95,
                      settings: Mapping[str, float] | None = None,
                      accept_versions: str | None = None) -> Leaderboard:
    """Read the probe output folders under ``inputs`` (``LABEL=PATH`` renames a folder's model) and compute
    the headline figures and the paired comparisons of every registered probe. ``settings``: the probes'
    settings by name (:attr:`stereoprobe.probes.ProbeDescriptor.settings`, e.g. ``{"threshold": 25}`` for DBB's
    S threshold, ``{"alpha": 0.1}`` for the FDR level of GlobalBias' stricter test); one not given: the value the
    probe's folders were made with (their ``run_info.json``), else the probe's default. ``n_boot`` / ``seed``:
    bootstrap draws. Runs of one task at different comparability versions (N of ``N-X``) are refused in one
    line unless ``accept_versions`` gives the note the page shows (:mod:`stereoprobe.leaderboard.versions`)."""
    from stereoprobe.leaderboard.versions import version_note

    inputs = list(inputs)
    given: dict[str, float | None] = dict(settings or {})
    defaults = {k: v for d in registered() for k, v in d.setting_defaults.items()}
    src = load_sources(inputs, {"n_boot": n_boot, "seed": seed,
                                **{k: given.get(k) if given.get(k) is not None else v for k, v in defaults.items()}})
    note = version_note(src.runs, accept_versions)
    resolved = {k: _setting(src, d.name, k, given.get(k), v) for d in registered()
                for k, v in d.setting_defaults.items()}
    options = LeaderboardOptions(n_boot=n_boot, seed=seed, level=level, settings=resolved)
    metrics = headline_table(src, options)
    if metrics.empty:
        raise InputError("no headline figure could be computed from " + ", ".join(map(str, inputs)))
    return Leaderboard(metrics, wide_table(metrics), pairwise_table(src, options), list(src.folders), level,
                       pd.DataFrame(src.runs, columns=RUNS_COLUMNS), note)


def write_leaderboard(lb: Leaderboard, out: str | Path, hub_dir: str | Path | None = None,
                      hub_source_url: str | None = None, hub_model_ids: Mapping[str, str] | None = None) -> list[Path]:
    """Write ``comparison.csv/.parquet`` (the page's comparison table), ``leaderboard``, ``metrics``, ``pairwise``,
    ``runs`` (each input folder's run settings), ``summary/<model>.json`` and ``leaderboard.html`` into ``out`` (and the Hub ``.eval_results`` files into ``hub_dir``,
    under each label's Hub model id from ``hub_model_ids`` when given); return the paths."""
    from stereoprobe.leaderboard.report import write_leaderboard_report
    from stereoprobe.leaderboard.summary import write_hub_eval_results, write_summaries
    from stereoprobe.report.run_info import write_run_info
    from stereoprobe.report.run_settings import RUN_SETTINGS
    from stereoprobe.tables import write_table

    out = Path(out)
    files = []
    from stereoprobe.leaderboard.compare import comparison_table

    from stereoprobe.report.demo import demo_reason_of_runs

    demo = demo_reason_of_runs(lb.runs.to_dict("records")) is not None  # demo settings: no best/worst marks
    tables = (("comparison", comparison_table(lb.metrics, demo=demo)), ("leaderboard", lb.wide), ("metrics", lb.metrics),
              ("pairwise", lb.pairwise), ("runs", lb.runs))
    for name, df in tables:
        csv = write_table(df, out, name)
        files += [csv, csv.with_suffix(".parquet")]
    files += write_summaries(out, lb.metrics, lb.pairwise, lb.sources, lb.level)
    if hub_dir is not None:
        files += write_hub_eval_results(Path(hub_dir), lb.metrics, hub_source_url,
                                        model_ids=dict(hub_model_ids or {}))
    write_run_info(out, probe="leaderboard", models=sorted(lb.wide["model"]),
                   settings={"confidence_level": lb.level,
                             **({"accept_versions": lb.version_note} if lb.version_note else {})},
                   inputs=[f for _, f in lb.sources],
                   runs=[{**r, **{k: json.loads(r[k]) for k in RUN_SETTINGS}} for r in lb.runs.to_dict("records")])
    report = write_leaderboard_report(out / "leaderboard.html", lb.wide, lb.metrics, lb.pairwise, lb.sources,
                                      lb.level, [f for f in files if f.parent == out], runs=lb.runs,
                                      version_note=lb.version_note)
    return files + [report]
