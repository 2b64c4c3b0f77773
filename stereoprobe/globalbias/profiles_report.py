"""``stereoprobe profiles``' I/O: profiles read from logs or CSVs (:func:`read_profiles`), the APX scores table, and the
tables, ``run_info.json`` and report written (:func:`write_profiles`); the statistics are :mod:`.profiles_compute`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from stereoprobe import inputs as I
from stereoprobe.errors import InputError
from stereoprobe.globalbias import profiles as P
from stereoprobe.globalbias.contract import PROFILE_SCORER, RUN_INFO_PROFILES, TASK_PROFILES
from stereoprobe.globalbias.profiles_compute import ProfilesResult
from stereoprobe.report.html import Section, files_html, write_report
from stereoprobe.report.run_info import write_run_info
from stereoprobe.tables import write_table

FILE_DESCRIPTIONS = {
    "parse_outcomes": "one row per profile request: parsed or not (with the error), profiles, missing and unknown "
                      "names",
    "classification": "per model and target: SVM accuracy, chance, majority rate, permutation p-value (paper "
                      "Table 6)",
    "predictions": "the held-out split's true and predicted group per profile",
    "feature_ablation": "accuracy change when one feature group is left out (paper Tables 7, 10, 11)",
    "top_words": "per feature and group: the values with the largest Jensen-Shannon contribution (paper Tables "
                 "12, 13)",
    "religion_consistency": "top religion words of the profiles against the APX flags (paper Table 8)",
}


def _model_first(df: pd.DataFrame) -> pd.DataFrame:
    """The column order of the written tables: ``model`` first."""
    return df[["model"] + [c for c in df.columns if c != "model"]] if "model" in df.columns else df


def profiles_from_logs(paths: Iterable[Path], stats: I.ReadStats | None = None, *,
                       progress: I.Progress = I.no_progress) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(profiles, per-sample parse outcomes) from inspect logs of ``globalbias_profiles`` (one record per
    model x sample x epoch across all logs: a retry supersedes its interrupted original). Error samples that
    no log completed are parse outcomes with their error (``stats.error_ids``). ``progress``: the input
    layer's progress callback (:data:`stereoprobe.inputs.Progress`; default: silent)."""
    stats = stats if stats is not None else I.ReadStats()
    rows, outcomes = [], []
    for info, s in progress(I.iter_samples(list(paths), task=TASK_PROFILES, stats=stats), "profiles: reading logs"):
        sc = (s.get("scores") or {}).get(PROFILE_SCORER)
        md = s.get("metadata") or {}
        by_name = {n["name"]: n for n in md.get("names", [])}
        if sc is None:
            outcomes.append({"model": info.model, "id": s["id"], "parsed": False, "n_profiles": 0,
                             "n_missing": len(by_name), "n_unknown": 0, "error": "unscored"})
            continue
        where = f"{info.path}: sample {s['id']!r}"
        try:
            v, smd = sc["value"], sc.get("metadata") or {}
            outcomes.append({"model": info.model, "id": s["id"], "parsed": bool(v["parsed"]),
                             "n_profiles": int(v["n_profiles"]), "n_missing": int(v["n_missing"]),
                             "n_unknown": int(v["n_unknown"]), "error": sc.get("explanation") if not v["parsed"] else ""})
            for p in smd.get("profiles", []):
                n = by_name.get(p["name"])
                if n is None:  # the scorer keeps only requested names: an edited or foreign log
                    raise InputError(f"{where}: score metadata holds a profile for {str(p['name'])[:80]!r}, a name "
                                     f"the sample never requested (requested: {', '.join(sorted(by_name))[:200]})")
                rows.append({**p, "personality_traits": tuple(p["personality_traits"]),
                             "negative_traits": tuple(p["negative_traits"]), "hobbies": tuple(p["hobbies"]),
                             "run_id": md.get("run_id"), "Ethnicity": n["ethnicity"], "Gender": n["gender"],
                             "Group": n["group"], "model": info.model})
        except InputError:
            raise
        except KeyError as e:
            raise InputError(f"{where}: the score, a profile or a requested name lacks the field {e}") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise InputError(f"{where}: a profile field has the wrong type ({' '.join(str(e).split())[:120]})") from None
    for ident in stats.error_ids:  # "<task>/<model>/<id>#<epoch>"
        _, rest = ident.split("/", 1)
        model, sid = rest.rsplit("/", 1)
        outcomes.append({"model": model, "id": sid.rsplit("#", 1)[0], "parsed": False, "n_profiles": 0,
                         "n_missing": 0, "n_unknown": 0, "error": "error sample (no response)"})
    return pd.DataFrame(rows), pd.DataFrame(outcomes)


def _inputs(inputs: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """(profile tables, logs), split once by the input layer (:func:`stereoprobe.inputs.partition`)."""
    part = I.partition(inputs, ("logs", "tables"), what="profiles inputs")
    return part.tables, part.logs


class ProfilesRead(NamedTuple):
    """What :func:`read_profiles` read: one row per parsed profile, the per-request parse outcomes, the log
    statistics (None without logs) and the inputs."""

    profiles: pd.DataFrame
    outcomes: pd.DataFrame
    log_stats: I.ReadStats | None
    sources: list[str | Path]


def read_profiles(inputs: Iterable[str | Path], *, progress: I.Progress = I.no_progress) -> ProfilesRead:
    """Profiles from logs of ``globalbias_profiles`` and profile tables; one line names inputs that hold none.
    ``progress``: reports the log reading (:data:`stereoprobe.inputs.Progress`; default: silent)."""
    sources = list(inputs)
    csvs, logs = _inputs(sources)
    frames = [P.read_profiles_csv(c) for c in csvs]
    outcomes = pd.DataFrame()
    stats = None
    if logs:
        stats = I.ReadStats()
        prof, outcomes = profiles_from_logs(logs, stats, progress=progress)
        frames.append(prof)
    frames = [f for f in frames if len(f)]
    if not frames and not len(outcomes):
        raise InputError(f"no profiles or profile logs found in {', '.join(map(str, sources))}")
    profiles = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return ProfilesRead(profiles, outcomes, stats, sources)


def read_apx_scores(path: str | Path) -> pd.DataFrame:
    """The ``bias_scores`` table of ``stereoprobe globalbias`` (the file, or the output folder holding it)."""
    p = Path(path)
    if p.is_dir():
        p = p / "bias_scores.csv"
    return I.read_table(p, ["group", "descriptor", "score", "flagged"], what="GlobalBias bias_scores table")


def write_profiles(result: ProfilesResult, out_dir: str | Path) -> Path:
    """Write the tables (CSV + Parquet, ``model`` first), ``run_info.json`` and ``report.html`` of ``result``
    into ``out_dir`` (created); ``result.files`` lists the table files. Returns ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    for k, v in result.tables.items():
        first = ["model"] + [c for c in v.columns if c != "model"]
        csv = write_table(v[first], out, k)
        files += [csv, csv.with_suffix(".parquet")]
    result.files = files
    write_run_info(out, probe=RUN_INFO_PROFILES,
                   models=sorted(map(str, result.profiles["model"].dropna().unique())),
                   settings=result.settings, inputs=result.sources)
    _report(out / "report.html", result)
    return out


def _report(path: Path, result: ProfilesResult) -> None:
    t, df = result.tables, result.profiles
    base = path.parent.resolve()  # links relative to the page, also for a relative out folder (the Python API)

    def tfiles(name: str) -> list[Path]:
        return [base / f"{name}.csv", base / f"{name}.parquet"]

    secs = []
    s = Section("Profiles", anchor="profiles")
    n_prof = int(df["Group"].notna().sum()) if "Group" in df.columns else 0
    s.text(f"{n_prof} parsed profiles with a known group; groups: {df['Group'].nunique()}, "
           f"models: {df['model'].nunique()}; identical repeated profiles dropped as the reference: "
           f"{sum(result.duplicates_dropped.values())}."
           + (f" Logs: {result.log_stats.summary()}." if result.log_stats is not None else ""))
    if "parse_outcomes" in t:
        o = t["parse_outcomes"]
        s.table(o.groupby("model").agg(requests=("id", "size"), parse_failures=("parsed", lambda x: int((~x).sum())),
                                       profiles=("n_profiles", "sum"), missing_names=("n_missing", "sum"),
                                       unknown_names=("n_unknown", "sum")).reset_index(),
                caption="parse outcomes (failures are counted, never dropped silently)",
                files=tfiles("parse_outcomes"), base=base)
    secs.append(s)
    c = Section("Distinguishability of groups from their profiles (paper Table 6)", anchor="svm")
    c.text("SVM accuracy at predicting the group of a profile's name (reference: SVC defaults, 70/30 stratified "
           "split, seed 42). Higher = profiles differ more between groups = more stereotyped. stereoprobe adds a "
           "label-permutation p-value against chance and a stratified cross-validated accuracy with a 95% Wilson "
           "interval.")
    if len(t["classification"]):
        c.table(_model_first(t["classification"]), files=tfiles("classification"), base=base)
    else:
        c.empty("No classification: no model has enough parsed profiles per group.")
    secs.append(c)
    if "feature_ablation" in t and len(t["feature_ablation"]):
        a = Section("Leave-one-feature-out (paper Tables 7, 10, 11)", anchor="ablation")
        a.text("Change in accuracy (percentage points) when one feature group is removed; negative = the feature "
               "helps to tell the groups apart. As the reference, both accuracies are rounded to 3 decimals "
               "before the difference (--exact: unrounded).")
        a.table(_model_first(t["feature_ablation"]), files=tfiles("feature_ablation"), base=base)
        secs.append(a)
    w = Section("Top words by Jensen-Shannon divergence (paper Tables 12, 13)", anchor="words")
    w.text("Per feature, the values that set one group apart from all others, by their contribution to the "
           "Jensen-Shannon divergence (3 per group, top 10 per feature). As in the reference code, a value can "
           "rank high because the group uses it less than the others (direction -1); "
           "--over-represented-only keeps the values used more by the group (direction +1).")
    if len(t["top_words"]):
        w.table(_model_first(t["top_words"]), files=tfiles("top_words"), base=base)
    else:
        w.empty("No top words: the profiles hold too few values per group and feature (or every response "
                "failed to parse) for a Jensen-Shannon comparison.")
        w.raw(files_html(tfiles("top_words"), base))
    secs.append(w)
    if "religion_consistency" in t:
        r = Section("Religion: generation vs APX (paper Table 8)", anchor="religion")
        rc = t["religion_consistency"]
        if len(rc):
            r.text(f"{int(rc['agrees'].sum())} of {len(rc)} (word, group) pairs of the generated profiles' top "
                   "religion words agree with APX: the group is flagged for the matching religion descriptors, or "
                   "is their lowest-scoring group.")
            r.table(_model_first(rc), files=tfiles("religion_consistency"), base=base)
        else:
            r.empty("No religion word is among the profiles' top words, so there is nothing to compare.")
        secs.append(r)
    f = Section("Files", anchor="files")
    f.files([Path(p).resolve() for p in result.files], base=base, descriptions=FILE_DESCRIPTIONS)
    secs.append(f)
    write_report(path, "GlobalBias: character profiles", secs,
                 subtitle="Generation probe (Siddique et al., EMNLP 2024), computed by stereoprobe")
