"""The headline figures of a report folder, in one short text for the index page (issue 29.9).

Read from the tables the folder holds, never recomputed from logs, by the kind of report folder it is: each
kind (:class:`stereoprobe.probes.ReportFolder`) is registered by the package that writes such folders, so this
module names no package above it:

- a probe's output folder: its headline figures (:attr:`stereoprobe.probes.Board.headline`) per model, as
  the leaderboard computes them from the tables of that folder alone (no subfolder, no table linking outside
  the indexed folder), without bootstrap draws: an interval the leaderboard would bootstrap is left out
  (:mod:`stereoprobe.leaderboard.report_folder`);
- the reference folder (``comparison`` with a ``verdict`` column): printed items reproduced exactly, within
  the stated tolerance, differing, not run (:mod:`stereoprobe.reference.report_folder`);
- the leaderboard folder (``leaderboard`` and ``pairwise``): models compared and paired differences with
  q < 0.05 (:mod:`stereoprobe.leaderboard.report_folder`).

A folder whose tables cannot be read gives the reason in a few words instead (the index is still written).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.probes import report_folders

__all__ = ["MAX_MODELS", "figure_kind", "figure_text", "folder_table", "headline_text", "number_text"]

MAX_MODELS = 6  # models listed per report; the rest are counted


def number_text(v: object) -> str:
    """A figure in three significant digits; "–" for a missing or non-finite one."""
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "–"
    return f"{f:.3g}" if math.isfinite(f) else "–"


#: headline figures that are counts (``count_s_ge_20`` and its per-category forms, GlobalBias' flagged and
#: significant pairs, StereoTales' associations and harmful ones, incomplete units)
_COUNT = re.compile(r"^(count_.*|flagged|significant|associations|harmful|incomplete_units)$")
#: headline figures that are shares or rates in [0, 1] (refusal rates, accuracies, MRR, p-values, harmful share)
_SHARE = re.compile(r"(rate|share|accuracy|mrr|kappa)(_|$)|(^|_)p(_|$)")


def figure_kind(metric: str) -> str:
    """The formatting kind of a headline figure: ``count``, ``share`` or ``value`` (anything else).

    >>> [figure_kind(m) for m in ("count_s_ge_20_age", "refusal_rate", "svm_p_gender", "mean_s_biased")]
    ['count', 'share', 'share', 'value']
    """
    return "count" if _COUNT.match(metric) else "share" if _SHARE.search(metric) else "value"


def figure_text(v: object, metric: str, bound: bool = False) -> str:
    """A headline figure with one rule per kind (:func:`figure_kind`), so a column never mixes precisions: a
    count as a whole number (its interval bounds to one decimal), a share to three decimals, another value to
    three significant digits; "–" for a missing or non-finite one.

    >>> figure_text(4.0, "flagged"), figure_text(1.0899, "flagged", bound=True), figure_text(0.25, "harmful_share")
    ('4', '1.1', '0.250')
    >>> figure_text(29.25, "mean_s_biased"), figure_text(float("nan"), "refusal_rate")
    ('29.2', '–')
    """
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "–"
    if not math.isfinite(f):
        return "–"
    kind = figure_kind(metric)
    if kind == "count":
        return f"{f:.1f}" if bound or f != int(f) else f"{f:.0f}"
    return f"{f:.3f}" if kind == "share" else f"{f:.3g}"


def folder_table(folder: Path, name: str) -> pd.DataFrame | None:
    """The table ``name`` of ``folder`` (Parquet, else CSV), or None when the folder holds neither."""
    from stereoprobe.inputs import read_table

    for suffix in (".parquet", ".csv"):
        if (folder / f"{name}{suffix}").is_file():
            return read_table(folder / f"{name}{suffix}", what=f"{name} table")
    return None


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
        for kind in report_folders():
            text = kind.read_headline(folder)
            if text is not None:
                return text
        raise InputError("no probe tables")
    except (InputError, OSError, ValueError, KeyError, RuntimeError) as exc:
        reason = str(exc) if str(exc) == "no probe tables" else f"its tables cannot be read: {type(exc).__name__}"
        return f"no headline figures ({reason})"
