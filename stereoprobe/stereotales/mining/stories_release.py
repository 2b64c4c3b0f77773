"""The stories frame from the public StereoTales release (``<bucket>/stories/*.parquet`` or CSV; the layout
written by Giskard-AI/stereotales-pipeline ``scripts/export_run_outputs_to_stereotales.py``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stereoprobe.inputs import Progress, no_progress, walk_files
from stereoprobe.model_labels import nfc
from stereoprobe.stereotales.contract import (EXTRA_COLUMNS, ID_COLUMNS, ISSUE_COLUMNS, MAX_ATTRIBUTES, UNKNOWN,
                                              normalize_language)
from stereoprobe.stereotales.mining.stories_frame import (
    RELEASE_SUFFIXES,
    Stories,
    StoriesError,
    compact_frame,
    normalize_value,
)
from stereoprobe.stereotales.mining.release_columns import Coded, coded_frame, join_coded, map_values, profile_codes

RELEASE_REQUIRED = (
    "generator_model",
    "language",
    "target_attribute",
    "attribute_value_key",
    "scenario_key",
    "extracted_attributes_json",
)
RELEASE_OPTIONAL = ("sample_id", "output_id", "scenario_group")
STORY = "story"


RELEASE_CHUNK_ROWS = 50_000  # the release's shard size; bounds the memory of parsing one huge file


def _release_chunks(path: Path, chunk_rows: int | None = None) -> Iterator[pd.DataFrame]:
    """The needed columns of a release table, ``chunk_rows`` rows at a time, indexed by row number in the file.

    Raises :class:`StoriesError` naming the file when it cannot be read (not UTF-8, empty, not a CSV or
    Parquet file) or a required column is missing (before yielding anything)."""
    try:
        yield from _chunks(path, chunk_rows or RELEASE_CHUNK_ROWS)
    except StoriesError:
        raise
    except UnicodeDecodeError as exc:
        raise StoriesError(f"{path}: not UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r} at position "
                           f"{exc.start})") from exc
    except pd.errors.EmptyDataError as exc:
        raise StoriesError(f"{path}: empty file (expected a header row with {', '.join(RELEASE_REQUIRED)})") from exc
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        raise StoriesError(f"{path}: cannot read as a release table ({' '.join(str(exc).split())})") from exc


def _wanted(names: Sequence[str]) -> list[str]:
    """The columns read from a release table with ``names``: the required and optional ones, and the story
    text when there is no ``sample_id`` (rows are then told apart by their content, story included)."""
    extra = [STORY] if "sample_id" not in names and STORY in names else []
    return [c for c in (*RELEASE_REQUIRED, *RELEASE_OPTIONAL, *extra) if c in names]


def _chunks(path: Path, chunk_rows: int) -> Iterator[pd.DataFrame]:
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
        except pa.ArrowException as exc:
            raise StoriesError(f"{path}: not a readable Parquet file ({exc})") from exc
        names = pf.schema_arrow.names
        missing = [c for c in RELEASE_REQUIRED if c not in names]
        if missing:
            raise StoriesError(f"{path}: release table lacks column(s) {missing} (has {names})")
        start = 0
        for batch in pf.iter_batches(batch_size=chunk_rows, columns=_wanted(names)):
            df = batch.to_pandas()
            df.index = pd.RangeIndex(start, start + len(df))
            start += len(df)
            yield df
        return
    header = pd.read_csv(path, nrows=0).columns.tolist()
    missing = [c for c in RELEASE_REQUIRED if c not in header]
    if missing:
        raise StoriesError(f"{path}: release table lacks column(s) {missing} (has {header})")
    yield from pd.read_csv(path, usecols=_wanted(header), dtype=str, keep_default_na=False,
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


def _nested(v: Any) -> bool:
    """A list-like or object cell where one value is expected (a Parquet list cell reads as an array)."""
    if isinstance(v, Mapping):
        v = v.get("value")
    return isinstance(v, (list, tuple, set, dict, np.ndarray))


def _require_scalars(df: pd.DataFrame, columns: Sequence[str], where) -> None:
    """:class:`StoriesError` naming the first row whose cell in one of ``columns`` holds several values
    (``where(i)`` names row ``i``)."""
    for col in columns:
        if col in df.columns and df[col].dtype == object:
            bad = df[col].map(_nested).to_numpy(dtype=bool)
            if bad.any():
                i = int(bad.argmax())
                raise StoriesError(f"{where(i)}: {col!r} holds {type(df[col].iloc[i]).__name__} "
                                   f"{str(df[col].iloc[i])[:60]!s}, expected one value")


def _missing(col: pd.Series) -> pd.Series:
    return col.isna() | (col.astype(str).str.strip() == "")


def _normalize_column(col: pd.Series) -> pd.Series:
    """Vectorised :func:`normalize_value` over a column (``{"value": v}`` cells tolerated)."""
    if col.dtype == object and col.map(lambda v: isinstance(v, Mapping)).any():
        col = col.map(lambda v: v.get("value") if isinstance(v, Mapping) else v)
    uniq = pd.unique(col)
    mapping = {u: normalize_value(u) for u in uniq}
    return col.map(mapping).astype(object)


def _content_ids(df: pd.DataFrame) -> list[str]:
    """Sample ids of a release table without ``sample_id``: a digest of the row's content (every column read,
    the story text included), so that an exact repeat of a row, in this file or another, is a duplicate."""
    import hashlib

    def text(v: Any) -> str:
        return "" if v is None or (isinstance(v, float) and v != v) else str(v)

    columns = [[text(v) for v in df[c].tolist()] for c in sorted(df.columns)]
    return [f"row-{hashlib.sha1(chr(31).join(row).encode('utf-8')).hexdigest()[:16]}" for row in zip(*columns)]


def _profiles_by_row(path: Path, raw: list[Any], index: pd.Index, sids: list[str]) -> pd.DataFrame:
    """The profiles frame parsed row by row (any JSON the reader accepts), each attribute normalised; errors
    name the row."""
    rows = index.tolist()
    parsed = _parse_profiles(raw, lambda i: f"{path}: row {rows[i]} (sample_id {sids[i]!r})")
    _check_keys(path, {k for d in parsed for k in d})
    prof = pd.DataFrame.from_records(parsed, index=index)
    prof.columns = [str(c) for c in prof.columns]
    _require_scalars(prof, list(prof.columns), lambda i: f"{path}: row {rows[i]} (sample_id {sids[i]!r}): "
                                                         "extracted_attributes_json attribute")
    for a in prof.columns:
        prof[a] = _normalize_column(prof[a])
    return prof


def _check_keys(path: Path, keys: set[Any]) -> None:
    if len(keys) > MAX_ATTRIBUTES:  # every ordered pair is tested: 10,000 keys would be 10^8 tests (hours)
        raise StoriesError(f"{path}: the stories' extracted_attributes_json use {len(keys):,} attribute keys "
                           f"(e.g. {', '.join(sorted(map(str, keys))[:3])}); association mining tests every pair, "
                           f"so at most {MAX_ATTRIBUTES} are accepted (the paper's release has 19)")


def _release_file_stories(path: Path, df: pd.DataFrame
                          ) -> tuple[pd.DataFrame, dict[str, Coded], list[dict[str, Any]]]:
    """Stories of one release table (vectorised): the frame without the attribute columns, the attribute
    columns (in order of first appearance) as codes, and its issues."""
    issues: list[dict[str, Any]] = []
    _require_scalars(df, [c for c in (*RELEASE_REQUIRED, *RELEASE_OPTIONAL) if c != "extracted_attributes_json"],
                     lambda i: f"{path}: row {df.index[i]}")
    if "sample_id" not in df.columns:  # a story is its content: an exact repeat gets the same id (a duplicate)
        df["sample_id"] = _content_ids(df)
        df["output_id"] = None
    for c in ("output_id", "scenario_group"):
        if c not in df.columns:
            df[c] = None
    df["sample_id"] = df["sample_id"].astype(str)
    no_lang = _missing(df["language"])
    for r in df.loc[no_lang, ["generator_model", "sample_id"]].itertuples(index=False):
        issues.append({"source": str(path), "model": nfc(str(r.generator_model)), "language": "",
                       "sample_id": r.sample_id, "epoch": None, "kind": "no_language", "detail": "empty 'language'"})
    df = df.loc[~no_lang]
    df["language"] = map_values(df["language"].astype(str), normalize_language)
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
    prof = profile_codes(df["extracted_attributes_json"])  # columnar; None: parsed row by row
    if prof is None:
        prof = coded_frame(_profiles_by_row(path, df["extracted_attributes_json"].tolist(), df.index,
                                            df["sample_id"].tolist()))
    else:
        _check_keys(path, set(prof))
    out = pd.DataFrame(
        {
            "model": map_values(df["generator_model"].astype(str), nfc),  # one label per model (NFC)
            "language": df["language"],
            "sample_id": df["sample_id"],
            "output_id": df["output_id"].map(lambda v: "" if v is None or v != v else str(v)),
            "target_attribute": df["target_attribute"].astype(str),
            "attribute_value_key": _normalize_column(df["attribute_value_key"]),
            "scenario_key": df["scenario_key"].astype(str),
            "scenario_group": df["scenario_group"].map(lambda v: None if v is None or v != v else str(v)),
        }
    )
    out["refused"], values = _with_prompted(prof, out["target_attribute"], out["attribute_value_key"])
    out["refusal_label"] = np.where(out["refused"], "inferred", None)
    out["n_extractors_ok"] = np.nan
    out["extraction_failed"] = False
    return out, values, issues


def _with_prompted(prof: dict[str, Coded], target: pd.Series, prompted: pd.Series) -> tuple[np.ndarray, dict[str, Coded]]:
    """(refused, the attribute columns with the prompted value in each story's base attribute, as upstream).

    An all-unknown profile is what the pipeline writes for a refusal (flare attribute_extraction/scorer.py)."""
    refused = np.full(len(target), len(prof) > 0)
    t_codes, t_names = pd.factorize(target.to_numpy(dtype=object))
    p_codes, p_names = pd.factorize(prompted.to_numpy(dtype=object))
    p_values = np.asarray(p_names, dtype=object)
    where = {str(name): k for k, name in enumerate(t_names)}
    values: dict[str, Coded] = {}
    for a, c in prof.items():
        refused &= (c.values == UNKNOWN)[c.codes]
        if a in where:
            is_base = t_codes == where[a]
            c = Coded(np.where(is_base, len(c.values) + p_codes, c.codes), np.concatenate([c.values, p_values]))
        values[a] = c
    return refused, values


def read_stories_from_release(paths: Sequence[str | Path], progress: Progress = no_progress) -> Stories:
    """Build the stories frame from the public StereoTales release (Parquet or CSV, one row per story).

    Rows without ``scenario_key`` (the ``additional_en`` bucket) are not stories of the scenario design and
    are counted as ``no_scenario``. The release has no refusal field: a story whose extracted profile is all
    ``"unknown"`` is what the pipeline writes for a refusal (flare ``attribute_extraction/scorer.py``), so ``refused`` is inferred from it
    (``refusal_label`` = ``"inferred"``). ``epoch`` numbers the outputs of one sample (in file order);
    repeated (model, sample id, output id) rows are counted as ``duplicate`` and used once; a table without
    ``sample_id`` names each row by its content (story text included), so an exact repeat is a ``duplicate``
    too. Rows with an empty ``language`` are counted as ``no_language``, not analysed. Columnar, 50,000
    rows at a time: the profiles' JSON decoded by Arrow's JSON reader, values normalised once per distinct
    value (:mod:`.release_columns`; cells Arrow would read otherwise are parsed row by row).
    """
    files: list[tuple[Path, bool]] = []  # (file, named explicitly)
    for p in map(Path, paths):
        if p.is_dir():
            files += [(q, False) for q in walk_files(p) if q.suffix in RELEASE_SUFFIXES]
        else:
            files.append((p, True))
    if not files:
        raise StoriesError(f"no release tables (.parquet/.csv) in {list(map(str, paths))}")
    frames, issues, sources = [], [], []
    coded: list[tuple[int, dict[str, Coded]]] = []  # each chunk's attribute columns
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
        for df in progress(_chain(first, chunks), f"reading {path.name} (chunks of {RELEASE_CHUNK_ROWS:,} rows)"):
            st, values, iss = _release_file_stories(path, df)
            st["_source"] = str(path)
            frames.append(st)
            coded.append((len(st), values))
            issues += iss
            attributes += [a for a in values if a not in attributes]
            n_read += len(df)
            n_used += len(st)
        sources.append({"path": str(path), "kind": "release", "used": True, "rows_read": n_read, "rows_used": n_used})
    if not frames:
        raise StoriesError(_no_stories(paths, sources))
    frame = pd.concat(frames, ignore_index=True)  # the attribute columns join as categoricals, after the repeats
    dup = frame.duplicated(["model", "sample_id", "output_id"], keep="first")
    for r in frame.loc[dup, ["_source", "model", "language", "sample_id", "output_id"]].itertuples(index=False):
        issues.append({"source": r._0, "model": r.model, "language": r.language, "sample_id": r.sample_id,
                       "epoch": None, "kind": "duplicate",
                       "detail": f"repeated output {r.output_id!r}; first copy used" if r.output_id
                       else "exact repeat of an earlier row; first copy used"})
    if dup.any():
        counts = frame.loc[dup].groupby("_source").size()
        for src in sources:
            src["rows_used"] -= int(counts.get(src["path"], 0))
    frame = frame.loc[~dup].reset_index(drop=True)
    frame.insert(3, "epoch", (frame.groupby(["model", "sample_id"], sort=False).cumcount() + 1).astype("int64"))
    frame = pd.concat([frame, pd.DataFrame(join_coded(coded, attributes, ~dup.to_numpy()), columns=attributes)], axis=1)
    frame = frame[list(ID_COLUMNS) + list(EXTRA_COLUMNS) + attributes]
    frame["refused"] = frame["refused"].astype(bool)
    frame["extraction_failed"] = frame["extraction_failed"].astype(bool)
    return Stories(frame=compact_frame(frame, attributes), attributes=attributes, issues=pd.DataFrame(issues, columns=list(ISSUE_COLUMNS)),
                   sources=pd.DataFrame(sources))



def release_excerpts(
    release: Sequence[Path], wanted: set[tuple[str, str, int]], cut: Callable[[str], str]
) -> dict[tuple[str, str, int], str]:
    """The (cut) story texts of the ``wanted`` (model, sample id, epoch) keys from release tables; ``epoch``
    numbers the distinct outputs of a sample in file order, as :func:`read_stories_from_release` does."""
    out: dict[tuple[str, str, int], str] = {}
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


def _no_stories(paths: Sequence[str | Path], sources: list[dict]) -> str:
    """The line for inputs without a stories table; for a post-processing output folder (its
    ``run_info.json`` beside the tables), it says so and points at the logs it was built from."""
    from stereoprobe.report.run_info import read_run_info

    for p in map(Path, paths):
        if p.is_dir() and (p / "run_info.json").is_file():
            info = read_run_info(p)
            logs = [str(i) for i in info["inputs"]][:3]
            hint = f" (built from {', '.join(logs)}: give those)" if logs else " (give the eval logs it was built from)"
            return (f"{p}: this is the output folder of a stereoprobe command (run_info.json, "
                    f"{info['probe'] or 'tables'}), not StereoTales logs or a stories table{hint}")
    return f"no stories table in {list(map(str, paths))}: " + "; ".join(x.get("note", "") for x in sources)
