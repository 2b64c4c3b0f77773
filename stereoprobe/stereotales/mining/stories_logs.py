"""The stories frame from inspect eval logs of the ``stereotales`` task, read one sample at a time."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.inputs import Progress, ReadStats, iter_samples, no_progress
from stereoprobe.logs import error_message, output_text
from stereoprobe.stereotales import contract as C
from stereoprobe.stereotales.contract import (EXTRA_COLUMNS, ID_COLUMNS, ISSUE_COLUMNS, SCORER_NAME, TASK_STORIES,
                                              UNKNOWN, normalize_language)
from stereoprobe.stereotales.mining.stories_frame import (
    MixedInputsError,
    Stories,
    StoriesError,
    compact_frame,
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
    return _SampleView(
        id=d.get("id"),
        epoch=int(d.get("epoch", 1)),
        metadata=d.get("metadata") or {},
        error=error_message(d),
        score_metadata={k: (v or {}).get("metadata") or {} for k, v in (d.get("scores") or {}).items()},
        completion=output_text(d),
    )


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


def _error_issue(error_id: str, task: str, message: str = "") -> dict[str, Any]:
    """An ``error`` issue row from an id of :attr:`stereoprobe.inputs.ReadStats.error_ids`
    (``"<task>/<model>/<sample id>#<epoch>"``); the language is the sample id's prefix (``en:age:...``)."""
    rest = error_id[len(task) + 1:] if error_id.startswith(task + "/") else error_id
    model, _, sid_epoch = rest.rpartition("/")
    sid, _, epoch = sid_epoch.rpartition("#")
    lang = sid.split(":", 1)[0] if ":" in sid and not sid.startswith("additional_") else ""
    return {"source": "", "model": model, "language": normalize_language(lang) if lang else "", "sample_id": sid,
            "epoch": int(epoch) if epoch.isdigit() else None, "kind": "error",
            "detail": message or "sample error in every log holding it (not scored; rerun with inspect eval-retry)"}


class _Sources:
    """Per input log: what was read and used (the ``input_sources`` table), and the one-taxonomy check."""

    def __init__(self, task: str, accept_versions: str | None = None) -> None:
        self.task = task
        self.accept_versions = accept_versions
        self.rows: dict[Path, dict[str, Any]] = {}
        self.runs: list[dict[str, str]] = []
        self.fingerprint: tuple[str, Path] | None = None

    def _check_versions(self, info: Any) -> None:
        """The one comparability rule (:func:`stereoprobe.leaderboard.versions.version_note`, as every command
        that compares runs applies it): logs whose task versions differ in N are refused in one line naming
        them, unless ``accept_versions`` gives the note; versions that differ in X only are comparable."""
        from stereoprobe.leaderboard.versions import version_note
        from stereoprobe.model_labels import model_label

        self.runs.append({"task": str(info.task).split("/")[-1], "task_version": str(info.task_version),
                          "model": model_label(str(info.model)), "folder": Path(info.path).name})
        try:
            version_note(self.runs, self.accept_versions, command="associations")
        except InputError as exc:
            raise MixedInputsError(str(exc)) from None

    def seen(self, info: Any) -> dict[str, Any]:
        row = self.rows.get(info.path)
        if row is None:
            self._check_versions(info)
            row = self.rows[info.path] = {
                "path": str(info.path), "kind": "log", "task": info.task, "used": True, "model": info.model,
                "status": info.status, "created": str(info.created), "task_version": str(info.task_version),
                C.META_FINGERPRINT: None, "samples_read": 0, "samples_used": 0,
            }
        return row

    def check_fingerprint(self, fp: Any, info: Any, where: str, row: dict[str, Any]) -> None:
        if fp is None:
            return
        if self.fingerprint is None:
            self.fingerprint = (str(fp), info.path)
        elif str(fp) != self.fingerprint[0]:
            raise MixedInputsError(
                f"logs of different taxonomies cannot be mixed: {where} has {C.META_FINGERPRINT} "
                f"{fp}, {self.fingerprint[1]} has {self.fingerprint[0]}"
            )
        row[C.META_FINGERPRINT] = str(fp)


class _RunLanguages:
    """The languages each log's run covers: its ``-T languages`` selection, else every language of the taxonomy
    it recorded (``taxonomy_source`` of the task metadata, loaded when it can be and its fingerprint is the
    samples'); None when neither is known (the story's language is then not checked)."""

    def __init__(self) -> None:
        self.by_log: dict[Path, frozenset[str] | None] = {}

    def of(self, info: Any, fingerprint: Any) -> frozenset[str] | None:
        if info.path not in self.by_log:
            self.by_log[info.path] = self._read(info, fingerprint)
        return self.by_log[info.path]

    @staticmethod
    def _read(info: Any, fingerprint: Any) -> frozenset[str] | None:
        chosen = info.task_args.get("languages")
        if isinstance(chosen, str) and chosen.strip() and chosen.strip() != "all":
            chosen = chosen.split(",")
        if isinstance(chosen, list) and chosen and all(isinstance(c, str) for c in chosen):
            return frozenset(normalize_language(c) for c in chosen)
        from stereoprobe.logs import read_eval_spec
        from stereoprobe.stereotales.taxonomy import load_taxonomy

        source = (read_eval_spec(info.path).get("metadata") or {}).get("taxonomy_source")
        if source is None:
            return None
        try:
            taxonomy = load_taxonomy(source, verify=False)
        except Exception:  # noqa: BLE001 - a taxonomy no longer at hand (moved folder, offline): not checked
            return None
        if fingerprint is not None and taxonomy.fingerprint() != str(fingerprint):
            return None
        return frozenset(normalize_language(c) for c in taxonomy.languages)


def _language_issue(row: dict[str, Any], info: Any, languages: frozenset[str] | None) -> dict[str, Any] | None:
    """A ``language_not_in_taxonomy`` issue for a story whose language the run does not cover (its extractions
    were read against no vocabulary of that language), else None."""
    if languages is None or row["language"] in languages:
        return None
    return {"source": str(info.path), "model": info.model, "language": row["language"], "sample_id": row["sample_id"],
            "epoch": row["epoch"], "kind": "language_not_in_taxonomy",
            "detail": f"language {row['language']!r} is not among the run's languages ({', '.join(sorted(languages))})"}


def read_stories_from_logs(inputs: Sequence[str | Path], task: str = TASK_STORIES,
                           progress: Progress = no_progress, accept_versions: str | None = None) -> Stories:
    """Build the stories frame from inspect eval logs of ``task``, streaming one sample at a time.

    Logs are read through :func:`stereoprobe.inputs.iter_samples`: files and folders (``inspect eval-set``
    folders included), one record per model x task arguments x sample id x epoch across all files, the newest
    complete record winning (an ``eval-retry`` log supersedes the interrupted original). Error samples are
    never scored; those without a complete copy anywhere are ``error`` issues. Logs of other tasks are
    listed in ``sources`` with ``used = False``. Logs of task versions that differ in N (``N-X``) are refused
    by the one comparability rule (:mod:`stereoprobe.leaderboard.versions`) unless ``accept_versions`` gives
    the user's note, and all logs must share one taxonomy fingerprint (sample metadata
    ``taxonomy_fingerprint``): else :class:`MixedInputsError` in one line names the files that disagree. A story in a language its run does not cover (``-T languages``, else the recorded
    taxonomy's languages) is a ``language_not_in_taxonomy`` issue, not analysed. ``progress``: the input
    layer's callback (:data:`stereoprobe.inputs.Progress`).
    """
    stats = ReadStats()
    acc = _Accumulator()
    src = _Sources(task, accept_versions)
    run_languages = _RunLanguages()
    try:
        for info, d in progress(iter_samples(inputs, task, stats=stats, string_ids=True), "reading StereoTales logs"):
            row_src = src.seen(info)
            s = _view(d)
            row_src["samples_read"] += 1
            where = f"{info.path}: sample {s.id!r} epoch {s.epoch}"
            src.check_fingerprint((s.metadata or {}).get(C.META_FINGERPRINT), info, where, row_src)
            row, profile, issue = _profile_row(info, s, where)
            if row is not None:
                fp = (s.metadata or {}).get(C.META_FINGERPRINT)
                issue = _language_issue(row, info, run_languages.of(info, fp))
            if issue is not None:
                acc.issues.append(issue)
                continue
            acc.add(row, profile)
            row_src["samples_used"] += 1
    except InputError as exc:
        if isinstance(exc, StoriesError):
            raise
        raise StoriesError(str(exc)) from exc
    for info_path in stats.files:
        if info_path not in src.rows:  # a log whose samples were all superseded or errored
            src.rows[info_path] = {"path": str(info_path), "kind": "log", "task": task, "used": True,
                                   "samples_read": 0, "samples_used": 0}
    messages = getattr(stats, "error_messages", {})  # newest error message per id (stereoprobe.inputs)
    acc.issues += [_error_issue(e, task, messages.get(e, "")) for e in stats.error_ids]
    sources = list(src.rows.values()) + [
        {"path": str(p), "kind": "log", "task": t, "used": False} for t, ps in stats.other_tasks.items() for p in ps
    ]
    return Stories(frame=acc.frame(), attributes=acc.attributes, issues=acc.issues_frame(),
                   sources=pd.DataFrame(sources), read_summary=stats.summary())


def log_excerpts(
    logs: Sequence[Path], wanted: set[tuple[str, str, int]], cut: Callable[[str], str]
) -> dict[tuple[str, str, int], str]:
    """The (cut) story texts of the ``wanted`` (model, sample id, epoch) keys, from the same records
    :func:`read_stories_from_logs` used (newest complete copy)."""
    out: dict[tuple[str, str, int], str] = {}
    for info, d in iter_samples(logs, TASK_STORIES, string_ids=True):
        key = (info.model, str(d.get("id")), int(d.get("epoch") or 1))
        if key in wanted and key not in out:
            text = output_text(d)
            if text is not None:
                out[key] = cut(text)
    return out
