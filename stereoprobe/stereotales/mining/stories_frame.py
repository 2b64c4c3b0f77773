"""The stories frame's building blocks shared by its readers (:mod:`.stories_logs`, :mod:`.stories_release`)
and their dispatcher (:mod:`.stories`): the :class:`Stories` bundle, its errors, value normalisation and the
categorical storage. Imports no reader, so the readers and the dispatcher import it without a cycle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.stereotales.contract import ISSUE_COLUMNS, UNKNOWN
from stereoprobe.stereotales.taxonomy.seeds import upstream_config

RELEASE_SUFFIXES = (".parquet", ".csv")

# Prompted seed values whose extraction-schema spelling differs (``METADATA_VALUE_NORMALIZATION`` upstream,
# also in ``datasets/stereotales/upstream.yaml``); all other keys are identical.
VALUE_NORMALIZATION: Mapping[str, str] = dict(upstream_config()["value_normalization"])

CATEGORY_COLUMNS: tuple[str, ...] = (
    "model", "language", "target_attribute", "attribute_value_key", "scenario_key", "scenario_group", "refusal_label",
)


def compact_frame(frame: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """Store the repetitive columns (ids of models, languages, prompts; the profile values) as categoricals:
    650k stories take tens of MB instead of about a GB. Comparisons with strings work as usual."""
    for c in list(CATEGORY_COLUMNS) + list(attributes):
        if c in frame.columns:
            frame[c] = frame[c].astype("category")
    return frame


class StoriesError(InputError):
    """Bad StereoTales input: the message names the file, field or sample."""


class MixedInputsError(StoriesError):
    """Inputs that must not be analysed together (task versions, taxonomies, logs with release files)."""


@dataclass
class Stories:
    """The stories frame plus the accounting of the inputs it was built from.

    - ``frame``: one row per usable story (contract C).
    - ``attributes``: the taxonomy attribute columns of ``frame``, in taxonomy order.
    - ``issues``: one row per sample that is *not* in ``frame`` (``kind`` = ``error`` (errored sample),
      ``no_profile`` (no extraction score), ``no_scenario`` (the extra English set, not used by the
      statistics), ``duplicate`` (a second copy in the release)) with the reason in ``detail``.
    - ``sources``: one row per input file (path, kind, model, status, task version, fingerprint, rows read).
    - ``read_summary``: one line on what was read (logs: files, samples, superseded copies, error samples).
    """

    frame: pd.DataFrame
    attributes: list[str]
    issues: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(ISSUE_COLUMNS)))
    sources: pd.DataFrame = field(default_factory=pd.DataFrame)
    read_summary: str = ""

    @property
    def n_refused(self) -> int:
        return int(self.frame["refused"].sum()) if len(self.frame) else 0


_NORMALIZED: dict[str, str] = {}


def normalize_value(value: Any) -> str:
    """Map a value key to the extraction vocabulary (upstream normalisation); missing values become ``"unknown"``.

    Results are memoised (the vocabulary is small), so every occurrence of a value is the same string object.
    """
    if type(value) is str:
        hit = _NORMALIZED.get(value)
        if hit is not None:
            return hit
        s = value.strip()
        out = VALUE_NORMALIZATION.get(s, s) if s else UNKNOWN
        if len(_NORMALIZED) < 100_000:
            _NORMALIZED[value] = out
        return out
    if value is None or (isinstance(value, float) and value != value):
        return UNKNOWN
    return normalize_value(str(value))
