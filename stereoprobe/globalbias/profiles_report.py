"""``stereoprobe profiles``: profiles from logs or CSVs -> classification, ablation, top words, report."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from stereoprobe.globalbias import profiles as P
from stereoprobe.report.html import Section, write_report
from stereoprobe.tables import write_table


def profiles_from_logs(paths: Iterable[Path]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(profiles, per-sample parse outcomes) from inspect logs of ``globalbias_profiles``."""
    from stereoprobe.logs import error_message, iter_samples

    rows, outcomes = [], []
    for info, s in iter_samples(list(paths), task="globalbias_profiles"):
        sc = (s.get("scores") or {}).get("profile_parser")
        md = s.get("metadata") or {}
        by_name = {n["name"]: n for n in md.get("names", [])}
        if s.get("error") or sc is None:
            outcomes.append({"model": info.model, "id": s["id"], "parsed": False, "n_profiles": 0, "n_missing": len(by_name),
                             "n_unknown": 0, "error": error_message(s) if s.get("error") else "unscored"})
            continue
        v, smd = sc["value"], sc.get("metadata") or {}
        outcomes.append({"model": info.model, "id": s["id"], "parsed": bool(v["parsed"]), "n_profiles": int(v["n_profiles"]),
                         "n_missing": int(v["n_missing"]), "n_unknown": int(v["n_unknown"]), "error": sc.get("explanation")
                         if not v["parsed"] else ""})
        for p in smd.get("profiles", []):
            n = by_name[p["name"]]
            rows.append({**p, "personality_traits": tuple(p["personality_traits"]),
                         "negative_traits": tuple(p["negative_traits"]), "hobbies": tuple(p["hobbies"]),
                         "run_id": md.get("run_id"), "Ethnicity": n["ethnicity"], "Gender": n["gender"],
                         "Group": n["group"], "model": info.model})
    return pd.DataFrame(rows), pd.DataFrame(outcomes)


def run_profiles(inputs: Iterable[str | Path], out_dir: str | Path, n_permutations: int = 100, folds: int = 5,
                 ablation: bool = True, seed: int = 42, classifier: str = "svc") -> dict[str, pd.DataFrame]:
    csvs, logs = [], []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            csvs += sorted(p.rglob("*.csv"))
            logs += sorted(q for q in p.rglob("*") if q.suffix in (".eval", ".json"))
        elif p.suffix == ".csv":
            csvs.append(p)
        elif p.is_file():
            logs.append(p)
        else:
            raise FileNotFoundError(f"no such input: {p}")
    frames = [P.read_profiles_csv(c) for c in csvs]
    outcomes = pd.DataFrame()
    if logs:
        prof, outcomes = profiles_from_logs(logs)
        frames.append(prof)
    frames = [f for f in frames if len(f)]
    if not frames and not len(outcomes):
        raise ValueError(f"no profiles or profile logs found in {list(map(str, inputs))}")
    cols = ["model", "Group", "Ethnicity", "Gender"] + P.FEATURES
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
    for m in (outcomes["model"].unique() if len(outcomes) else []):
        if m not in set(df["model"]):  # a model whose every response failed to parse: report it, at chance
            df = pd.concat([df, pd.DataFrame([{"model": m}])], ignore_index=True)
    tables: dict[str, list[pd.DataFrame]] = {}
    for model, sub in df.groupby("model", sort=True):
        sub = sub.dropna(subset=["Group"]).reset_index(drop=True)
        res = {"classification": P.classification(sub, n_permutations, folds, seed, classifier),
               "top_words": P.top_words(sub)}
        if ablation:
            abl = []
            for name, col in P.TARGETS.items():
                if P.too_small(sub, col) is None:
                    abl.append(P.feature_ablation(sub, col, seed, classifier).assign(target=name))
            res["feature_ablation"] = pd.concat(abl, ignore_index=True) if abl else pd.DataFrame()
        for k, v in res.items():
            tables.setdefault(k, []).append(v.assign(model=model))
    combined = {k: pd.concat(v, ignore_index=True) for k, v in tables.items()}
    if len(outcomes):
        combined["parse_outcomes"] = outcomes
    out = Path(out_dir)
    for k, v in combined.items():
        first = ["model"] + [c for c in v.columns if c != "model"]
        write_table(v[first], out, k)
    _report(out / "report.html", combined, df)
    return combined


def _report(path: Path, t: dict[str, pd.DataFrame], df: pd.DataFrame) -> None:
    secs = []
    s = Section("Profiles", anchor="profiles")
    s.text(f"{len(df)} parsed profiles; groups: {df['Group'].nunique()}, models: {df['model'].nunique()}.")
    if "parse_outcomes" in t:
        o = t["parse_outcomes"]
        s.table(o.groupby("model").agg(requests=("id", "size"), parse_failures=("parsed", lambda x: int((~x).sum())),
                                       profiles=("n_profiles", "sum"), missing_names=("n_missing", "sum"),
                                       unknown_names=("n_unknown", "sum")).reset_index(),
                caption="parse outcomes (failures are counted, never dropped silently)")
    secs.append(s)
    c = Section("Distinguishability of groups from their profiles (paper Table 6)", anchor="svm")
    c.text("SVM accuracy at predicting the group of a profile's name (reference: SVC defaults, 70/30 stratified "
           "split, seed 42). Higher = profiles differ more between groups = more stereotyped. stereoprobe adds a "
           "label-permutation p-value against chance and a stratified cross-validated accuracy with a 95% Wilson "
           "interval.")
    c.table(t["classification"])
    secs.append(c)
    if "feature_ablation" in t and len(t["feature_ablation"]):
        a = Section("Leave-one-feature-out (paper Tables 7, 10, 11)", anchor="ablation")
        a.text("Change in accuracy (percentage points) when one feature group is removed; negative = the feature "
               "helps to tell the groups apart.")
        a.table(t["feature_ablation"])
        secs.append(a)
    w = Section("Top words by Jensen-Shannon divergence (paper Tables 12, 13)", anchor="words")
    w.text("Per feature, the values most over-represented in one group relative to all others, by their "
           "contribution to the Jensen-Shannon divergence (3 per group, top 10 per feature).")
    w.table(t["top_words"])
    secs.append(w)
    write_report(path, "GlobalBias: character profiles", secs,
                 subtitle="Generation probe (Siddique et al., EMNLP 2024), computed by stereoprobe")
