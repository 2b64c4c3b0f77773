"""The headline figures of a report folder, in one short text for the index page (issue 29.9).

Read from the tables the folder holds, never recomputed from logs:

- a probe's output folder: its headline figures (:attr:`stereoprobe.probes.Board.headline`) per model, as
  the leaderboard computes them from the tables of that folder alone (no subfolder, no table linking outside
  the indexed folder), without bootstrap draws: an interval the leaderboard would bootstrap is left out;
- the reference folder (``comparison`` with a ``verdict`` column): printed items reproduced exactly, within
  the stated tolerance, differing, not run;
- the leaderboard folder (``leaderboard`` and ``pairwise``): models compared and paired differences with
  q < 0.05.

A folder whose tables cannot be read gives the reason in a few words instead (the index is still written).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError

__all__ = ["MAX_MODELS", "headline_text"]

MAX_MODELS = 6  # models listed per report; the rest are counted


def _num(v: object) -> str:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "–"
    return f"{f:.3g}" if math.isfinite(f) else "–"


def _table(folder: Path, name: str) -> pd.DataFrame | None:
    from stereoprobe.inputs import read_table

    for suffix in (".parquet", ".csv"):
        if (folder / f"{name}{suffix}").is_file():
            return read_table(folder / f"{name}{suffix}", what=f"{name} table")
    return None


def _reference(comparison: pd.DataFrame) -> str:
    from stereoprobe.reference.compare import DIFFERS, EXACT, NOT_RUN

    v = comparison["verdict"].astype(str)
    within = int(v.str.startswith("within").sum())
    return (f"paper vs stereoprobe: {len(v)} printed items, {int((v == EXACT).sum())} reproduced exactly, "
            f"{within} within the stated tolerance, {int((v == DIFFERS).sum())} differ, "
            f"{int((v == NOT_RUN).sum())} not run")


def _leaderboard(wide: pd.DataFrame, pairwise: pd.DataFrame) -> str:
    from stereoprobe.leaderboard.pairwise import ALPHA

    tested = pairwise[pairwise["p_value"].notna()] if "p_value" in pairwise.columns else pairwise.iloc[0:0]
    sig = int((tested["q_value"] < ALPHA).sum()) if "q_value" in tested.columns else 0
    return (f"{wide['model'].nunique()} models compared; {sig} of {len(tested)} paired differences with "
            f"q < {ALPHA:g}")


def _probe_metrics(folder: Path) -> pd.DataFrame:
    """The headline figures of the probe tables in ``folder`` itself (no subfolder, no link out of it), with
    the settings of its ``run_info.json`` (DBB's threshold, GlobalBias' alpha), without bootstrap draws."""
    from stereoprobe.leaderboard.headline import headline_table
    from stereoprobe.leaderboard.sources import TABLES, Sources, probes_in, read_table
    from stereoprobe.probes import LeaderboardOptions, registered
    from stereoprobe.report.run_info import read_run_info

    probes = probes_in(folder)
    if not probes:
        raise InputError("no probe tables")
    src = Sources()
    for probe in probes:
        src.tables[probe] = {n: df for n in TABLES[probe] if (df := read_table(folder, probe, n)) is not None}
        src.folders.append((probe, str(folder)))
    recorded = read_run_info(folder)["settings"]
    settings = {k: float(recorded[k]) if isinstance(recorded.get(k), (int, float)) else v
                for d in registered() for k, v in d.setting_defaults.items()}
    return headline_table(src, LeaderboardOptions(n_boot=0, settings=settings))


def _probe(folder: Path) -> str:
    from stereoprobe.probes import registered

    metrics = _probe_metrics(folder)
    titles = {(b.name, m.name): f"{b.title.split(':')[0].strip()} {m.title}"
              for d in registered() for b in d.boards for m in b.headline}
    shown = metrics[[(p, m) in titles for p, m in zip(metrics["probe"], metrics["metric"])]]
    parts = []
    models = sorted(shown["model"].astype(str).unique())
    for model in models[:MAX_MODELS]:
        cells = []
        for r in shown[shown["model"].astype(str) == model].itertuples(index=False):
            if _num(r.estimate) == "–":
                continue
            ci = f" [{_num(r.ci_low)}, {_num(r.ci_high)}]" if _num(r.ci_low) != "–" and _num(r.ci_high) != "–" else ""
            cells.append(f"{titles[(r.probe, r.metric)]} {_num(r.estimate)}{ci}")
        if cells:
            parts.append(f"{model}: " + "; ".join(cells))
    if len(models) > MAX_MODELS:
        parts.append(f"… and {len(models) - MAX_MODELS} more models")
    return " | ".join(parts) if parts else "no headline figure defined for these runs"


def _links_out(folder: Path, root: Path | None) -> bool:
    """Whether a table file of ``folder`` is a link to a file outside ``root`` (never read: the index lists
    only what lies inside its folder)."""
    if root is None:
        return False
    real_root = root.resolve()
    for p in folder.iterdir():
        if p.suffix in (".csv", ".parquet") and not p.resolve().is_relative_to(real_root):
            return True
    return False


def headline_text(folder: str | Path, root: str | Path | None = None) -> str:
    """The headline figures of the report folder ``folder`` in one line (module docstring); with ``root``,
    a folder whose tables link outside ``root`` is not read."""
    folder = Path(folder)
    try:
        if _links_out(folder, None if root is None else Path(root)):
            return "no headline figures (a table links outside this folder)"
        comparison = _table(folder, "comparison")
        if comparison is not None and "verdict" in comparison.columns:
            return _reference(comparison)
        wide, pairwise = _table(folder, "leaderboard"), _table(folder, "pairwise")
        if wide is not None and pairwise is not None and "model" in wide.columns:
            return _leaderboard(wide, pairwise)
        return _probe(folder)
    except (InputError, OSError, ValueError, KeyError, RuntimeError) as exc:
        reason = str(exc) if str(exc) == "no probe tables" else f"its tables cannot be read: {type(exc).__name__}"
        return f"no headline figures ({reason})"
