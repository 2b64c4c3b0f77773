"""``stereoprobe profiles``' statistics over profiles already read: per model the SVM distinguishability, the
leave-one-feature-out ablation, the Jensen-Shannon top words and the religion consistency with APX (nothing is
read or written here: :mod:`.profiles_report` reads and writes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from stereoprobe import inputs as I
from stereoprobe.globalbias import profiles as P
from stereoprobe.globalbias.consistency import religion_consistency
from stereoprobe.globalbias.options import ProfilesOptions

__all__ = ["ProfilesResult", "compute_profiles"]


@dataclass
class ProfilesResult:
    """What :func:`compute_profiles` computed: tables by name, the profiles read and the log statistics;
    ``settings`` and ``sources`` go to ``run_info.json``; ``files``: the table files :func:`~stereoprobe.globalbias.profiles_report.write_profiles`
    wrote."""

    tables: dict[str, pd.DataFrame]
    profiles: pd.DataFrame
    log_stats: I.ReadStats | None = None
    files: list[Path] = field(default_factory=list)
    duplicates_dropped: dict[str, int] = field(default_factory=dict)
    settings: dict[str, object] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The console line."""
        parsed = self.profiles  # a model whose responses all failed to parse has one all-NaN placeholder row
        if "Group" in parsed.columns:
            parsed = parsed[parsed["Group"].notna()]
        line = f"{len(parsed)} parsed profile(s) of {self.profiles['model'].nunique()} model(s)"
        if sum(self.duplicates_dropped.values()):
            line += f" ({sum(self.duplicates_dropped.values())} duplicate profile(s) dropped)"
        if self.log_stats is not None and self.log_stats.files:
            line += f" from {self.log_stats.summary()}"
        return line


def _with_unparsed_models(profiles: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    """``profiles`` with one all-NaN row for each model whose every response failed to parse (reported, at
    chance)."""
    cols = ["model", "Group", "Ethnicity", "Gender"] + P.FEATURES
    df = profiles if len(profiles) else pd.DataFrame(columns=cols)
    for m in (outcomes["model"].unique() if len(outcomes) else []):
        if m not in set(df["model"]):
            df = pd.concat([df, pd.DataFrame([{"model": m}])], ignore_index=True)
    return df


def _drop_duplicates(df: pd.DataFrame, keep: bool) -> tuple[pd.DataFrame, dict[str, int]]:
    """Per model, identical repeated profile rows dropped as the reference does (unless ``keep``), and how many."""
    dropped: dict[str, int] = {}
    kept = []
    for model, sub in df.groupby("model", sort=True):
        if not keep:
            sub, dropped[str(model)] = P.drop_duplicate_profiles(sub)
        kept.append(sub)
    return (pd.concat(kept, ignore_index=True) if kept else df), dropped


def _model_tables(sub: pd.DataFrame, o: ProfilesOptions) -> dict[str, pd.DataFrame]:
    """One model's classification, top words, held-out predictions and (``o.ablation``) feature ablation."""
    res = {"classification": P.classification(sub, o.n_permutations, o.folds, o.seed, o.classifier),
           "top_words": P.top_words(sub, over_represented_only=o.over_represented_only),
           "predictions": P.split_predictions(sub, o.seed, o.classifier)}
    if o.ablation:
        abl = [P.feature_ablation(sub, col, o.seed, o.classifier, o.faithful).assign(target=name)
               for name, col in P.TARGETS.items() if P.too_small(sub, col) is None]
        res["feature_ablation"] = pd.concat(abl, ignore_index=True) if abl else pd.DataFrame()
    return res


def _religion_consistency(top: pd.DataFrame | None, apx: pd.DataFrame) -> pd.DataFrame:
    """Per model, the profiles' top religion words against the APX flags (paper Table 8)."""
    top = top if top is not None else pd.DataFrame(columns=["model", "feature", "word", "group", "direction"])
    parts = [religion_consistency(sub, apx).assign(model=m) for m, sub in top.groupby("model", sort=True)]
    return pd.concat(parts, ignore_index=True) if parts else religion_consistency(top, apx).assign(model=None)


def compute_profiles(profiles: pd.DataFrame, outcomes: pd.DataFrame, options: ProfilesOptions = ProfilesOptions(),
                     *, apx: pd.DataFrame | None = None, log_stats: I.ReadStats | None = None,
                     sources: Sequence[str | Path] = (), progress: I.Progress = I.no_progress) -> ProfilesResult:
    """The tables of ``stereoprobe profiles`` from the profiles read (one row per parsed profile, with
    ``model`` and ``Group``) and the per-request parse outcomes; ``options`` passed whole (checked when made);
    ``apx``: the ``bias_scores`` table of ``stereoprobe globalbias`` for the religion consistency table;
    ``log_stats`` and ``sources`` are carried to the result. ``progress``: reports the per-model analysis."""
    df = _with_unparsed_models(profiles, outcomes)
    df, dropped = _drop_duplicates(df, options.keep_duplicates)
    tables: dict[str, list[pd.DataFrame]] = {}
    for model, sub in progress(list(df.groupby("model", sort=True)), "profiles: analysing models"):
        sub = sub.dropna(subset=["Group"]).reset_index(drop=True)
        for k, v in _model_tables(sub, options).items():
            tables.setdefault(k, []).append(v.assign(model=model))
    combined = {k: pd.concat(v, ignore_index=True) for k, v in tables.items()}
    if len(outcomes):
        combined["parse_outcomes"] = outcomes
    if apx is not None:
        combined["religion_consistency"] = _religion_consistency(combined.get("top_words"), apx)
    o = options
    settings = {"permutations": o.n_permutations, "folds": o.folds, "ablation": o.ablation, "seed": o.seed,
                "classifier": o.classifier, "over_represented_only": o.over_represented_only,
                "faithful": o.faithful, "keep_duplicates": o.keep_duplicates, "duplicates_dropped": dropped}
    return ProfilesResult(tables=combined, profiles=df, log_stats=log_stats, duplicates_dropped=dropped,
                          settings=settings, sources=[str(s) for s in sources])
