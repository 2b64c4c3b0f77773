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

:func:`read_stories` dispatches on what the inputs contain (split once by :func:`stereoprobe.inputs.partition`). Every reader returns a :class:`Stories` bundle:
the frame, the attribute columns in taxonomy order, and the per-sample accounting of what was not used.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from stereoprobe.errors import InputError
from stereoprobe.inputs import Progress, no_progress, partition
from stereoprobe.stereotales.contract import (
    EXTRA_COLUMNS,
    ID_COLUMNS,
    ISSUE_COLUMNS,
    OTHER,
    SCORER_NAME,
    TASK_STORIES,
    UNKNOWN,
    normalize_language,
)
from stereoprobe.stereotales.mining.stories_frame import (
    MixedInputsError,
    Stories,
    StoriesError,
    compact_frame,
    normalize_value,
)
from stereoprobe.stereotales.mining.stories_logs import log_excerpts, read_stories_from_logs
from stereoprobe.stereotales.mining.stories_release import read_stories_from_release, release_excerpts

__all__ = [
    "EXTRA_COLUMNS", "ID_COLUMNS", "ISSUE_COLUMNS", "MixedInputsError", "OTHER", "SCORER_NAME", "Stories",
    "StoriesError", "TASK_STORIES", "UNKNOWN", "compact_frame", "normalize_language", "normalize_value",
    "read_stories", "read_story_excerpts",
]


# ----------------------------------------------------------------------------------------------------------
# Dispatch


def _split(inputs: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """(eval logs, release tables) of the inputs, through the one split of the input layer
    (:func:`stereoprobe.inputs.partition`); its errors are :class:`StoriesError`."""
    try:
        part = partition(inputs, ("logs", "tables"), what="StereoTales inputs",
                         wrong_file="not an eval log nor a release table")
    except StoriesError:
        raise
    except InputError as exc:
        raise StoriesError(str(exc)) from None
    return part.logs, part.tables


def read_stories(inputs: Sequence[str | Path], progress: Progress = no_progress,
                 accept_versions: str | None = None) -> Stories:
    """Read eval logs or release tables (not both) into a :class:`Stories` bundle. ``progress``: a callback
    of the input layer (:data:`stereoprobe.inputs.Progress`; the CLI draws a bar); ``accept_versions``: the
    user's note accepting logs of different task versions (``--accept-versions``)."""
    logs, release = _split(inputs)
    if logs and release:
        raise MixedInputsError(
            "inputs mix inspect eval logs and StereoTales release tables "
            f"(e.g. {logs[0]} and {release[0]}); analyse them separately"
        )
    if logs:
        return read_stories_from_logs(logs, progress=progress, accept_versions=accept_versions)
    return read_stories_from_release(list(inputs), progress=progress)



def read_story_excerpts(
    inputs: Sequence[str | Path], keys: Iterable[tuple[str, str, int]], max_chars: int = 400
) -> dict[tuple[str, str, int], str]:
    """Return ``{(model, sample_id, epoch): excerpt}`` for the requested stories only.

    Streams the same inputs a second time (logs: the sample output; release: the ``story`` column of the
    needed rows), so the full texts of a large corpus never sit in memory.
    """
    wanted = set(keys)
    if not wanted:
        return {}
    logs, release = _split(inputs)

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
