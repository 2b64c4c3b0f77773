"""Readers that turn StereoTales outputs into the *stories frame*, the input of association mining.

The stories frame has one row per story (model, sample, epoch) and the columns
(:data:`~stereoprobe.stereotales.contract.ID_COLUMNS`)::

    model, language, sample_id, epoch, target_attribute, attribute_value_key, scenario_key,
    scenario_group, refused, <one column per taxonomy attribute: the analysis-ready profile value>

plus ``refusal_label``, ``n_extractors_ok`` and ``extraction_failed`` (a complied story whose extractors
did not reach the quorum: its profile is all "unknown"; NaN/None where the source does not record them). Profile values
are English keys; ``"unknown"`` and ``"other"`` are kept as such (the statistics drop them pair-wise, as
upstream ``build_contingency_table`` does). The base attribute's value is always the prompted English key
``attribute_value_key`` (upstream's loader of the public release reads the localised
``target_attribute_value`` instead, which breaks cross-language comparison), normalised to the extraction
vocabulary (``METADATA_VALUE_NORMALIZATION`` of Giskard-AI/stereotales-pipeline
``src/stereotales_pipeline/step_02_compute_associations.py``).

Two sources:

- :func:`~.stories_logs.read_stories_from_logs` — inspect eval logs of the ``stereotales`` task, read one sample at a time.
  A (model, sample id, epoch) present in several logs (retries, partial runs) is taken from the newest log in
  which it succeeded; errored samples are counted, never silently dropped. Logs of different task versions or
  taxonomy fingerprints are refused (:class:`MixedInputsError`).
- :func:`~.stories_release.read_stories_from_release` — the public StereoTales release layout (``<bucket>/stories/*.parquet``
  or CSV; one row per story with ``generator_model, language, target_attribute, attribute_value_key,
  scenario_key, extracted_attributes_json, ...``).

:func:`read_stories` dispatches on what the inputs contain. Every reader returns a :class:`Stories` bundle:
the frame, the attribute columns in taxonomy order, and the per-sample accounting of what was not used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.stereotales.contract import (
    EXTRA_COLUMNS,
    ID_COLUMNS,
    ISSUE_COLUMNS,
    OTHER,
    SCORER_NAME,
    TASK_NAME,
    UNKNOWN,
    normalize_language,
)
from stereoprobe.stereotales.taxonomy.seeds import upstream_config

__all__ = [
    "EXTRA_COLUMNS", "ID_COLUMNS", "ISSUE_COLUMNS", "MixedInputsError", "OTHER", "SCORER_NAME", "Stories",
    "StoriesError", "TASK_NAME", "UNKNOWN", "classify_inputs", "compact_frame", "normalize_language",
    "normalize_value", "read_stories", "read_story_excerpts",
]

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


# ----------------------------------------------------------------------------------------------------------
# Dispatch


RELEASE_SUFFIXES = (".parquet", ".csv")


def classify_inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """Split inputs (files or folders, searched recursively) into (eval logs, release tables).

    Logs are found by :func:`stereoprobe.inputs.find_logs` (``inspect eval-set`` index files and non-log
    ``.json`` files skipped); release tables are the ``.parquet`` / ``.csv`` files. A missing path or a file
    of another kind is a :class:`StoriesError` naming it.
    """
    from stereoprobe.inputs import LOG_SUFFIXES, find_logs

    logs: list[Path] = []
    release: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            logs += find_logs([p])
            release += [q for q in sorted(p.rglob("*")) if q.is_file() and q.suffix in RELEASE_SUFFIXES
                        and not any(part.startswith(".") for part in q.relative_to(p).parts)]
        elif p.is_file():
            if p.suffix in LOG_SUFFIXES:
                logs += find_logs([p])
            elif p.suffix in RELEASE_SUFFIXES:
                release.append(p)
            else:
                raise StoriesError(f"{p}: not an eval log (.eval/.json) nor a release table (.parquet/.csv)")
        else:
            raise StoriesError(f"{p}: no such file or folder")
    return logs, release


def read_stories(inputs: Sequence[str | Path]) -> Stories:
    """Read eval logs or release tables (not both) into a :class:`Stories` bundle."""
    logs, release = classify_inputs(inputs)
    if logs and release:
        raise MixedInputsError(
            "inputs mix inspect eval logs and StereoTales release tables "
            f"(e.g. {logs[0]} and {release[0]}); analyse them separately"
        )
    if logs:
        from stereoprobe.stereotales.mining.stories_logs import read_stories_from_logs

        return read_stories_from_logs(logs)
    if release:
        from stereoprobe.stereotales.mining.stories_release import read_stories_from_release

        return read_stories_from_release(list(inputs))
    raise StoriesError(f"no eval logs (.eval/.json) nor release tables (.parquet/.csv) in: {list(map(str, inputs))}")



def read_story_excerpts(
    inputs: Sequence[str | Path], keys: Iterable[tuple[str, str, int]], max_chars: int = 400
) -> dict[tuple[str, str, int], str]:
    """Return ``{(model, sample_id, epoch): excerpt}`` for the requested stories only.

    Streams the same inputs a second time (logs: the sample output; release: the ``story`` column of the
    needed rows), so the full texts of a large corpus never sit in memory.
    """
    from stereoprobe.stereotales.mining.stories_logs import log_excerpts
    from stereoprobe.stereotales.mining.stories_release import release_excerpts

    wanted = set(keys)
    if not wanted:
        return {}
    logs, release = classify_inputs(inputs)

    def cut(text: str) -> str:
        text = " ".join(str(text).split())
        return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"

    out: dict[tuple[str, str, int], str] = {}
    if logs:
        out.update(log_excerpts(logs, wanted, cut))
    if release:
        for key, text in release_excerpts(release, wanted, cut).items():
            out.setdefault(key, text)
    return out
