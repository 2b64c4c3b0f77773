"""How the index page reads the headline figures of the reference folder: its ``comparison`` table's verdicts
(a :class:`stereoprobe.probes.ReportFolder`, found by this module's file name)."""

from __future__ import annotations

from pathlib import Path

from stereoprobe.probes import ReportFolder, register_report_folder
from stereoprobe.report.headlines import folder_table

__all__ = ["comparison_headline"]


def comparison_headline(folder: Path) -> str | None:
    """Printed items reproduced exactly, within the stated tolerance, differing, not run; None when ``folder``
    holds no ``comparison`` table with a ``verdict`` column."""
    from stereoprobe.reference.compare import DIFFERS, EXACT, NOT_RUN

    comparison = folder_table(folder, "comparison")
    if comparison is None or "verdict" not in comparison.columns:
        return None
    v = comparison["verdict"].astype(str)
    within = int(v.str.startswith("within").sum())
    return (f"paper vs stereoprobe: {len(v)} printed items, {int((v == EXACT).sum())} reproduced exactly, "
            f"{within} within the stated tolerance, {int((v == DIFFERS).sum())} differ, "
            f"{int((v == NOT_RUN).sum())} not run")


register_report_folder(ReportFolder("reference", comparison_headline, order=10))
