"""The stories frame from inspect eval logs of the ``stereotales`` task, read one sample at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe.stereotales import contract as C
from stereoprobe.stereotales.contract import EXTRA_COLUMNS, ID_COLUMNS, ISSUE_COLUMNS, SCORER_NAME, TASK_NAME, UNKNOWN
from stereoprobe.stereotales.mining.stories import (
    MixedInputsError,
    Stories,
    StoriesError,
    compact_frame,
    normalize_language,
    normalize_value,
)


@dataclass
class _SampleView:
    """The few fields of an eval sample the readers need, from a sample dict of :mod:`stereoprobe.logs`."""

    id: Any
    epoch: int
    metadata: dict[str, Any]
    error: str | None
    score_metadata: dict[str, dict[str, Any]]  # scorer name -> Score.metadata
    completion: str | None


def _view(d: Mapping[str, Any]) -> _SampleView:
    from stereoprobe.logs import error_message, output_text

    return _SampleView(
        id=d.get("id"),
        epoch=int(d.get("epoch", 1)),
        metadata=d.get("metadata") or {},
        error=error_message(d),
        score_metadata={k: (v or {}).get("metadata") or {} for k, v in (d.get("scores") or {}).items()},
        completion=output_text(d),
    )


def iter_log_samples(path: str | Path) -> Iterator[_SampleView]:
    """Yield the samples of one eval log, one at a time (the fast reader :func:`stereoprobe.logs.iter_raw_samples`;
    an unreadable log raises :class:`StoriesError` naming the file)."""
    from stereoprobe.logs import LogReadError, iter_raw_samples

    try:
        for d in iter_raw_samples(path):
            yield _view(d)
    except LogReadError as exc:
        raise StoriesError(str(exc)) from exc


def _extraction_meta(sample: _SampleView) -> dict[str, Any] | None:
    if SCORER_NAME in sample.score_metadata:
        return sample.score_metadata[SCORER_NAME]
    for meta in sample.score_metadata.values():  # a renamed scorer: the one that carries a profile
        if isinstance(meta, dict) and "profile" in meta:
            return meta
    return None


@dataclass
class _Accumulator:
    """Column-wise storage of the stories: one list per column, repeated strings stored once (interned here
    or memoised by :func:`normalize_value`), so 650k stories × 19 attributes cost pointers, not 650k dicts."""

    columns: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in ID_COLUMNS + EXTRA_COLUMNS})
    attr_columns: dict[str, list[str]] = field(default_factory=dict)
    attributes: list[str] = field(default_factory=list)
    issues: list[dict[str, Any]] = field(default_factory=list)
    pool: dict[str, str] = field(default_factory=dict)
    n: int = 0

    def _intern(self, v: Any) -> Any:
        return self.pool.setdefault(v, v) if isinstance(v, str) else v

    def add(self, row: dict[str, Any], profile: dict[str, str]) -> None:
        for c in ID_COLUMNS + EXTRA_COLUMNS:
            v = row.get(c)
            self.columns[c].append(v if c == "sample_id" else self._intern(v))
        for k in profile:
            if k not in self.attr_columns:
                self.attributes.append(k)
                self.attr_columns[k] = [UNKNOWN] * self.n  # earlier stories lack it
        for a, col in self.attr_columns.items():
            col.append(profile.get(a, UNKNOWN))
        self.n += 1

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.columns)
        for a in self.attributes:
            df[a] = self.attr_columns[a]
        df["epoch"] = df["epoch"].astype("int64")
        df["refused"] = df["refused"].astype(bool)
        df["n_extractors_ok"] = pd.to_numeric(df["n_extractors_ok"], errors="coerce")
        df["extraction_failed"] = df["extraction_failed"].astype(bool)
        return compact_frame(df, self.attributes)

    def issues_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.issues, columns=list(ISSUE_COLUMNS))


def _profile_row(
    info: Any, sample: _SampleView, where: str
) -> tuple[dict[str, Any] | None, dict[str, str] | None, dict[str, Any] | None]:
    """(row, profile, None) for a usable sample, else (None, None, issue)."""
    md = sample.metadata or {}
    base = {
        "source": str(info.path),
        "model": info.model,
        "language": normalize_language(md.get("language", "")),
        "sample_id": str(sample.id),
        "epoch": int(sample.epoch),
    }
    if sample.error is not None:
        return None, None, {**base, "kind": "error", "detail": sample.error[:500]}
    if not md.get("scenario_key"):
        return None, None, {**base, "kind": "no_scenario", "detail": "sample has no scenario_key (extra English set)"}
    for key in ("language", "attribute", "attribute_value_key"):
        if not md.get(key):
            raise StoriesError(f"{where}: sample metadata lacks '{key}' (is this a stereotales log?)")
    meta = _extraction_meta(sample)
    if meta is None or not isinstance(meta.get("profile"), dict):
        return None, None, {**base, "kind": "no_profile", "detail": f"no '{SCORER_NAME}' score with a profile"}
    target = str(md["attribute"])
    value_key = normalize_value(md["attribute_value_key"])
    profile = {str(k): normalize_value(v) for k, v in meta["profile"].items()}
    profile[target] = value_key  # the prompted value replaces the extractor's reading of A (as upstream)
    refusal = meta.get("refusal")
    label = refusal.get("label") if isinstance(refusal, dict) else None
    refused = meta.get("refused")
    if refused is None:
        refused = label in ("refusal", "unknown")
    row = {
        "model": info.model,
        "language": base["language"],
        "sample_id": base["sample_id"],
        "epoch": base["epoch"],
        "target_attribute": target,
        "attribute_value_key": value_key,
        "scenario_key": str(md["scenario_key"]),
        "scenario_group": None if md.get("scenario_group") is None else str(md["scenario_group"]),
        "refused": bool(refused),
        "refusal_label": label,
        "n_extractors_ok": meta.get("n_extractors_ok"),
        "extraction_failed": bool(meta.get("extraction_failed", False)),
    }
    return row, profile, None


def read_stories_from_logs(inputs: Sequence[str | Path], task: str = TASK_NAME) -> Stories:
    """Build the stories frame from inspect eval logs of ``task``, streaming one sample at a time.

    - Logs of other tasks are ignored (listed in ``sources`` with ``used = False``).
    - Newest log first: a (model, sample id, epoch) is taken from the newest log where it succeeded; an
      errored copy counts as an ``error`` issue only when no log has a successful copy.
    - All logs must share one task version and one taxonomy fingerprint (sample metadata
      ``taxonomy_fingerprint``), else :class:`MixedInputsError` names the two files that disagree.
    """
    from stereoprobe.logs import find_logs, read_header

    paths = find_logs(inputs)
    if not paths:
        raise StoriesError(f"no eval logs found in {list(map(str, inputs))}")
    infos = []
    sources: list[dict[str, Any]] = []
    for p in paths:
        try:
            info = read_header(p)
        except Exception as exc:  # not an eval log (e.g. some other .json file)
            raise StoriesError(f"{p}: cannot read as an inspect eval log ({exc})") from exc
        if info.task != task:
            sources.append({"path": str(p), "kind": "log", "task": info.task, "used": False})
            continue
        infos.append(info)
    if not infos:
        raise StoriesError(f"none of the {len(paths)} eval logs is a '{task}' log")
    versions: dict[str, Path] = {}
    for info in infos:
        versions.setdefault(str(info.task_version), info.path)
    if len(versions) > 1:
        detail = ", ".join(f"version {v} ({p})" for v, p in versions.items())
        raise MixedInputsError(f"logs of different '{task}' task versions cannot be mixed: {detail}")
    # newest first; ties broken by path so the order is deterministic
    infos.sort(key=lambda i: (str(i.created), str(i.path)), reverse=True)

    acc = _Accumulator()
    done: set[tuple[str, str, int]] = set()
    failed: dict[tuple[str, str, int], dict[str, Any]] = {}
    fingerprint: tuple[str, Path] | None = None
    for info in infos:
        n_read = n_used = 0
        log_fp: str | None = None
        for s in iter_log_samples(info.path):
            n_read += 1
            where = f"{info.path}: sample {s.id!r} epoch {s.epoch}"
            fp = (s.metadata or {}).get("taxonomy_fingerprint")
            if fp is not None:
                if fingerprint is None:
                    fingerprint = (str(fp), info.path)
                elif str(fp) != fingerprint[0]:
                    raise MixedInputsError(
                        f"logs of different taxonomies cannot be mixed: {where} has taxonomy_fingerprint "
                        f"{fp}, {fingerprint[1]} has {fingerprint[0]}"
                    )
                log_fp = str(fp)
            key = (info.model, str(s.id), int(s.epoch))
            if key in done:
                continue
            row, profile, issue = _profile_row(info, s, where)
            if issue is not None:
                if issue["kind"] == "error":
                    failed.setdefault(key, issue)  # newest failure kept; cleared if an older log succeeded
                elif key not in failed:
                    done.add(key)
                    acc.issues.append(issue)
                continue
            done.add(key)
            failed.pop(key, None)
            acc.add(row, profile)
            n_used += 1
        sources.append(
            {
                "path": str(info.path),
                "kind": "log",
                "task": info.task,
                "used": True,
                "model": info.model,
                "status": info.status,
                "created": str(info.created),
                "task_version": str(info.task_version),
                "taxonomy_fingerprint": log_fp,
                "samples_read": n_read,
                "samples_used": n_used,
            }
        )
    for key, issue in failed.items():
        if key not in done:
            acc.issues.append(issue)
    frame = acc.frame()
    return Stories(frame=frame, attributes=acc.attributes, issues=acc.issues_frame(), sources=pd.DataFrame(sources))



def log_excerpts(
    logs: Sequence[Path], wanted: set[tuple[str, str, int]], cut: Callable[[str], str]
) -> dict[tuple[str, str, int], str]:
    """The (cut) story texts of the ``wanted`` (model, sample id, epoch) keys, newest log first."""
    from stereoprobe.logs import read_header

    out: dict[tuple[str, str, int], str] = {}
    infos = [i for i in (read_header(p) for p in logs) if i.task == TASK_NAME]
    infos.sort(key=lambda i: (str(i.created), str(i.path)), reverse=True)
    models = {k[0] for k in wanted}
    for info in infos:
        if info.model not in models:
            continue
        for s in iter_log_samples(info.path):
            key = (info.model, str(s.id), int(s.epoch))
            if key in wanted and key not in out and s.error is None and s.completion is not None:
                out[key] = cut(s.completion)
        if len(out) == len(wanted):
            break
    return out
