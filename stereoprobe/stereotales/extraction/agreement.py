"""Agreement between a StereoTales story's extractors: Fleiss' kappa per attribute, overall and per language.

One computation for the two places that show it: the extraction scorer's live metric
``fleiss_kappa_mean`` (``stereoprobe.scorers.stereotales_metrics``) and the ``extractor_agreement`` table of
``stereoprobe associations`` (:func:`extractor_agreement_table`). A story counts when it was not refused and every
extractor of its ensemble (two or more) answered validly; its labels per attribute are the extractors' own
answers (an attribute an extractor left out is ``unknown``), before the consensus. Fleiss' kappa needs a fixed
number of raters: stories with another ensemble size than the first one seen are left out. The statistic is
:func:`stereoprobe.stats.agreement.fleiss_kappa` (Fleiss 1971), NaN where undefined (no story, or every label in
one category).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.stats.agreement import fleiss_kappa
from stereoprobe.stereotales import contract as C
from stereoprobe.stereotales.contract import ALL_SLICE, UNKNOWN

__all__ = ["COLUMNS", "Kappa", "RatingCodes", "extractor_agreement_table", "valid_ratings"]

#: the columns of the ``extractor_agreement`` table
COLUMNS = ("model", "language", "attribute", "stories", "extractors", "fleiss_kappa")


@dataclass(frozen=True)
class Kappa:
    """Fleiss' kappa over ``stories`` stories each rated by ``extractors`` extractors."""

    kappa: float
    stories: int
    extractors: int


def valid_ratings(meta: Mapping[str, Any]) -> list[Mapping[str, str]] | None:
    """The extractors' value dicts of a story's extraction metadata when the story was not refused and every
    extractor (two or more) answered validly, else None."""
    if meta.get(C.MD_REFUSED):
        return None
    extractions = meta.get(C.MD_EXTRACTIONS) or []
    if len(extractions) < 2 or any(e.get("status") != "ok" for e in extractions):
        return None
    return [e.get("values") or {} for e in extractions]


def _kappa(codes: np.ndarray) -> float:
    """Fleiss' kappa of a stories x raters array of integer category codes (vectorised count table)."""
    if codes.shape[0] == 0:
        return math.nan
    k = int(codes.max()) + 1
    flat = (np.arange(codes.shape[0])[:, None] * k + codes).ravel()
    counts = np.bincount(flat, minlength=codes.shape[0] * k).reshape(codes.shape[0], k)
    return fleiss_kappa(counts)


class RatingCodes:
    """The labels of the counted stories as integer codes per attribute, added one story at a time (memory:
    one integer per story, extractor and attribute)."""

    def __init__(self, attributes: Sequence[str]) -> None:
        self.attributes = list(attributes)
        self._index: list[dict[str, int]] = [{} for _ in self.attributes]
        self._flat = array("q")
        self._langs: list[str] = []
        self._all_langs: set[str] = set()
        self.extractors: int | None = None

    def add(self, language: str, meta: Mapping[str, Any]) -> None:
        """Count the story of ``language`` whose extraction metadata is ``meta`` (when it qualifies)."""
        self._all_langs.add(language)
        ratings = valid_ratings(meta)
        if ratings is None:
            return
        self.extractors = len(ratings) if self.extractors is None else self.extractors
        if len(ratings) != self.extractors:
            return
        for values in ratings:
            for index, attr in zip(self._index, self.attributes):
                self._flat.append(index.setdefault(str(values.get(attr, UNKNOWN)), len(index)))
        self._langs.append(language)

    def kappas(self) -> dict[tuple[str, str], Kappa]:
        """``(attribute, language)`` -> :class:`Kappa`, the language ``all`` pooling every language; every
        language of an added story gets an entry (NaN over no story). Empty when no story was rated by two or
        more extractors."""
        n, raters = len(self._langs), self.extractors or 0
        if n == 0 or raters < 2:
            return {}
        codes = np.frombuffer(self._flat, dtype=np.int64).reshape(n, raters, len(self.attributes))
        lang_of = np.array(self._langs, dtype=object)
        out: dict[tuple[str, str], Kappa] = {}
        for j, attr in enumerate(self.attributes):
            column = codes[:, :, j]
            out[(attr, ALL_SLICE)] = Kappa(_kappa(column), n, raters)
            for lang in sorted(self._all_langs):
                sub = column[lang_of == lang]
                out[(attr, lang)] = Kappa(_kappa(sub), int(sub.shape[0]), raters)
        return out


def _extraction_meta(scores: Mapping[str, Any]) -> Mapping[str, Any]:
    """The extraction scorer's metadata of a sample dict's ``scores`` (a renamed scorer: the one with a profile)."""
    for name, score in scores.items():
        meta = (score or {}).get("metadata") or {}
        if name == C.SCORER_NAME or (isinstance(meta, Mapping) and "profile" in meta):
            return meta
    return {}


def extractor_agreement_table(logs: Iterable[str | Path], attributes: Sequence[str]) -> pd.DataFrame:
    """One row per model x language (``all`` first, then each language) x attribute of the StereoTales eval
    ``logs``: the stories rated by every extractor, the ensemble size and Fleiss' kappa (:data:`COLUMNS`). The
    samples are read as the stories reader reads them (one record per run, sample and epoch); a model with no
    story rated by two or more extractors (one extractor) has no row."""
    from stereoprobe.inputs import iter_samples

    per_model: dict[str, RatingCodes] = {}
    logs = list(logs)
    for info, sample in iter_samples(logs, C.TASK_STORIES, string_ids=True) if logs else ():
        lang = C.normalize_language((sample.get("metadata") or {}).get(C.META_LANGUAGE, ""))
        codes = per_model.setdefault(str(info.model), RatingCodes(attributes))
        codes.add(lang, _extraction_meta(sample.get("scores") or {}))
    rows = []
    for model in sorted(per_model):
        kappas = per_model[model].kappas()
        langs = sorted({lang for _, lang in kappas} - {ALL_SLICE})
        for lang in (ALL_SLICE, *langs):
            for attr in attributes:
                k = kappas.get((attr, lang))
                if k is not None:
                    rows.append((model, lang, attr, k.stories, k.extractors, k.kappa))
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype({"stories": "int64", "extractors": "int64",
                                                              "fleiss_kappa": "float64"})
