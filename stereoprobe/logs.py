"""Streaming access to inspect eval logs for the post-processing steps.

Logs are read one sample at a time (``read_eval_log_samples``), never whole, so corpora of hundreds of
thousands of stories fit in memory. Samples are de-duplicated by (log task, model, sample id, epoch):
when a run was retried, the last log (by creation time) wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG_SUFFIXES = (".eval", ".json")


def find_logs(inputs: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders (recursively) into a sorted list of eval log files."""
    found: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            found += sorted(q for q in p.rglob("*") if q.suffix in LOG_SUFFIXES and q.is_file())
        elif p.is_file():
            found.append(p)
        else:
            raise FileNotFoundError(f"no such log file or folder: {p}")
    return found


@dataclass(frozen=True)
class LogInfo:
    path: Path
    task: str
    task_version: Any
    model: str
    task_args: dict[str, Any]
    model_roles: dict[str, Any]
    created: str
    status: str


def log_info(path: Path) -> LogInfo:
    from inspect_ai.log import read_eval_log

    h = read_eval_log(str(path), header_only=True)
    roles = {}
    for k, v in (h.eval.model_roles or {}).items():
        roles[k] = [m.model for m in v] if isinstance(v, list) else v.model
    return LogInfo(
        path=path,
        task=h.eval.task.split("/")[-1],
        task_version=h.eval.task_version,
        model=h.eval.model,
        task_args=dict(h.eval.task_args or {}),
        model_roles=roles,
        created=h.eval.created,
        status=h.status,
    )


def iter_samples(
    inputs: Iterable[str | Path], task: str | None = None, exclude_fields: set[str] | None = None
) -> Iterator[tuple[LogInfo, Any]]:
    """Yield ``(log_info, EvalSample)`` for every sample of every log (optionally only of ``task``).

    A sample (model, id, epoch) seen in several logs is yielded once, from the newest log; errored samples
    are yielded too (``sample.error`` is set) so callers can count them.
    """
    from inspect_ai.log import read_eval_log_samples

    infos = [log_info(p) for p in find_logs(inputs)]
    if task is not None:
        infos = [i for i in infos if i.task == task]
    infos.sort(key=lambda i: i.created, reverse=True)
    seen: set[tuple[str, str, Any, int]] = set()
    excl = {"events"} | (exclude_fields or set())
    for info in infos:
        for s in read_eval_log_samples(str(info.path), all_samples_required=False, exclude_fields=excl):
            key = (info.task, info.model, s.id, s.epoch)
            if key in seen:
                continue
            seen.add(key)
            yield info, s
