"""lm-evaluation-harness output: ``--log_samples`` records and results files, their shape checked on reading.

``<out>/<model>/results_<time>.json`` and ``samples_<task>_<time>.jsonl`` (file names from
``lm_eval/loggers/evaluation_tracker.py``, record fields from ``lm_eval/evaluator.py`` of
github.com/EleutherAI/lm-evaluation-harness, v0.4.x): one :class:`LmEvalRecord` per model x task x doc id x
filter (newest file wins), with the stringified numbers of ``resps`` cast back to floats and booleans.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError
from stereoprobe.inputs.discovery import SAMPLES_FILE, find_lm_eval_samples, wanted_tasks
from stereoprobe.inputs.samples import ReadStats
from stereoprobe.model_labels import model_label


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


def read_results_file(path: str | Path) -> dict[str, Any]:
    """An lm-eval ``results_<time>.json`` as a dict; a file that is not JSON, not an object, or whose
    ``results`` / ``config`` is not an object is an :class:`InputError` naming it."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{p}: cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{p}: not a readable lm-eval results file ({' '.join(str(exc).split())[:160]})") from None
    if not isinstance(data, dict):
        raise InputError(f"{p}: an lm-eval results file is a JSON object, this one is a {type(data).__name__}")
    for key in ("results", "config"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise InputError(f"{p}: field {key!r} of an lm-eval results file is a {type(data[key]).__name__}, "
                             "expected an object")
    return data


def _lm_eval_model(samples_file: Path, time: str) -> str:
    """The model of a samples file: ``model_name`` of the results file of the same run, else the folder, as a
    label (:func:`stereoprobe.model_labels.model_label`: ``org/name`` for a hub cache path)."""
    results = samples_file.parent / f"results_{time}.json"
    if results.is_file():
        data = read_results_file(results)
        name = data.get("model_name") or (data.get("config") or {}).get("model_args")
        if name:
            return model_label(name)  # the model's name, never its folder path (pretrained=/path/...)
    return model_label(samples_file.parent.name)


def iter_jsonl(path: str | Path, what: str = "JSON") -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSON-lines file (lm-eval's samples files, the DBB
    lm-eval tasks' data files): the one JSON-lines reader. A line that is not JSON, a file that cannot be read or
    is not UTF-8 text is an :class:`InputError` naming the file (and the line, ``not <what>``)."""
    p = Path(path)
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
                    value = json.loads(line)
                except ValueError as exc:
                    raise InputError(f"{p}: line {ln}: not {what} ({exc})") from None
                yield ln, value
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r})") from None


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, one per non-blank line (:func:`iter_jsonl`; a line that is not an
    object is an :class:`InputError` naming file and line)."""
    rows = []
    for ln, value in iter_jsonl(path):
        if not isinstance(value, dict):
            raise InputError(f"{path}: line {ln}: a JSON object per line is expected, this one is a "
                             f"{type(value).__name__}")
        rows.append(value)
    return rows


def _record(p: Path, ln: int, rec: Any) -> dict[str, Any]:
    """One parsed line of a samples file, its shape checked (an object with ``doc_id``, ``resps`` a list, ``doc``
    an object when present, no positive log-likelihood in a ``[loglikelihood, is_greedy]`` response)."""
    if not isinstance(rec, dict):
        raise InputError(f"{p}: line {ln}: an lm-eval sample record is an object, this one is a "
                         f"{type(rec).__name__}")
    rec.setdefault("doc", {})
    for key, types, need in (("doc_id", (str, int), "an id"), ("resps", (list,), "a list"),
                             ("doc", (dict,), "an object")):
        if key not in rec:
            raise InputError(f"{p}: line {ln}: not an lm-eval sample record (no field {key!r})")
        if isinstance(rec[key], bool) or not isinstance(rec[key], types):
            raise InputError(f"{p}: line {ln}: field {key!r} is a {type(rec[key]).__name__}, expected {need}")
    for req in _cast(rec["resps"]):
        pair = req[0] if isinstance(req, list) and len(req) == 1 and isinstance(req[0], list) else req
        if (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], bool)
                and isinstance(pair[0], float) and pair[0] > 0):
            raise InputError(f"{p}: line {ln}: field 'resps' holds the log-likelihood {pair[0]:g} > 0 "
                             "(a log-probability is at most 0)")
    return rec


def iter_lm_eval_samples(inputs: Iterable[str | Path], task: str | Sequence[str] | None = None, *,
                         stats: ReadStats | None = None) -> Iterator[LmEvalRecord]:
    """Yield one :class:`LmEvalRecord` per model x task x doc id x filter across all samples files (newest
    file first; older copies counted in ``stats.duplicates``). No file of the wanted task is an
    :class:`InputError`; so is a line that is not a JSON object with ``doc_id``, ``resps`` and ``doc``
    (naming file and line), and a results file of the wrong shape.
    """
    inputs = [str(i) for i in inputs]
    stats = stats if stats is not None else ReadStats()
    paths = find_lm_eval_samples(inputs, task)
    if not paths:
        what = f" of task {' or '.join(repr(t) for t in sorted(wanted_tasks(task) or []))}" if task else ""
        raise InputError(f"no lm-eval samples files (samples_<task>_<time>.jsonl){what} in {', '.join(inputs)}")
    keyed = sorted(((SAMPLES_FILE.match(p.name), p) for p in paths), key=lambda mp: (mp[0]["time"], str(mp[1])),
                   reverse=True)
    stats.files = [p for _, p in keyed]
    seen: set[tuple[Any, ...]] = set()
    for m, p in keyed:
        model = _lm_eval_model(p, m["time"])
        counts = stats.by_run.setdefault((m["task"], model), Counter())
        for ln, value in iter_jsonl(p, what="an lm-eval sample record"):
            rec = _record(p, ln, value)
            doc_id, resps = rec["doc_id"], rec["resps"]
            key = (m["task"], model, str(doc_id), str(rec.get("filter", "none")))
            if key in seen:
                stats.duplicates += 1
                continue
            seen.add(key)
            stats.samples += 1
            counts["samples"] += 1
            yield LmEvalRecord(
                path=p, line=ln, task=m["task"], model=model, doc_id=doc_id,
                filter=str(rec.get("filter", "none")), doc=rec["doc"], target=rec.get("target"),
                resps=_cast(resps), filtered_resps=_cast(rec.get("filtered_resps", resps)),
                metrics={k: rec[k] for k in (rec.get("metrics") or []) if isinstance(k, str) and k in rec},
            )
