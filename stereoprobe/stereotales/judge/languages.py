"""Language analyses of StereoTales harm labels: language reach, marked/unmarked group shift, Jaccard.

Inputs: association rows in the long format of ``associations.csv`` with ``slice`` = language code (a
per-language run of ``stereoprobe associations``), and a map association id -> harmful. The paper describes
these analyses (Le Jeune et al., 2026, "StereoTales", language section); the upstream code has none, so the
definitions are ours and documented per function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from stereoprobe.errors import InputError
from stereoprobe.paths import dataset_file
from stereoprobe.stats.agreement import jaccard_matrix
from stereoprobe.stereotales.judge.associations import association_id
from stereoprobe.stereotales.judge.contract import KEY_COLUMNS

LanguageGroups = dict[str, dict[str, dict[str, list[str]]]]


def _missing(v: object) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def load_language_groups(path: str | Path | None = None) -> LanguageGroups:
    """Marked/unmarked groups per language (``datasets/stereotales/language_groups.yaml`` by default).

    Returns ``{language: {"marked"|"unmarked": {attribute: [values]}}}``; "du" is read as "nl". Errors name the
    file and the field (:class:`~stereoprobe.errors.InputError`).
    """
    p = Path(path) if path else dataset_file("stereotales", "language_groups.yaml")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise InputError(f"{p}: cannot read the language groups ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from e
    langs = raw.get("languages") if isinstance(raw, dict) else None
    if not isinstance(langs, dict):
        raise InputError(f"{p}: missing mapping 'languages'")
    out: LanguageGroups = {}
    for lang, spec in langs.items():
        code = "nl" if lang == "du" else str(lang)
        if not isinstance(spec, dict) or not set(spec) <= {"marked", "unmarked"}:
            raise InputError(f"{p}: languages.{lang}: expected keys 'marked' and/or 'unmarked'")
        out[code] = {}
        for status, groups in spec.items():
            if not isinstance(groups, dict):
                raise InputError(f"{p}: languages.{lang}.{status}: expected {{attribute: [values]}}")
            for attr, values in groups.items():
                if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                    raise InputError(f"{p}: languages.{lang}.{status}.{attr}: expected a list of values")
            out[code][status] = {a: list(v) for a, v in groups.items()}
    return out




def _with_ids(rows: pd.DataFrame) -> pd.DataFrame:
    if "association_id" in rows.columns:
        return rows
    return rows.assign(association_id=[association_id(*r) for r in rows[KEY_COLUMNS].astype(str).itertuples(index=False, name=None)])


def language_reach(rows: pd.DataFrame, labels: Mapping[str, bool] | pd.Series, global_slice: str = "all") -> pd.DataFrame:
    """Per association of the per-language run: ``reach`` = number of languages (slices) where it survives
    for at least one model, the languages, and its harm label (None when unlabelled).

    ``rows``: association rows (``slice`` = language; the global slice is ignored). ``labels``: association id
    → harmful.
    """
    r = _with_ids(rows)
    r = r[r["slice"].astype(str) != global_slice]
    lab = dict(labels)
    recs = []
    for aid, g in r.groupby("association_id", sort=True):
        langs = sorted(set(g["slice"].astype(str)))
        h = lab.get(aid)
        recs.append(
            {"association_id": aid, **{c: g[c].iloc[0] for c in KEY_COLUMNS}, "reach": len(langs), "languages": " ".join(langs),
             "harmful": None if _missing(h) else bool(h)}
        )
    return pd.DataFrame(recs, columns=["association_id", *KEY_COLUMNS, "reach", "languages", "harmful"])


def reach_summary(reach: pd.DataFrame, n_languages: int | None = None, specific_max: int = 3) -> pd.DataFrame:
    """Harmful vs benign reach: ``n, mean_reach, median_reach, share_specific`` (reach ≤ ``specific_max``),
    ``share_all`` (reach = ``n_languages``), and the two-sided Mann–Whitney U test of equal reach distributions
    (scipy.stats.mannwhitneyu, asymptotic with tie correction) on the ``harmful`` row."""
    n_lang = n_languages if n_languages is not None else (int(reach["reach"].max()) if len(reach) else 0)
    rows = []
    groups = {"harmful": reach[reach["harmful"] == True], "benign": reach[reach["harmful"] == False]}  # noqa: E712
    for name, g in groups.items():
        x = g["reach"].to_numpy(float)
        rows.append(
            {"label": name, "n": len(x), "mean_reach": float(x.mean()) if len(x) else float("nan"),
             "median_reach": float(np.median(x)) if len(x) else float("nan"),
             "share_specific": float((x <= specific_max).mean()) if len(x) else float("nan"),
             "share_all": float((x == n_lang).mean()) if len(x) else float("nan"), "mannwhitney_u": float("nan"),
             "p_value": float("nan")}
        )
    h, b = groups["harmful"]["reach"].to_numpy(float), groups["benign"]["reach"].to_numpy(float)
    if len(h) and len(b) and len(np.unique(np.concatenate([h, b]))) > 1:
        res = stats.mannwhitneyu(h, b, alternative="two-sided", method="asymptotic")
        rows[0]["mannwhitney_u"], rows[0]["p_value"] = float(res.statistic), float(res.pvalue)
    return pd.DataFrame(rows)


def _region(v: str) -> str:
    return str(v).split(" (e.g.")[0].strip().lower()


def group_matches(attribute: str, value: str, group_attribute: str, group_value: str) -> bool:
    """Whether an association side (attribute, value) is the group; geographic regions compare on the region
    name before " (e.g. ...)", case-insensitively; other values case-insensitively."""
    return attribute == group_attribute and _region(value) == _region(group_value)


def marked_group_shift(
    rows: pd.DataFrame,
    labels: Mapping[str, bool] | pd.Series,
    groups: Mapping[str, Mapping[str, Mapping[str, Sequence[str]]]],
    side: Literal["both", "base", "compared"] = "both",
    global_slice: str = "all",
) -> pd.DataFrame:
    """Harmful associations directed at each language's marked/unmarked groups, in their language vs others.

    For each language L of ``groups`` (``{L: {"marked"|"unmarked": {attribute: [values]}}}``) and each of its
    groups g: ``n_own`` = number of distinct harmful associations of slice L involving g (on the ``side``),
    ``mean_other`` = mean of that count over the other language slices present in ``rows``, ``shift`` =
    n_own − mean_other and ``ratio`` = n_own / mean_other. Languages absent from ``rows`` are skipped.
    """
    r = _with_ids(rows)
    r = r[r["slice"].astype(str) != global_slice]
    lab = dict(labels)
    r = r[[not _missing(lab.get(a)) and bool(lab.get(a)) for a in r["association_id"]]]
    present = sorted(set(rows["slice"].astype(str)) - {global_slice})
    per_slice = {s: g.drop_duplicates("association_id") for s, g in r.groupby(r["slice"].astype(str))}

    def count(slice_name: str, attr: str, value: str) -> int:
        g = per_slice.get(slice_name)
        if g is None or g.empty:
            return 0
        hit = np.zeros(len(g), dtype=bool)
        if side in ("both", "base"):
            hit |= [group_matches(a, v, attr, value) for a, v in zip(g["base_attribute"], g["base_value"])]
        if side in ("both", "compared"):
            hit |= [group_matches(a, v, attr, value) for a, v in zip(g["compared_attribute"], g["compared_value"])]
        return int(hit.sum())

    recs = []
    for lang, spec in groups.items():
        if lang not in present:
            continue
        others = [s for s in present if s != lang]
        for status in ("unmarked", "marked"):
            for attr, values in (spec.get(status) or {}).items():
                for value in values:
                    own = count(lang, attr, value)
                    other = [count(s, attr, value) for s in others]
                    mo = float(np.mean(other)) if other else float("nan")
                    recs.append(
                        {"language": lang, "status": status, "attribute": attr, "group": value, "n_own": own,
                         "mean_other": mo, "shift": own - mo if other else float("nan"),
                         "ratio": own / mo if other and mo > 0 else float("nan")}
                    )
    return pd.DataFrame(recs, columns=["language", "status", "attribute", "group", "n_own", "mean_other", "shift", "ratio"])


def harmful_language_jaccard(rows: pd.DataFrame, labels: Mapping[str, bool] | pd.Series, global_slice: str = "all") -> pd.DataFrame:
    """Jaccard similarity J(L1, L2) = |S1 ∩ S2| / |S1 ∪ S2| between the sets of HARMFUL associations of each
    language slice (NaN when both sets are empty). Square DataFrame indexed by language."""
    r = _with_ids(rows)
    r = r[r["slice"].astype(str) != global_slice]
    lab = dict(labels)
    langs = sorted(set(r["slice"].astype(str)))
    sets = {
        lang: {a for a in r.loc[r["slice"].astype(str) == lang, "association_id"] if not _missing(lab.get(a)) and bool(lab.get(a))}
        for lang in langs
    }
    return pd.DataFrame(jaccard_matrix([sets[lang] for lang in langs]), index=langs, columns=langs)
