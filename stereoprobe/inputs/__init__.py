"""The one input layer of every post-processing command: eval logs, eval-set folders, lm-eval samples, tables.

**Splitting** (:func:`partition`): a command's files and folders split once into inspect logs, lm-eval
samples and results files and tables; a subfolder that cannot be read is an error, never skipped.

**inspect logs** (:func:`find_logs`, :func:`iter_samples`). Inputs are files or folders (searched
recursively) of ``.eval`` and ``.json`` logs, including folders written by ``inspect eval-set`` (their index
files ``eval-set.json`` and ``logs.json`` are not logs and are skipped, as are dot files and, in folders,
``.json`` files that are not inspect logs, e.g. lm-eval's ``results_*.json``). Across ALL files there is one
record per *run* x sample id x epoch, where a run is the whole evaluated configuration
(:func:`run_config`: task, model, task version, task arguments, model roles and arguments, generation
settings, dataset):

- the newest complete record wins (logs are read newest first by their ``created`` time): an ``eval-retry``
  log, or a resumed ``eval-set``, supersedes the interrupted original; the original's copies are counted
  as ``duplicates``;
- a sample with an ``error`` is never yielded; when no log holds a complete copy it is counted in
  :class:`ReadStats` (``errors``, with its ids), so callers can report it;
- logs of other tasks are skipped when the caller names its task(s); if none matches, :class:`InputError`
  says which tasks were found instead.

The configuration is part of the run because inspect copies it into a retry unchanged (``eval_retry`` in
``src/inspect_ai/_eval/eval.py`` of github.com/UKGovernmentBEIS/inspect_ai), while two runs with different
settings are different experiments: logs of one task and model whose configurations differ are refused
(one line naming both files and the first differing field) unless the caller reports them apart
(``distinct``, e.g. DBB's ``mode=logprob`` and ``mode=sampled``); performance knobs (batch sizes,
connections, device) are not part of it. Each sample's structure is checked once
(:mod:`~stereoprobe.inputs.structure`), each header's in :mod:`stereoprobe.logs`. Several logs of one
task and model (an ``eval-set`` whose tasks ran one per process, shards) are merged by sample id, not by
inspect's task id.

**lm-eval** ``--log_samples`` output (:func:`iter_lm_eval_samples`): ``<out>/<model>/results_<time>.json`` and
``samples_<task>_<time>.jsonl`` (file names from ``lm_eval/loggers/evaluation_tracker.py``, record fields from
``lm_eval/evaluator.py`` of github.com/EleutherAI/lm-evaluation-harness, v0.4.x); one :class:`LmEvalRecord`
per model x task x doc id x filter (newest file wins), with the stringified numbers of ``resps`` cast back to
floats and booleans; results files through :func:`read_results_file`.

**Progress**: readers take a ``progress`` callback (:data:`Progress`), and steps without a count a ``step``
context (:data:`Step`), instead of drawing on the console.

**Tables** (:func:`read_table`, :func:`require_columns`, :func:`require_finite`, :func:`require_between`):
CSV or Parquet with errors
that name the file, the missing columns or the bad row.

Every bad input raises :class:`stereoprobe.errors.InputError` (one line naming the file and, for a corrupt
zip or zstd member, the member).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.inputs.discovery import (EVAL_SET_INDEX_FILES, LOG_SUFFIXES, TABLE_SUFFIXES, Partition,
                                          find_lm_eval_samples, find_logs, partition, walk_files)
from stereoprobe.inputs.lm_eval import LmEvalRecord, iter_lm_eval_samples, read_results_file
from stereoprobe.inputs.samples import (ReadStats, check_configurations, iter_samples, read_headers,
                                        run_config)
from stereoprobe.inputs.structure import check_sample
from stereoprobe.inputs.tables import read_table, require_between, require_columns, require_finite
from stereoprobe.logs import LogInfo, LogReadError

#: a progress callback of the readers: ``progress(iterable, description)`` returns the items of
#: ``iterable`` (e.g. wrapped in a progress bar by the CLI); :func:`no_progress` shows nothing
Progress = Callable[[Iterable[Any], str], Iterable[Any]]


def no_progress(iterable: Iterable[Any], description: str = "") -> Iterable[Any]:
    """The :data:`Progress` of library calls: the items unchanged, nothing shown."""
    return iterable


#: a step callback for work without a natural count: ``with step(description): ...`` (e.g. a spinner drawn
#: by the CLI); :func:`no_step` shows nothing
Step = Callable[[str], AbstractContextManager[Any]]


def no_step(description: str = "") -> AbstractContextManager[None]:
    """The :data:`Step` of library calls: nothing shown."""
    return nullcontext()


__all__ = [
    "EVAL_SET_INDEX_FILES", "LOG_SUFFIXES", "TABLE_SUFFIXES", "InputError", "LmEvalRecord", "LogInfo",
    "LogReadError", "Partition", "Progress", "ReadStats", "Step", "check_configurations", "check_sample",
    "find_lm_eval_samples", "find_logs", "iter_lm_eval_samples", "iter_samples", "no_progress", "no_step", "partition",
    "read_headers", "read_results_file", "read_table", "require_between", "require_columns", "require_finite",
    "run_config", "walk_files",
]
