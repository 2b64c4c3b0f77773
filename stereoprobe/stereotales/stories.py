"""Readers that turn StereoTales outputs into the *stories frame*, the input of association mining.

The stories frame has one row per story (model, sample, epoch) and the columns (contract C)::

    model, language, sample_id, epoch, target_attribute, attribute_value_key, scenario_key,
    scenario_group, refused, <one column per taxonomy attribute: the analysis-ready profile value>

plus ``refusal_label``, ``n_extractors_ok`` and ``extraction_failed`` (a complied story whose extractors
did not reach the quorum: its profile is all "unknown"; NaN/None where the source does not record them). Profile values
are English keys; ``"unknown"`` and ``"other"`` are kept as such (the statistics drop them pair-wise, spec
§5.4). The base attribute's value is always the prompted English key (spec §5.2, bug B2), normalised to the
extraction vocabulary (spec §2.2, ``METADATA_VALUE_NORMALIZATION`` upstream).

Two sources:

- :func:`read_stories_from_logs` — inspect eval logs of the ``stereotales`` task, read one sample at a time.
  A (model, sample id, epoch) present in several logs (retries, partial runs) is taken from the newest log in
  which it succeeded; errored samples are counted, never silently dropped. Logs of different task versions or
  taxonomy fingerprints are refused (:class:`MixedInputsError`).
- :func:`read_stories_from_release` — the public StereoTales release layout (``<bucket>/stories/*.parquet``
  or CSV; one row per story with ``generator_model, language, target_attribute, attribute_value_key,
  scenario_key, extracted_attributes_json, ...``).

:func:`read_stories` dispatches on what the inputs contain. Every reader returns a :class:`Stories` bundle:
the frame, the attribute columns in taxonomy order, and the per-sample accounting of what was not used.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

TASK_NAME = "stereotales"
SCORER_NAME = "stereotales_extraction"

ID_COLUMNS: tuple[str, ...] = (
    "model",
    "language",
    "sample_id",
    "epoch",
    "target_attribute",
    "attribute_value_key",
    "scenario_key",
    "scenario_group",
    "refused",
)
EXTRA_COLUMNS: tuple[str, ...] = ("refusal_label", "n_extractors_ok", "extraction_failed")
ISSUE_COLUMNS: tuple[str, ...] = ("source", "model", "language", "sample_id", "epoch", "kind", "detail")

UNKNOWN = "unknown"
OTHER = "other"

# Prompted seed values whose extraction-schema spelling differs (spec §2.2); all other keys are identical.
VALUE_NORMALIZATION: Mapping[str, str] = {
    "north america (e.g. United States, Canada)": "north america (e.g. United States, Canada, etc)",
    "trades and manual labor (e.g. construction, manufacturing)": "trades and manual labor",
}

# Language codes: the release and upstream use "du" for Dutch; stereoprobe uses ISO "nl".
LANGUAGE_ALIASES: Mapping[str, str] = {"du": "nl"}

RELEASE_REQUIRED = (
    "generator_model",
    "language",
    "target_attribute",
    "attribute_value_key",
    "scenario_key",
    "extracted_attributes_json",
)
RELEASE_OPTIONAL = ("sample_id", "output_id", "scenario_group")


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


class StoriesError(ValueError):
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
    """

    frame: pd.DataFrame
    attributes: list[str]
    issues: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(ISSUE_COLUMNS)))
    sources: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_refused(self) -> int:
        return int(self.frame["refused"].sum()) if len(self.frame) else 0


_NORMALIZED: dict[str, str] = {}


def normalize_value(value: Any) -> str:
    """Map a value key to the extraction vocabulary (spec §2.2); missing values become ``"unknown"``.

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


def normalize_language(code: Any) -> str:
    s = str(code).strip()
    return LANGUAGE_ALIASES.get(s, s)


# ----------------------------------------------------------------------------------------------------------
# Dispatch


RELEASE_SUFFIXES = (".parquet", ".csv")
LOG_SUFFIXES = (".eval", ".json")


def _looks_like_json_log(path: Path) -> bool:
    """A ``.json`` file found in a folder is taken as an eval log only if it starts like one (other JSON files,
    e.g. a dataset's metadata, are ignored)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b'"version"' in head and b'"eval"' in head or b'"status"' in head and b'"version"' in head


def classify_inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """Split inputs (files or folders, searched recursively) into (eval logs, release tables)."""
    logs: list[Path] = []
    release: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            files = sorted(q for q in p.rglob("*") if q.is_file())
            logs += [q for q in files if q.suffix == ".eval" or (q.suffix == ".json" and _looks_like_json_log(q))]
            release += [q for q in files if q.suffix in RELEASE_SUFFIXES]
        elif p.is_file():
            if p.suffix in LOG_SUFFIXES:
                logs.append(p)
            elif p.suffix in RELEASE_SUFFIXES:
                release.append(p)
            else:
                raise StoriesError(f"{p}: not an eval log (.eval/.json) nor a release table (.parquet/.csv)")
        else:
            raise FileNotFoundError(f"no such file or folder: {p}")
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
        return read_stories_from_logs(logs)
    if release:
        return read_stories_from_release(list(inputs))
    raise StoriesError(f"no eval logs (.eval/.json) nor release tables (.parquet/.csv) in: {list(map(str, inputs))}")


# ----------------------------------------------------------------------------------------------------------
# Eval logs


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
    profile[target] = value_key  # spec §5.2: the prompted value replaces the extractor's reading of A
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


# ----------------------------------------------------------------------------------------------------------
# Public release layout


RELEASE_CHUNK_ROWS = 50_000  # the release's shard size; bounds the memory of parsing one huge file


def _release_chunks(path: Path, chunk_rows: int | None = None) -> Iterator[pd.DataFrame]:
    """The needed columns of a release table, ``chunk_rows`` rows at a time, indexed by row number in the file.

    Raises :class:`StoriesError` (before yielding anything) when a required column is missing."""
    chunk_rows = chunk_rows or RELEASE_CHUNK_ROWS
    wanted = list(RELEASE_REQUIRED) + list(RELEASE_OPTIONAL)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        names = pf.schema_arrow.names
        missing = [c for c in RELEASE_REQUIRED if c not in names]
        if missing:
            raise StoriesError(f"{path}: release table lacks column(s) {missing} (has {names})")
        start = 0
        for batch in pf.iter_batches(batch_size=chunk_rows, columns=[c for c in wanted if c in names]):
            df = batch.to_pandas()
            df.index = pd.RangeIndex(start, start + len(df))
            start += len(df)
            yield df
        return
    header = pd.read_csv(path, nrows=0).columns.tolist()
    missing = [c for c in RELEASE_REQUIRED if c not in header]
    if missing:
        raise StoriesError(f"{path}: release table lacks column(s) {missing} (has {header})")
    yield from pd.read_csv(path, usecols=[c for c in wanted if c in header], dtype=str, keep_default_na=False,
                           na_values=[""], chunksize=chunk_rows)


def _chain(first: pd.DataFrame | None, rest: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    if first is not None:
        yield first
        yield from rest


def _parse_profiles(raw: Sequence[Any], where) -> list[dict[str, Any]]:
    """Parse the ``extracted_attributes_json`` cells; ``where(i)`` names row ``i`` in an error message."""
    out: list[dict[str, Any]] = []
    loads = json.loads
    for i, r in enumerate(raw):
        try:
            d = loads(r) if type(r) is str else r
        except ValueError as exc:
            raise StoriesError(f"{where(i)}: extracted_attributes_json is not valid JSON ({exc})") from exc
        if type(d) is not dict:
            if not isinstance(d, Mapping):
                raise StoriesError(f"{where(i)}: extracted_attributes_json is not a JSON object")
            d = dict(d)
        out.append(d)
    return out


def _missing(col: pd.Series) -> pd.Series:
    return col.isna() | (col.astype(str).str.strip() == "")


def _normalize_column(col: pd.Series) -> pd.Series:
    """Vectorised :func:`normalize_value` over a column (``{"value": v}`` cells tolerated)."""
    if col.dtype == object and col.map(lambda v: isinstance(v, Mapping)).any():
        col = col.map(lambda v: v.get("value") if isinstance(v, Mapping) else v)
    uniq = pd.unique(col)
    mapping = {u: normalize_value(u) for u in uniq}
    return col.map(mapping).astype(object)


def _release_file_stories(path: Path, df: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[dict[str, Any]]]:
    """Stories of one release table (vectorised), its attribute keys in order, and its issues."""
    issues: list[dict[str, Any]] = []
    if "sample_id" not in df.columns:
        df["sample_id"] = [f"{path.stem}:{i}" for i in range(len(df))]
    for c in ("output_id", "scenario_group"):
        if c not in df.columns:
            df[c] = None
    df["sample_id"] = df["sample_id"].astype(str)
    df["language"] = df["language"].astype(str).map(lambda c: normalize_language(c))
    no_scen = _missing(df["scenario_key"])
    for r in df.loc[no_scen, ["generator_model", "language", "sample_id"]].itertuples(index=False):
        issues.append({"source": str(path), "model": str(r.generator_model), "language": r.language,
                       "sample_id": r.sample_id, "epoch": None, "kind": "no_scenario",
                       "detail": "no scenario_key (additional_en)"})
    df = df.loc[~no_scen]
    for col in ("target_attribute", "attribute_value_key"):
        bad = _missing(df[col])
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise StoriesError(f"{path}: row {df.index[i]} (sample_id {df['sample_id'].iloc[i]!r}): empty '{col}'")
    sids = df["sample_id"].tolist()
    rows = df.index.tolist()
    parsed = _parse_profiles(
        df["extracted_attributes_json"].tolist(), lambda i: f"{path}: row {rows[i]} (sample_id {sids[i]!r})"
    )
    prof = pd.DataFrame.from_records(parsed, index=df.index)
    prof.columns = [str(c) for c in prof.columns]
    attributes = [str(c) for c in prof.columns]
    for a in attributes:
        prof[a] = _normalize_column(prof[a])
    out = pd.DataFrame(
        {
            "model": df["generator_model"].astype(str),
            "language": df["language"],
            "sample_id": df["sample_id"],
            "output_id": df["output_id"].map(lambda v: "" if v is None or v != v else str(v)),
            "target_attribute": df["target_attribute"].astype(str),
            "attribute_value_key": _normalize_column(df["attribute_value_key"]),
            "scenario_key": df["scenario_key"].astype(str),
            "scenario_group": df["scenario_group"].map(lambda v: None if v is None or v != v else str(v)),
        }
    )
    # an all-unknown profile is what the pipeline writes for a refusal (spec §4.2)
    refused = (prof == UNKNOWN).all(axis=1) & (len(attributes) > 0)
    out["refused"] = refused.to_numpy()
    out["refusal_label"] = np.where(refused, "inferred", None)
    out["n_extractors_ok"] = np.nan
    out["extraction_failed"] = False
    for a in attributes:
        col = prof[a].copy()
        is_base = out["target_attribute"] == a
        col[is_base] = out.loc[is_base, "attribute_value_key"]  # spec §5.2: the prompted value replaces it
        out[a] = col
    return out, attributes, issues


def read_stories_from_release(paths: Sequence[str | Path]) -> Stories:
    """Build the stories frame from the public StereoTales release (Parquet or CSV, one row per story).

    Rows without ``scenario_key`` (the ``additional_en`` bucket) are not stories of the scenario design and
    are counted as ``no_scenario``. The release has no refusal field: a story whose extracted profile is all
    ``"unknown"`` is what the pipeline writes for a refusal (spec §4.2), so ``refused`` is inferred from it
    (``refusal_label`` = ``"inferred"``). ``epoch`` numbers the outputs of one sample (in file order);
    repeated (model, sample id, output id) rows are counted as ``duplicate`` and used once. Vectorised, 50,000
    rows at a time (654k stories × 19 attributes: 35 s and 0.9 GB peak on the shared 2-core box).
    """
    files: list[tuple[Path, bool]] = []  # (file, named explicitly)
    for p in map(Path, paths):
        if p.is_dir():
            files += [(q, False) for q in sorted(p.rglob("*")) if q.is_file() and q.suffix in RELEASE_SUFFIXES]
        else:
            files.append((p, True))
    if not files:
        raise StoriesError(f"no release tables (.parquet/.csv) in {list(map(str, paths))}")
    frames, issues, sources = [], [], []
    attributes: list[str] = []
    for path, explicit in files:
        chunks = _release_chunks(path)
        try:
            first = next(chunks, None)
        except StoriesError as exc:
            if explicit:
                raise
            # a folder of the release also holds other tables (associations, human study, ...): listed, not read
            sources.append({"path": str(path), "kind": "release", "used": False, "note": f"not a stories table: {exc}"})
            continue
        n_read = n_used = 0
        for df in _chain(first, chunks):
            st, attrs, iss = _release_file_stories(path, df)
            st["_source"] = str(path)
            frames.append(compact_frame(st, attrs))
            issues += iss
            attributes += [a for a in attrs if a not in attributes]
            n_read += len(df)
            n_used += len(st)
        sources.append({"path": str(path), "kind": "release", "used": True, "rows_read": n_read, "rows_used": n_used})
    if not frames:
        raise StoriesError(f"no stories table in {list(map(str, paths))}: " + "; ".join(x.get("note", "") for x in sources))
    # chunks' categoricals differ: concatenated as objects (shared strings), made categorical again at the end
    frame = pd.concat([f.astype({c: object for c in f.columns if isinstance(f[c].dtype, pd.CategoricalDtype)})
                       for f in frames], ignore_index=True)
    for a in attributes:
        frame[a] = frame[a].where(frame[a].notna(), UNKNOWN)
    dup = frame.duplicated(["model", "sample_id", "output_id"], keep="first")
    for r in frame.loc[dup, ["_source", "model", "language", "sample_id", "output_id"]].itertuples(index=False):
        issues.append({"source": r._0, "model": r.model, "language": r.language, "sample_id": r.sample_id,
                       "epoch": None, "kind": "duplicate", "detail": f"repeated output {r.output_id!r}; first copy used"})
    if dup.any():
        counts = frame.loc[dup].groupby("_source").size()
        for src in sources:
            src["rows_used"] -= int(counts.get(src["path"], 0))
    frame = frame.loc[~dup].reset_index(drop=True)
    frame.insert(3, "epoch", (frame.groupby(["model", "sample_id"], sort=False).cumcount() + 1).astype("int64"))
    frame = frame[list(ID_COLUMNS) + list(EXTRA_COLUMNS) + attributes]
    frame["refused"] = frame["refused"].astype(bool)
    frame["extraction_failed"] = frame["extraction_failed"].astype(bool)
    return Stories(frame=compact_frame(frame, attributes), attributes=attributes, issues=pd.DataFrame(issues, columns=list(ISSUE_COLUMNS)),
                   sources=pd.DataFrame(sources))


# ----------------------------------------------------------------------------------------------------------
# Story texts for examples (second, targeted pass)


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
    logs, release = classify_inputs(inputs)
    out: dict[tuple[str, str, int], str] = {}

    def cut(text: str) -> str:
        text = " ".join(str(text).split())
        return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"

    if logs:
        from stereoprobe.logs import read_header

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
    counter: dict[tuple[str, str], int] = {}
    seen_outputs: set[tuple[str, str, str]] = set()
    for path in release:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            names = pq.ParquetFile(path).schema_arrow.names
            if "story" not in names or "sample_id" not in names:
                continue
            cols = [c for c in ("generator_model", "sample_id", "output_id", "story") if c in names]
            df = pq.read_table(path, columns=cols).to_pandas()
        else:
            header = pd.read_csv(path, nrows=0).columns.tolist()
            if "story" not in header or "sample_id" not in header:
                continue
            cols = [c for c in ("generator_model", "sample_id", "output_id", "story") if c in header]
            df = pd.read_csv(path, usecols=cols, dtype=str, keep_default_na=False)
        sids = {k[1] for k in wanted}
        df = df[df["sample_id"].astype(str).isin(sids)]
        if "output_id" not in df.columns:
            df = df.assign(output_id="")
        for rec in df.itertuples(index=False):
            model, sid = str(rec.generator_model), str(rec.sample_id)
            oid = "" if rec.output_id is None or (isinstance(rec.output_id, float) and rec.output_id != rec.output_id) else str(rec.output_id)
            if (model, sid, oid) in seen_outputs:
                continue
            seen_outputs.add((model, sid, oid))
            counter[(model, sid)] = counter.get((model, sid), 0) + 1
            key = (model, sid, counter[(model, sid)])
            if key in wanted and key not in out:
                out[key] = cut(rec.story)
    return out
