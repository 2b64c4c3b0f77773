"""The figures the GlobalBias paper prints, read from ``datasets/globalbias/paper_figures.yaml``.

One typed copy of the paper's numbers serves both the reproduction tests (``tests/globalbias/test_reproduce_*.py``)
and the reference report (:mod:`stereoprobe.reference.compare`): each :class:`PaperFigure` carries its table or
figure id, the upstream output it is reproduced from, the tolerance the comparison allows (0: exactly; the reason
for any other) and the printed values, as typed from Siddique et al. (EMNLP 2024).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from stereoprobe.errors import InputError
from stereoprobe.paths import datasets_dir

__all__ = ["PaperFigure", "PaperFigures", "paper_figures", "PAPER_FIGURES_FILE"]

PAPER_FIGURES_FILE = "globalbias/paper_figures.yaml"


@dataclass(frozen=True)
class PaperFigure:
    """One printed table or figure: ``values`` as printed; ``extra`` keeps the figure's other keys (``columns``,
    ``target``, ``model``, ``partial``, ``differences``)."""

    id: str
    title: str
    output: str
    tolerance: float
    values: Any
    tolerance_reason: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``Table 9``, ``Figure 1``, ``Section 5.1`` (from the id)."""
        kind, _, number = self.id.partition("_")
        return f"{kind.capitalize()} {number.replace('_', '.')}"


@dataclass(frozen=True)
class PaperFigures:
    """The paper, the models it names per upstream output and its figures in the file's order."""

    paper: str
    apx_models: dict[str, str]
    profile_models: dict[str, str]
    figures: tuple[PaperFigure, ...]

    def __getitem__(self, figure_id: str) -> PaperFigure:
        for f in self.figures:
            if f.id == figure_id:
                return f
        raise KeyError(figure_id)

    @property
    def profile_keys(self) -> list[str]:
        """The short keys of the profile models in the paper's column order (``llama3``, ``gpt3``, ...): the file
        stem between ``10a_`` and ``_full``."""
        return [Path(p).stem.removeprefix("10a_").removesuffix("_full") for p in self.profile_models]


_KEYS = {"id", "title", "output", "tolerance", "values", "tolerance_reason"}


def _figure(raw: dict[str, Any], where: str) -> PaperFigure:
    missing = [k for k in ("id", "title", "output", "tolerance", "values") if k not in raw]
    if missing:
        raise InputError(f"{where}: figure {raw.get('id', '?')!r} lacks {', '.join(missing)}")
    tol = raw["tolerance"]
    if not isinstance(tol, (int, float)) or tol < 0:
        raise InputError(f"{where}: figure {raw['id']!r}: tolerance must be a number >= 0, got {tol!r}")
    if tol > 0 and not raw.get("tolerance_reason"):
        raise InputError(f"{where}: figure {raw['id']!r}: a tolerance above 0 needs a tolerance_reason")
    return PaperFigure(id=str(raw["id"]), title=str(raw["title"]), output=str(raw["output"]), tolerance=float(tol),
                       values=raw["values"], tolerance_reason=str(raw.get("tolerance_reason", "")),
                       extra={k: v for k, v in raw.items() if k not in _KEYS})


def read_paper_figures(path: str | Path) -> PaperFigures:
    """Read a paper-figures file (the layout of ``datasets/globalbias/paper_figures.yaml``)."""
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or not isinstance(raw.get("figures"), list):
        raise InputError(f"{path}: expected a mapping with a 'figures' list")
    models = raw.get("models") or {}
    figures = tuple(_figure(f, str(path)) for f in raw["figures"])
    ids = [f.id for f in figures]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: repeated figure ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return PaperFigures(paper=str(raw.get("paper", "")), apx_models=dict(models.get("apx") or {}),
                        profile_models=dict(models.get("profiles") or {}), figures=figures)


@cache
def paper_figures() -> PaperFigures:
    """The GlobalBias paper's printed figures bundled with stereoprobe."""
    return read_paper_figures(datasets_dir() / PAPER_FIGURES_FILE)
