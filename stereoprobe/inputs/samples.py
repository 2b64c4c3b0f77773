"""Samples of inspect logs across files: one record per run x sample id x epoch, a run being the whole
evaluated configuration (:func:`run_config`), never two configurations pooled."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.inputs.discovery import find_logs, wanted_tasks
from stereoprobe.inputs.structure import check_sample
from stereoprobe.logs import LogInfo, error_message, iter_raw_samples, read_header

#: generation settings that change how a run is executed, never what it computes (inspect's GenerateConfig)
GENERATE_KNOBS = frozenset({"max_retries", "timeout", "attempt_timeout", "stream_idle_timeout", "max_connections",
                            "adaptive_connections", "cache", "batch", "extra_headers", "cache_prompt"})
#: model arguments (``-M``) of the providers that are performance knobs (batching, concurrency, placement)
MODEL_ARG_KNOBS = frozenset({"batch_size", "gen_batch_size", "max_connections", "prefix_sharing", "device",
                             "max_num_seqs", "gpu_memory_utilization", "tensor_parallel_size", "enforce_eager"})


@dataclass
class ReadStats:
    """What :func:`iter_samples` read; complete once the iterator is exhausted.

    ``samples``: records yielded; ``duplicates``: copies superseded by a newer complete copy (retries,
    resumed eval-sets, the same log given twice); ``errors``: records that failed in every log holding them
    (never yielded; ids in ``error_ids`` as ``"<task>/<model>/<id>#<epoch>"``); ``retried``: records whose
    newest copy failed but an older log holds a complete one (yielded from that log); ``error_messages`` maps
    each error id to the message of its newest failed copy (500 characters at most). ``by_run`` counts
    ``samples`` and ``errors`` per (task, model). ``other_tasks``: logs skipped because of their task.
    ``partial_runs``: runs whose logs, together, list fewer of the dataset's samples (``dataset.sample_ids``)
    than the dataset holds (``dataset.samples``): an ``inspect eval --limit`` or ``--sample-id`` run, or one
    half of a split run given alone (:func:`partial_runs`); what they lack is never scored.
    """

    files: list[Path] = field(default_factory=list)
    incomplete_logs: list[Path] = field(default_factory=list)
    other_tasks: dict[str, list[Path]] = field(default_factory=dict)
    samples: int = 0
    duplicates: int = 0
    errors: int = 0
    retried: int = 0
    error_ids: list[str] = field(default_factory=list)
    error_messages: dict[str, str] = field(default_factory=dict)  # error id -> newest error message
    by_run: dict[tuple[str, str], Counter] = field(default_factory=dict)
    partial_runs: list[dict[str, Any]] = field(default_factory=list)
    #: logs of a newer release of their task whose numbers are still comparable (same N of ``N-X``, a newer
    #: interface X): read, and named in :meth:`summary` and :meth:`partial_lines` (:func:`check_task_version`)
    newer_versions: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the console and the report, e.g. "3 logs, 400 samples (20 superseded, 2 errors)"."""
        extra = [f"{self.duplicates} superseded by newer copies"] if self.duplicates else []
        if self.errors:
            extra.append(f"{self.errors} error sample{'s' if self.errors != 1 else ''} not scored")
        if self.incomplete_logs:
            extra.append(f"{len(self.incomplete_logs)} interrupted log{'s' if len(self.incomplete_logs) != 1 else ''}")
        for r in self.partial_runs:
            extra.append(f"{r['task']}/{r['model']} covers {r['listed']:,} of the dataset's {r['dataset_samples']:,} "
                         f"samples ({r['dataset_samples'] - r['listed']:,} in no log: an inspect eval --limit or "
                         "--sample-id run, or part of a split run; they are not scored)")
        for v in self.newer_versions:
            extra.append(_newer_text(v))
        n = len(self.files)
        return f"{n} log{'s' if n != 1 else ''}, {self.samples} samples" + (f" ({', '.join(extra)})" if extra else "")

    def partial_lines(self) -> list[str]:
        """One console line per partial run (:attr:`partial_runs`): that the run is partial, how many of its
        dataset's samples no log holds and the run's logs (the first three). inspect records only the ids it
        ran, so the missing samples are counted, not named."""
        lines = []
        for r in self.partial_runs:
            files = [Path(f).name for f in r["files"]]
            shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            lines.append(f"{r['task']}/{r['model']}: PARTIAL RUN, {r['dataset_samples'] - r['listed']:,} of the "
                         f"dataset's {r['dataset_samples']:,} samples are in no log (an inspect eval --limit or "
                         f"--sample-id run, or one part of a split run: give every part); they are not scored, "
                         f"the figures cover {r['listed']:,} sample{'s' if r['listed'] != 1 else ''} ({shown})")
        return lines + [f"NOTE: {_newer_text(v)}" for v in self.newer_versions]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``run_info.json`` or a report's settings table)."""
        return {
            "files": [str(p) for p in self.files], "incomplete_logs": [str(p) for p in self.incomplete_logs],
            "samples": self.samples, "duplicates": self.duplicates, "errors": self.errors,
            "retried": self.retried, "error_ids": list(self.error_ids), "error_messages": dict(self.error_messages),
            "by_run": [{"task": t, "model": m, **dict(c)} for (t, m), c in sorted(self.by_run.items())],
            "partial_runs": [dict(r) for r in self.partial_runs],
            "newer_versions": [dict(v) for v in self.newer_versions],
        }


def _newer_text(v: Mapping[str, Any]) -> str:
    return (f"{v['file']}: task {v['task']!r} version {v['version']} is newer than this stereoprobe's "
            f"{v['installed']} (same numbers, newer interface); read as {v['installed']}")


@lru_cache(maxsize=256)
def _version_status(task: str, recorded: str | int) -> tuple[str, str, str]:
    """(status, the log's N-X version, the installed N-X version) through :mod:`stereoprobe.task_versions`,
    the one reader of versions (``N-X`` and the older ``1.2.0``-style versions placed by the changelog)."""
    from stereoprobe.task_versions import current_version, log_version, version_status

    status = version_status(task, recorded)
    if status != "future":
        return status, "", ""
    return status, str(log_version(task, recorded)), str(current_version(task))


def check_task_version(info: LogInfo, stats: ReadStats | None = None) -> None:
    """A log written by a newer release of its task: one line (:class:`InputError`) when its results are not
    comparable with this release's (a higher N of ``N-X``: scoring, data or prompts changed, which this
    version may misread); noted in ``stats.newer_versions`` when only the interface is newer (same N)."""
    status, version, installed = _version_status(info.task, info.task_version)
    if status != "future":
        return
    if version.split("-")[0] != installed.split("-")[0]:
        raise InputError(f"{info.path}: task {info.task!r} version {version} was written by a newer stereoprobe "
                         f"(this one has {installed}; a new first number means results this version cannot read "
                         "correctly): upgrade stereoprobe to read this log")
    if stats is not None:
        stats.newer_versions.append({"file": info.path.name, "task": info.task, "version": version,
                                     "installed": installed})


def run_config(info: LogInfo) -> dict[str, Any]:
    """The evaluated configuration of a log: task version, task arguments, model roles, model arguments and generation
    settings (performance knobs :data:`MODEL_ARG_KNOBS` / :data:`GENERATE_KNOBS` and unset values left out)
    and the dataset (name and location). Two logs of one task and model are one run only when these are equal; inspect's
    ``eval-retry`` copies all of them unchanged (``eval_retry`` in ``src/inspect_ai/_eval/eval.py`` of
    github.com/UKGovernmentBEIS/inspect_ai)."""
    return {
        "task_version": info.task_version,
        "task_args": {k: v for k, v in info.task_args.items() if v is not None},
        "model_roles": dict(info.model_roles),
        "model_args": {k: v for k, v in info.model_args.items() if k not in MODEL_ARG_KNOBS and v is not None},
        "generate_config": {k: v for k, v in info.generate_config.items() if k not in GENERATE_KNOBS and v is not None},
        "dataset": {k: info.dataset.get(k) for k in ("name", "location")},
    }


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _difference(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> str | None:
    """The first field (dotted path) where two configurations differ, with both values."""
    for k in sorted(set(a) | set(b)):
        va, vb = a.get(k), b.get(k)
        if _canon(va) == _canon(vb):
            continue
        if isinstance(va, Mapping) and isinstance(vb, Mapping):
            return _difference(va, vb, f"{prefix}{k}.")
        return f"{prefix}{k} ({_canon(va)[:60]} vs {_canon(vb)[:60]})"
    return None


def _created(info: LogInfo) -> datetime:
    try:
        dt = datetime.fromisoformat(str(info.created))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def partial_runs(infos: Sequence[LogInfo]) -> list[dict[str, Any]]:
    """Runs (task, model, configuration) whose logs together list fewer sample ids than their dataset holds:
    ``{"task", "model", "listed", "dataset_samples", "files"}`` each, sorted. inspect records the whole
    dataset's size as ``dataset.samples`` and the ids it was asked to run (after ``--limit`` /
    ``--sample-id``) as ``dataset.sample_ids`` (``inspect_ai/_eval/task/log.py``)."""
    runs: dict[tuple[str, str, str], dict[str, Any]] = {}
    for info in infos:
        total = info.dataset.get("samples")
        ids = info.dataset.get("sample_ids")
        if not isinstance(total, int) or isinstance(total, bool) or not isinstance(ids, list):
            continue
        run = runs.setdefault((info.task, info.model, _canon(run_config(info))),
                              {"task": info.task, "model": info.model, "ids": set(), "total": 0, "files": []})
        run["ids"].update(str(i) for i in ids)
        run["total"] = max(run["total"], total)
        run["files"].append(str(info.path))
    out = [{"task": r["task"], "model": r["model"], "listed": len(r["ids"]), "dataset_samples": r["total"],
            "files": sorted(r["files"])} for r in runs.values() if len(r["ids"]) < r["total"]]
    return sorted(out, key=lambda r: (r["task"], r["model"], r["files"]))


def read_headers(inputs: Iterable[str | Path], task: str | Sequence[str] | None = None,
                 stats: ReadStats | None = None) -> list[LogInfo]:
    """Headers of every log under ``inputs`` (of ``task`` when given), newest first.

    Raises :class:`InputError` when there is no log at all, or none of the wanted task(s) (naming the tasks
    found instead).
    """
    inputs = [str(i) for i in inputs]
    paths = find_logs(inputs)
    if not paths:
        raise InputError(f"no inspect logs (.eval/.json) in {', '.join(inputs) or 'the inputs'}")
    wanted = wanted_tasks(task)
    infos: list[LogInfo] = []
    other: dict[str, list[Path]] = {}
    for p in paths:
        info = read_header(p)
        if wanted is not None and info.task not in wanted:
            other.setdefault(info.task, []).append(p)
            continue
        infos.append(info)
    seen: set[tuple[str, str]] = set()
    for info in infos:
        key = (info.task, str(info.task_version))
        if key not in seen:  # one note per task version
            seen.add(key)
            check_task_version(info, stats)
    if stats is not None:
        stats.other_tasks = other
        stats.files = [i.path for i in infos]
        stats.incomplete_logs = [i.path for i in infos if i.status == "started"]
        stats.partial_runs = partial_runs(infos)
    if not infos:
        found = ", ".join(f"{t!r} ({len(ps)} log{'s' if len(ps) != 1 else ''})" for t, ps in sorted(other.items()))
        raise InputError(f"no log of task {' or '.join(repr(t) for t in sorted(wanted or []))} in "
                         f"{', '.join(inputs)}; found {found}")
    # newest first; inspect records ``created`` to the second, so among logs started in the same second a
    # finished log comes before an interrupted one, then the later-modified file (a retry finishes later)
    infos.sort(key=lambda i: (_created(i), i.status != "started", _mtime(i.path), str(i.path)), reverse=True)
    return infos


def check_configurations(infos: Sequence[LogInfo], distinct: Sequence[str] = ()) -> None:
    """:class:`InputError` when two logs of one task and model were made with different configurations
    (:func:`run_config`), naming both files and the first differing field. ``distinct``: task arguments
    whose values the caller reports as separate runs (e.g. DBB's ``mode``): logs differing in them are
    not compared."""
    first: dict[tuple[Any, ...], tuple[LogInfo, dict[str, Any]]] = {}
    for info in infos:
        config = run_config(info)
        sep = tuple(_canon(info.task_args.get(k)) for k in distinct)
        key = (info.task, info.model, sep)
        if key not in first:
            first[key] = (info, config)
            continue
        other, seen = first[key]
        diff = _difference(seen, config)
        if diff is not None:
            raise InputError(f"{other.path} and {info.path}: two configurations of task {info.task!r} with model "
                             f"{info.model!r} differ in {diff}; analyse them separately (or give one of them)")


def iter_samples(inputs: Iterable[str | Path], task: str | Sequence[str] | None = None, *,
                 stats: ReadStats | None = None, distinct: Sequence[str] = (),
                 string_ids: bool = False) -> Iterator[tuple[LogInfo, dict[str, Any]]]:
    """Yield ``(LogInfo, sample dict)`` once per run x sample id x epoch across all logs (see the package doc).

    ``task``: a task name or several (``("dbb", "dbb_sg")``); logs of other tasks are skipped, and none
    matching is an :class:`InputError`. Logs of one task and model must share one configuration
    (:func:`check_configurations`; ``distinct``: task arguments reported as separate runs). Each sample's
    structure is checked (:func:`stereoprobe.inputs.structure.check_sample`; ``string_ids``: the task writes
    string ids). ``stats``: a :class:`ReadStats` filled while iterating (complete when the iterator is
    exhausted). Samples are the plain dicts of :func:`stereoprobe.logs.iter_raw_samples`; error samples are
    never yielded. Memory: the keys seen so far (a few tuples per sample), never the samples.
    """
    stats = stats if stats is not None else ReadStats()
    infos = read_headers(inputs, task, stats)
    check_configurations(infos, distinct)
    done: set[tuple[Any, ...]] = set()
    failed: dict[tuple[Any, ...], str] = {}
    for info in infos:
        run = (info.task, info.model, _canon(run_config(info)))
        counts = stats.by_run.setdefault((info.task, info.model), Counter())
        for s in iter_raw_samples(info.path):
            check_sample(info.path, s, string_ids=string_ids)
            key = (*run, str(s["id"]), int(s.get("epoch") or 1))
            if key in done:
                stats.duplicates += 1
                continue
            if s.get("error") is not None:
                if key not in failed:
                    failed[key] = f"{info.task}/{info.model}/{s['id']}#{key[-1]}"
                    stats.error_messages[failed[key]] = (error_message(s) or "")[:500]
                continue
            done.add(key)
            if key in failed:
                del failed[key]
                stats.retried += 1
            stats.samples += 1
            counts["samples"] += 1
            yield info, s
    stats.errors = len(failed)
    stats.error_ids = sorted(failed.values())
    stats.error_messages = {i: stats.error_messages.get(i, "") for i in stats.error_ids}
    for key in failed:
        stats.by_run.setdefault((key[0], key[1]), Counter())["errors"] += 1
