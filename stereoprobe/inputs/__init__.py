"""The one input layer of every post-processing command: eval logs, eval-set folders, lm-eval samples, tables.

**inspect logs** (:func:`find_logs`, :func:`iter_samples`). Inputs are files or folders (searched
recursively) of ``.eval`` and ``.json`` logs, including folders written by ``inspect eval-set`` (their index
files ``eval-set.json`` and ``logs.json`` are not logs and are skipped, as are dot files and, in folders,
``.json`` files that are not inspect logs, e.g. lm-eval's ``results_*.json``). Across ALL files there is one
record per *run* x sample id x epoch, where a run is (model, task, task arguments):

- the newest complete record wins (logs are read newest first by their ``created`` time): an ``eval-retry``
  log, or a resumed ``eval-set``, supersedes the interrupted original; the original's copies are counted
  as ``duplicates``;
- a sample with an ``error`` is never yielded; when no log holds a complete copy it is counted in
  :class:`ReadStats` (``errors``, with its ids), so callers can report it;
- logs of other tasks are skipped when the caller names its task(s); if none matches, :class:`InputError`
  says which tasks were found instead.

Task arguments are part of the run because inspect copies them into a retry unchanged (``eval_retry`` in
``src/inspect_ai/_eval/eval.py`` of github.com/UKGovernmentBEIS/inspect_ai), while two runs with different
arguments (e.g. DBB's ``mode=logprob`` and ``mode=sampled``) are different experiments. Several logs of one
task and model (an ``eval-set`` whose tasks ran one per process, shards) are merged by sample id, not by
inspect's task id.

**lm-eval** ``--log_samples`` output (:func:`iter_lm_eval_samples`): ``<out>/<model>/results_<time>.json`` and
``samples_<task>_<time>.jsonl`` (file names from ``lm_eval/loggers/evaluation_tracker.py``, record fields from
``lm_eval/evaluator.py`` of github.com/EleutherAI/lm-evaluation-harness, v0.4.x); one :class:`LmEvalRecord` per model x task x doc id x filter (newest file
wins), with the stringified numbers of ``resps`` cast back to floats and booleans.

**Tables** (:func:`read_table`, :func:`require_columns`, :func:`require_finite`): CSV or Parquet with errors
that name the file, the missing columns or the bad row.

Every bad input raises :class:`stereoprobe.errors.InputError` (one line naming the file and, for a corrupt
zip or zstd member, the member).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.logs import LogInfo, LogReadError, error_message, iter_raw_samples, read_header

LOG_SUFFIXES = (".eval", ".json")
EVAL_SET_INDEX_FILES = frozenset({"eval-set.json", "logs.json"})

__all__ = [
    "EVAL_SET_INDEX_FILES", "LOG_SUFFIXES", "InputError", "LmEvalRecord", "LogInfo", "LogReadError", "ReadStats", "find_lm_eval_samples",
    "find_logs", "iter_lm_eval_samples", "iter_samples", "read_headers", "read_table", "require_columns", "require_finite",
]


# ---------------------------------------------------------------------------------------------------------
# Discovery


def _looks_like_inspect_json(path: Path) -> bool:
    """Whether a ``.json`` file starts like an inspect log (an ``EvalLog``: ``version`` and ``eval`` keys)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except OSError:
        return False
    return b'"eval"' in head and b'"version"' in head


def _is_log_candidate(path: Path) -> bool:
    if path.name.startswith(".") or path.name in EVAL_SET_INDEX_FILES or path.suffix not in LOG_SUFFIXES:
        return False
    return path.suffix == ".eval" or _looks_like_inspect_json(path)


def find_logs(inputs: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders (recursively) into a sorted list of inspect log files.

    In folders: ``.eval`` files and ``.json`` files that start like an inspect log; ``eval-set.json``,
    ``logs.json``, dot files and dot folders are skipped. A file named explicitly must be a log: an
    eval-set index or another suffix is an :class:`InputError`. A missing path is an :class:`InputError`.
    """
    found: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            for q in sorted(p.rglob("*")):
                rel = q.relative_to(p).parts
                if q.is_file() and not any(part.startswith(".") for part in rel[:-1]) and _is_log_candidate(q):
                    found.append(q)
        elif p.is_file():
            if p.name in EVAL_SET_INDEX_FILES:
                raise InputError(f"{p}: an 'inspect eval-set' index file, not a log; pass its folder instead")
            if p.suffix not in LOG_SUFFIXES:
                raise InputError(f"{p}: not an inspect log (expected a .eval or .json file)")
            found.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------------------------------------------------
# Samples of inspect logs


@dataclass
class ReadStats:
    """What :func:`iter_samples` read; complete once the iterator is exhausted.

    ``samples``: records yielded; ``duplicates``: copies superseded by a newer complete copy (retries,
    resumed eval-sets, the same log given twice); ``errors``: records that failed in every log holding them
    (never yielded; ids in ``error_ids`` as ``"<task>/<model>/<id>#<epoch>"``); ``retried``: records whose
    newest copy failed but an older log holds a complete one (yielded from that log); ``error_messages`` maps
    each error id to the message of its newest failed copy (500 characters at most). ``by_run`` counts
    ``samples`` and ``errors`` per (task, model). ``other_tasks``: logs skipped because of their task.
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

    def summary(self) -> str:
        """One line for the console and the report, e.g. "3 logs, 400 samples (20 superseded, 2 errors)"."""
        extra = [f"{self.duplicates} superseded by newer copies"] if self.duplicates else []
        if self.errors:
            extra.append(f"{self.errors} error sample{'s' if self.errors != 1 else ''} not scored")
        if self.incomplete_logs:
            extra.append(f"{len(self.incomplete_logs)} interrupted log{'s' if len(self.incomplete_logs) != 1 else ''}")
        n = len(self.files)
        return f"{n} log{'s' if n != 1 else ''}, {self.samples} samples" + (f" ({', '.join(extra)})" if extra else "")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for ``run_info.json`` or a report's settings table)."""
        return {
            "files": [str(p) for p in self.files], "incomplete_logs": [str(p) for p in self.incomplete_logs],
            "samples": self.samples, "duplicates": self.duplicates, "errors": self.errors,
            "retried": self.retried, "error_ids": list(self.error_ids), "error_messages": dict(self.error_messages),
            "by_run": [{"task": t, "model": m, **dict(c)} for (t, m), c in sorted(self.by_run.items())],
        }


def _created(info: LogInfo) -> datetime:
    try:
        dt = datetime.fromisoformat(str(info.created))
    except ValueError:
        return datetime.min.replace(tzinfo=timezone.utc)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _run_key(info: LogInfo) -> tuple[str, str, str]:
    return (info.task, info.model, json.dumps(info.task_args, sort_keys=True, default=str))


def _wanted(task: str | Sequence[str] | None) -> set[str] | None:
    if task is None:
        return None
    return {task} if isinstance(task, str) else set(task)


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
    wanted = _wanted(task)
    infos: list[LogInfo] = []
    other: dict[str, list[Path]] = {}
    for p in paths:
        info = read_header(p)
        if wanted is not None and info.task not in wanted:
            other.setdefault(info.task, []).append(p)
            continue
        infos.append(info)
    if stats is not None:
        stats.other_tasks = other
        stats.files = [i.path for i in infos]
        stats.incomplete_logs = [i.path for i in infos if i.status == "started"]
    if not infos:
        found = ", ".join(f"{t!r} ({len(ps)} log{'s' if len(ps) != 1 else ''})" for t, ps in sorted(other.items()))
        raise InputError(f"no log of task {' or '.join(repr(t) for t in sorted(wanted or []))} in "
                         f"{', '.join(inputs)}; found {found}")
    # newest first; inspect records ``created`` to the second, so among logs started in the same second a
    # finished log comes before an interrupted one, then the later-modified file (a retry finishes later)
    infos.sort(key=lambda i: (_created(i), i.status != "started", _mtime(i.path), str(i.path)), reverse=True)
    return infos


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def iter_samples(inputs: Iterable[str | Path], task: str | Sequence[str] | None = None, *,
                 stats: ReadStats | None = None) -> Iterator[tuple[LogInfo, dict[str, Any]]]:
    """Yield ``(LogInfo, sample dict)`` once per run x sample id x epoch across all logs (see the module doc).

    ``task``: a task name or several (``("dbb", "dbb_sg")``); logs of other tasks are skipped, and none
    matching is an :class:`InputError`. ``stats``: a :class:`ReadStats` filled while iterating (complete
    when the iterator is exhausted). Samples are the plain dicts of :func:`stereoprobe.logs.iter_raw_samples`
    (read them with :func:`stereoprobe.logs.output_text` and ``.get``); error samples are never yielded.
    Memory: the keys seen so far (a few tuples per sample), never the samples.
    """
    stats = stats if stats is not None else ReadStats()
    infos = read_headers(inputs, task, stats)
    done: set[tuple[Any, ...]] = set()
    failed: dict[tuple[Any, ...], str] = {}
    for info in infos:
        run = _run_key(info)
        counts = stats.by_run.setdefault((info.task, info.model), Counter())
        for s in iter_raw_samples(info.path):
            key = (*run, str(s.get("id")), int(s.get("epoch") or 1))
            if key in done:
                stats.duplicates += 1
                continue
            if s.get("error") is not None:
                if key not in failed:
                    failed[key] = f"{info.task}/{info.model}/{s.get('id')}#{int(s.get('epoch') or 1)}"
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


# ---------------------------------------------------------------------------------------------------------
# lm-eval --log_samples output

_SAMPLES_FILE = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[0-9\-.:]+)\.jsonl$")


@dataclass(frozen=True)
class LmEvalRecord:
    """One per-document record of lm-eval's ``samples_<task>_<time>.jsonl``.

    ``resps`` / ``filtered_resps``: one entry per request, numbers cast back from lm-eval's strings
    (``[["-0.109", "False"]]`` -> ``[[-0.109, False]]``); :attr:`loglikelihoods` the first number of each
    request (log-likelihood tasks), ``None`` for generation tasks.
    """

    path: Path
    line: int
    task: str
    model: str
    doc_id: Any
    filter: str
    doc: dict[str, Any]
    target: Any
    resps: list[Any]
    filtered_resps: list[Any]
    metrics: dict[str, Any]

    @property
    def loglikelihoods(self) -> list[float] | None:
        out = []
        for r in self.resps:
            while isinstance(r, list) and r:
                r = r[0]
            if isinstance(r, bool) or not isinstance(r, (int, float)):
                return None
            out.append(float(r))
        return out


def _cast(x: Any) -> Any:
    if isinstance(x, list):
        return [_cast(v) for v in x]
    if isinstance(x, str):
        if x in ("True", "False"):
            return x == "True"
        try:
            return float(x)
        except ValueError:
            return x
    return x


def find_lm_eval_samples(inputs: Iterable[str | Path], task: str | Sequence[str] | None = None) -> list[Path]:
    """``samples_<task>_<time>.jsonl`` files under ``inputs`` (files or folders), of ``task`` when given."""
    wanted = _wanted(task)
    found: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            cands = sorted(q for q in p.rglob("samples_*.jsonl") if q.is_file() and not q.name.startswith("."))
        elif p.is_file():
            if not _SAMPLES_FILE.match(p.name):
                raise InputError(f"{p}: not an lm-eval samples file (expected samples_<task>_<time>.jsonl)")
            cands = [p]
        else:
            raise InputError(f"{p}: no such file or folder")
        for q in cands:
            m = _SAMPLES_FILE.match(q.name)
            if m and (wanted is None or m["task"] in wanted):
                found.append(q)
    return found


def _lm_eval_model(samples_file: Path, time: str) -> str:
    """The model of a samples file: ``model_name`` of the results file of the same run, else the folder."""
    results = samples_file.parent / f"results_{time}.json"
    if results.is_file():
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{results}: not a readable lm-eval results file ({exc})") from None
        name = data.get("model_name") or (data.get("config") or {}).get("model_args")
        if name:
            return str(name)
    return samples_file.parent.name


def iter_lm_eval_samples(inputs: Iterable[str | Path], task: str | Sequence[str] | None = None, *,
                         stats: ReadStats | None = None) -> Iterator[LmEvalRecord]:
    """Yield one :class:`LmEvalRecord` per model x task x doc id x filter across all samples files (newest
    file first; older copies counted in ``stats.duplicates``). No file of the wanted task is an
    :class:`InputError`; so is a line that is not JSON or lacks ``doc_id``/``resps`` (naming file and line).
    """
    inputs = [str(i) for i in inputs]
    stats = stats if stats is not None else ReadStats()
    paths = find_lm_eval_samples(inputs, task)
    if not paths:
        what = f" of task {' or '.join(repr(t) for t in sorted(_wanted(task) or []))}" if task else ""
        raise InputError(f"no lm-eval samples files (samples_<task>_<time>.jsonl){what} in {', '.join(inputs)}")
    keyed = sorted(((_SAMPLES_FILE.match(p.name), p) for p in paths), key=lambda mp: (mp[0]["time"], str(mp[1])),
                   reverse=True)
    stats.files = [p for _, p in keyed]
    seen: set[tuple[Any, ...]] = set()
    for m, p in keyed:
        model = _lm_eval_model(p, m["time"])
        counts = stats.by_run.setdefault((m["task"], model), Counter())
        try:
            f = open(p, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{p}: cannot be read ({exc.strerror})") from None
        with f:
            try:
                for ln, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        rec = json.loads(line)
                        doc_id, resps = rec["doc_id"], rec["resps"]
                    except (ValueError, KeyError, TypeError) as exc:
                        raise InputError(f"{p}: line {ln}: not an lm-eval sample record ({exc})") from None
                    key = (m["task"], model, str(doc_id), str(rec.get("filter", "none")))
                    if key in seen:
                        stats.duplicates += 1
                        continue
                    seen.add(key)
                    stats.samples += 1
                    counts["samples"] += 1
                    yield LmEvalRecord(
                        path=p, line=ln, task=m["task"], model=model, doc_id=doc_id,
                        filter=str(rec.get("filter", "none")), doc=rec.get("doc") or {}, target=rec.get("target"),
                        resps=_cast(resps), filtered_resps=_cast(rec.get("filtered_resps", resps)),
                        metrics={k: rec[k] for k in rec.get("metrics", []) if k in rec},
                    )
            except UnicodeDecodeError as exc:
                raise InputError(f"{p}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r})") from None


# ---------------------------------------------------------------------------------------------------------
# CSV / Parquet tables


def read_table(path: str | Path, required: Iterable[str] = (), *, allow_empty: bool = False,
               what: str = "table", **read_kwargs: Any) -> Any:
    """Read a CSV (``.csv``, ``.tsv``: tab-separated) or Parquet (``.parquet``) file into a DataFrame.

    Clear :class:`InputError` for a missing file, an empty file or a table without rows (unless
    ``allow_empty``), text that is not UTF-8, an unreadable file, and missing ``required`` columns (all of
    them listed, with the columns found). ``what`` names the input in messages (e.g. ``"human ratings"``).
    """
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such {what} file")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, expected a {what} file (.csv or .parquet)")
    if p.stat().st_size == 0:
        raise InputError(f"{p}: empty file (expected a {what})")
    try:
        if p.suffix == ".parquet":
            df = _read_parquet(p, read_kwargs)
        elif p.suffix in (".csv", ".tsv", ".txt"):
            kw = {"sep": "\t"} if p.suffix == ".tsv" else {}
            df = pd.read_csv(p, encoding="utf-8", **{**kw, **read_kwargs})
        else:
            raise InputError(f"{p}: unsupported {what} format (expected .csv, .tsv or .parquet)")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at position "
                         f"{exc.start}); save it as UTF-8") from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{p}: empty file (expected a {what})") from None
    except InputError:
        raise
    except Exception as exc:  # pandas' ParserError, pyarrow's ArrowInvalid (a ValueError), OSError
        if not isinstance(exc, (ValueError, OSError)) and type(exc).__module__.split(".")[0] != "pyarrow":
            raise
        kind = "Parquet " if p.suffix == ".parquet" else "CSV " if p.suffix != ".tsv" else "TSV "
        raise InputError(f"{p}: not a readable {kind}{what} ({' '.join(str(exc).split())[:160]})") from None
    require_columns(df, required, p)
    if df.empty and not allow_empty:
        raise InputError(f"{p}: the {what} has no rows")
    return df


def _read_parquet(path: Path, read_kwargs: dict[str, Any]) -> Any:
    """``pd.read_parquet`` taking the CSV reader's options that make sense for a typed file: ``columns``,
    ``filters``; ``dtype`` is applied after reading, and with ``keep_default_na=False`` (as for a CSV read
    with ``dtype=str``) missing values become empty strings."""
    import pandas as pd

    df = pd.read_parquet(path, **{k: v for k, v in read_kwargs.items() if k in ("columns", "filters")})
    if read_kwargs.get("keep_default_na") is False:
        df = df.astype(object).where(df.notna(), "")
    if "dtype" in read_kwargs:
        df = df.astype(read_kwargs["dtype"])
    return df


def require_columns(df: Any, required: Iterable[str], source: str | Path) -> None:
    """:class:`InputError` listing every column of ``required`` that ``df`` lacks (and the columns it has)."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        found = ", ".join(map(str, df.columns)) or "none"
        raise InputError(f"{source}: missing column{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(repr(c) for c in missing)} (found: {found})")


def require_finite(df: Any, columns: Iterable[str], source: str | Path, *, minimum: float | None = None) -> None:
    """:class:`InputError` naming the first rows (1-based, as counted below a CSV header) where a column is
    not a finite number (or below ``minimum``)."""
    import numpy as np
    import pandas as pd

    for col in columns:
        values = pd.to_numeric(df[col], errors="coerce")
        bad = ~np.isfinite(values.to_numpy(dtype=float))
        if minimum is not None:
            bad |= values.to_numpy(dtype=float) < minimum
        if bad.any():
            rows = [int(i) + 1 for i in np.flatnonzero(bad)[:5]]
            need = "a finite number" + (f" >= {minimum:g}" if minimum is not None else "")
            raise InputError(f"{source}: column {col!r} is not {need} in row{'s' if len(rows) > 1 else ''} "
                             f"{', '.join(map(str, rows))}")
