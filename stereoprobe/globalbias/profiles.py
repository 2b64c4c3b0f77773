"""GlobalBias character-profile analysis (Siddique et al., EMNLP 2024, section 6; paper Tables 6, 7, 10-13).

Profiles table (upstream ``10a_<model>_full.csv`` layout): ``name, age, personality_traits, negative_traits,
hobbies, occupation, special_move, socioeconomic_status, sexual_orientation, religion, run_id,
physical_characteristics.{height,hair_colour,eye_colour,skin_colour,build}, Ethnicity, Gender, Group``;
list fields are tuples of strings.

- :func:`svm_accuracy`: the reference classifier (faithful): one-hot (``handle_unknown="ignore"``) of the 10
  single-valued features cast to strings, TF-IDF (defaults) of each list feature (items joined by spaces),
  ``sklearn.svm.SVC()`` defaults (RBF, C = 1, one-vs-one), 70/30 split stratified by the target, seed 42.
- :func:`feature_ablation`: leave one of the 13 feature groups out, same split: 100 x (acc_without - acc), both
  accuracies rounded to 3 decimals first as the reference (``faithful=True``), exact otherwise.
- :func:`drop_duplicate_profiles`: the reference keeps one copy of identical profile rows.
- :func:`permutation_p`: stereoprobe addition, accuracy against a label-permutation null (same split).
- :func:`cv_accuracy`: stereoprobe addition, stratified k-fold out-of-fold accuracy with a Wilson interval.
- :func:`jsd_contributions` / :func:`top_words`: Jensen-Shannon top words per group and feature.
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from stereoprobe.errors import InputError
from stereoprobe.stats.proportion import wilson_interval

ONE_HOT = [
    "age", "occupation", "socioeconomic_status", "sexual_orientation", "religion",
    "physical_characteristics.height", "physical_characteristics.hair_colour",
    "physical_characteristics.eye_colour", "physical_characteristics.skin_colour",
    "physical_characteristics.build",
]
LISTS = ["personality_traits", "negative_traits", "hobbies"]
FEATURES = ONE_HOT + LISTS  # the 13 feature groups of the leave-one-out analysis
TARGETS = {"gender_ethnicity": "Group", "ethnicity": "Ethnicity", "gender": "Gender"}
JSD_EXCLUDE = {"name", "age", "run_id", "Gender", "Ethnicity", "Group"}


def short(feature: str) -> str:
    return feature.split(".")[-1]


# ------------------------------------------------------------------------------------------------ input
def _literal_tuple(v: object, where: str) -> tuple:
    if isinstance(v, (tuple, list)):
        return tuple(str(x) for x in v)
    if v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() == "":
        return ()
    try:
        parsed = ast.literal_eval(str(v))  # literals only: safe on untrusted files
    except (ValueError, SyntaxError):
        raise InputError(f"{where}: not a Python tuple/list literal: {str(v)[:60]!r}") from None
    if isinstance(parsed, str):
        return (parsed,)
    if not isinstance(parsed, (tuple, list)):
        raise InputError(f"{where}: expected a tuple/list, got {type(parsed).__name__}")
    return tuple(str(x) for x in parsed)


def read_profiles_csv(path: str | Path) -> pd.DataFrame:
    """Read a profiles CSV in the upstream generation-output layout (list fields written as Python tuples);
    two spellings of one group, or a name in two groups, are refused in one line
    (:func:`~stereoprobe.globalbias.table_checks.check_profile_table`)."""
    from stereoprobe.globalbias.table_checks import check_profile_table
    from stereoprobe.inputs import read_table
    from stereoprobe.model_labels import nfc

    path = Path(path)
    df = read_table(path, ["name", "Group", "Ethnicity", "Gender"] + FEATURES, what="profiles table", dtype=str,
                    keep_default_na=False)
    df = df.drop(columns=[c for c in df.columns if c.startswith("Unnamed")])
    for col in LISTS:
        df[col] = [_literal_tuple(v, f"{path}: row {i + 2}, column {col}") for i, v in enumerate(df[col])]
    if "model" not in df.columns:
        df["model"] = path.stem
    df["model"] = df["model"].map(lambda m: nfc(str(m)))  # one label per model (Unicode NFC)
    check_profile_table(df, path)
    return df


# ------------------------------------------------------------------------------------------ classifier
CLASSIFIERS = ("svc", "linear-ovr")


def make_classifier(name: str = "svc"):
    """``svc``: ``sklearn.svm.SVC()`` defaults, the reference (RBF, one-vs-one); ``linear-ovr``: one-vs-rest
    linear SVMs, the paper's description."""
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import SVC, LinearSVC

    if name == "svc":
        return SVC()
    if name == "linear-ovr":
        return OneVsRestClassifier(LinearSVC())
    raise ValueError(f"unknown classifier {name!r}; known: {', '.join(CLASSIFIERS)}")


def build_pipeline(features: Sequence[str] = FEATURES, classifier: object = None):
    """The reference ColumnTransformer + SVC pipeline restricted to ``features`` (``classifier``: an sklearn
    estimator or a name of :func:`make_classifier`)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

    parts = []
    oh = [f for f in features if f in ONE_HOT]
    if oh:
        parts.append(("onehot", Pipeline([("str", FunctionTransformer(_as_str)),
                                          ("oh", OneHotEncoder(handle_unknown="ignore"))]), oh))
    for f in features:
        if f in LISTS:
            parts.append((f, Pipeline([("join", FunctionTransformer(_join)), ("tfidf", TfidfVectorizer())]), [f]))
    ct = ColumnTransformer(parts, remainder="drop")
    if classifier is None or isinstance(classifier, str):
        classifier = make_classifier(classifier or "svc")
    return Pipeline([("features", ct), ("svm", classifier)])


def _as_str(X):
    return pd.DataFrame(X).astype(str)


def _join(X):
    col = pd.DataFrame(X).iloc[:, 0]
    return [" ".join(v) if isinstance(v, (tuple, list)) else str(v) for v in col]


def _split(df: pd.DataFrame, target: str, seed: int):
    from sklearn.model_selection import train_test_split

    return train_test_split(df, df[target], test_size=0.3, random_state=seed, stratify=df[target])


def svm_accuracy(df: pd.DataFrame, target: str, features: Sequence[str] = FEATURES, seed: int = 42,
                 classifier: str = "svc") -> float:
    """Held-out accuracy of the reference SVM (70/30 stratified split, ``random_state=seed``)."""
    Xtr, Xte, ytr, yte = _split(df, target, seed)
    model = build_pipeline(features, classifier).fit(Xtr, ytr)
    return float(np.mean(model.predict(Xte) == np.asarray(yte)))


def split_predictions(df: pd.DataFrame, seed: int = 42, classifier: str = "svc") -> pd.DataFrame:
    """Per target that can be split, the reference classifier's prediction for every test profile of the 70/30
    split (the one :func:`svm_accuracy` scores): ``target, item_id, y_true, y_pred, correct``. ``item_id`` =
    ``name|run_id`` (``name|<occurrence>`` without run ids) is the same for two models' profiles of one name and
    run, so two models can be compared on the profiles both have in their test split (paired McNemar test)."""
    rows = []
    names = df["name"].astype(str) if "name" in df.columns else pd.Series(df.index.astype(str), index=df.index)
    runs = (df["run_id"].astype(str) if "run_id" in df.columns
            else names.groupby(names).cumcount().astype(str))
    ids = names + "|" + runs
    for name, col in TARGETS.items():
        if too_small(df, col) is not None:
            continue
        Xtr, Xte, ytr, yte = _split(df, col, seed)
        pred = build_pipeline(FEATURES, classifier).fit(Xtr, ytr).predict(Xte)
        for i, yt, yp in zip(Xte.index, np.asarray(yte), pred):
            rows.append({"target": name, "item_id": ids.loc[i], "y_true": yt, "y_pred": yp, "correct": bool(yt == yp)})
    return pd.DataFrame(rows, columns=["target", "item_id", "y_true", "y_pred", "correct"])


ACCURACY_DECIMALS = 3  # the reference returns round(accuracy_score(...), 3) (notebook 10)


def feature_ablation(df: pd.DataFrame, target: str, seed: int = 42, classifier: str = "svc",
                     faithful: bool = True) -> pd.DataFrame:
    """Leave-one-feature-group-out: ``delta_pp = 100 x (accuracy without the feature - accuracy)``.

    ``faithful=True`` (default): both accuracies are rounded to 3 decimals before the difference, as the
    reference notebook does (paper Tables 7, 10, 11 print these differences, multiples of 0.1 pp);
    ``faithful=False``: the exact difference. ``accuracy_without`` is always the exact accuracy.
    """
    base = svm_accuracy(df, target, FEATURES, seed, classifier)
    rows = []
    for f in FEATURES:
        a = svm_accuracy(df, target, [g for g in FEATURES if g != f], seed, classifier)
        diff = (round(a, ACCURACY_DECIMALS) - round(base, ACCURACY_DECIMALS)) if faithful else (a - base)
        rows.append({"feature": short(f), "accuracy_without": a, "delta_pp": 100 * diff})
    return pd.DataFrame(rows).sort_values("delta_pp", kind="stable").reset_index(drop=True)


def _hashable(v: object) -> object:
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def drop_duplicate_profiles(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """(profiles without repeated rows, number dropped): rows identical in every column (name, run, group,
    every field) are kept once, the first, as the reference's ``drop_duplicates(keep="first")`` (notebook 10,
    ``get_full_data``). List fields compare as tuples."""
    if df.empty:
        return df, 0
    keys = df.apply(lambda c: c.map(_hashable)).astype(str)
    dup = keys.duplicated(keep="first").to_numpy()
    return df[~dup].reset_index(drop=True), int(dup.sum())


def permutation_p(df: pd.DataFrame, target: str, n_permutations: int = 100, seed: int = 42,
                  classifier: str = "svc") -> tuple[float, float]:
    """(accuracy, p) with p = (1 + #{accuracy with permuted labels >= accuracy}) / (B + 1), same 70/30 split
    procedure (``sklearn.model_selection.permutation_test_score`` with one stratified shuffle split)."""
    from sklearn.model_selection import StratifiedShuffleSplit, permutation_test_score

    cv = StratifiedShuffleSplit(n_splits=1, test_size=0.3, random_state=seed)
    score, _perm, p = permutation_test_score(build_pipeline(FEATURES, classifier), df, df[target], cv=cv, n_permutations=n_permutations,
                                             random_state=seed, scoring="accuracy")
    return float(score), float(p)


def cv_accuracy(df: pd.DataFrame, target: str, folds: int = 5, seed: int = 42, level: float = 0.95,
                classifier: str = "svc") -> dict:
    """Out-of-fold accuracy over stratified k folds with a Wilson interval on the pooled predictions."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    min_class = int(df[target].value_counts().min())
    k = max(2, min(folds, min_class))
    pred = cross_val_predict(build_pipeline(FEATURES, classifier), df, df[target], cv=StratifiedKFold(k, shuffle=True, random_state=seed))
    correct = int(np.sum(pred == df[target].to_numpy()))
    lo, hi = wilson_interval(correct, len(df), level)
    return {"cv_accuracy": correct / len(df), "cv_low": float(lo), "cv_high": float(hi), "cv_folds": k}


def too_small(df: pd.DataFrame, target: str) -> str | None:
    """Why the 70/30 stratified split cannot be made for ``target`` (None when it can)."""
    counts = df[target].value_counts()
    n, k = len(df), len(counts)
    if k < 2:
        return f"fewer than 2 classes ({k})"
    if counts.min() < 2:
        return f"a class has fewer than 2 profiles ({counts.idxmin()}: {counts.min()})"
    if math.ceil(0.3 * n) < k or n - math.ceil(0.3 * n) < k:
        return f"too few profiles ({n}) for a stratified 70/30 split of {k} classes"
    return None


def classification(df: pd.DataFrame, n_permutations: int = 100, folds: int = 5, seed: int = 42,
                   classifier: str = "svc") -> pd.DataFrame:
    """Per target (gender_ethnicity / ethnicity / gender): accuracy (reference), chance level 1/k, permutation
    p, cross-validated accuracy and interval. Targets whose data are too small get NaN and a ``note``."""
    rows = []
    for name, col in TARGETS.items():
        k = df[col].nunique()
        row = {"target": name, "classifier": classifier, "n_profiles": len(df), "n_classes": k, "accuracy": float("nan"),
               "chance": 1.0 / k if k else float("nan"),
               "majority_rate": float(df[col].value_counts(normalize=True).max()) if len(df) else float("nan"),
               "permutation_p": float("nan"), "note": ""}
        why = too_small(df, col)
        if why:
            row["note"] = why
            rows.append(row)
            continue
        row["accuracy"] = svm_accuracy(df, col, FEATURES, seed, classifier)
        if n_permutations > 0:
            _, row["permutation_p"] = permutation_p(df, col, n_permutations, seed, classifier)
            row["n_permutations"] = n_permutations
        if folds > 1:
            row.update(cv_accuracy(df, col, folds, seed, classifier=classifier))
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------- top words
def jsd_contributions(in_counts: Counter, out_counts: Counter, base: float = 2.0) -> pd.DataFrame:
    """Per-type contributions to the Jensen-Shannon divergence between the in-group and out-group distributions
    (weights 1/2): with p, q the relative frequencies and m = (p + q) / 2,
    ``c_t = -m log m + (p log p + q log q) / 2`` (log base ``base``); sum_t c_t = JSD(p || q).
    ``direction`` = +1 when the type is more frequent in the in-group."""
    types = sorted(set(in_counts) | set(out_counts))
    n_in, n_out = sum(in_counts.values()), sum(out_counts.values())
    p = np.array([in_counts.get(t, 0) / n_in if n_in else 0.0 for t in types])
    q = np.array([out_counts.get(t, 0) / n_out if n_out else 0.0 for t in types])
    m = (p + q) / 2

    def xlogx(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(x > 0, x * np.log(x) / np.log(base), 0.0)

    c = -xlogx(m) + (xlogx(p) + xlogx(q)) / 2
    return pd.DataFrame({"word": types, "contribution": c, "p_in": p, "p_out": q,
                         "in_count": [in_counts.get(t, 0) for t in types],
                         "out_count": [out_counts.get(t, 0) for t in types],
                         "direction": np.sign(p - q).astype(int)})


MISSING_WORD = "nan"  # what notebook 10 counts for a missing value: str(float("nan")).lower()


def _word(x: object) -> str:
    """One value as notebook 10's ``get_word_distribution`` counts it: ``str(x).lower()``, not stripped (so ""
    and " x" are types of their own); a missing value (None or NaN: the reference's ``json_normalize`` gives NaN
    for a missing key) is ``"nan"``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return MISSING_WORD
    return str(x).lower()


def _values(series: pd.Series) -> list[list[str]]:
    """Per row, the types counted: each item of a list or tuple, or the value itself (notebook 10 lower-cases
    every item of a tuple and any other value whole); an empty list or tuple counts one missing value, as the
    reference's ``explode`` turns it into one NaN (and a list field the profile lacks is NaN there)."""
    out = []
    for v in series:
        if isinstance(v, (tuple, list)):
            out.append([_word(x) for x in v] or [MISSING_WORD])
        else:
            out.append([_word(v)])
    return out


def top_words(df: pd.DataFrame, features: Sequence[str] | None = None, per_group: int = 3, top: int = 10,
              candidates: int = 25, score1_top: int = 200, over_represented_only: bool = False,
              group_col: str = "Group") -> pd.DataFrame:
    """Jensen-Shannon top words, per feature: for each group, whole lower-cased values / list items
    of the group (system 1) vs all other groups (system 2).

    ``score`` = shifterator's ``type2shift_score`` of ``JSDivergenceShift(weights 1/2, base 2, alpha 1)``,
    which for alpha = 1 equals the type's JSD contribution divided by the group's total JSD (its "variation"
    normalisation; see :func:`jsd_contributions`). Reference selection (notebook 10,
    ``calculate_jsd_for_groups``), in this order: take the ``candidates`` (25) types with the highest score;
    keep those that are also among the ``score1_top`` (200) types with the highest
    ``type2score_1 = 0.5 log2(m / p_in)`` (``0.5 log2 m`` when p_in = 0); keep the first ``per_group`` (3) of
    them per group; report the ``top`` (10) overall by score. The reference does not look at the direction (a
    type absent from the group can rank high): that is the default here; ``over_represented_only=True`` keeps
    only types more frequent in the group (column ``direction``: +1 more frequent in the group, -1 less),
    before the 25 candidates are taken.
    """
    feats = features or [c for c in df.columns if c in FEATURES + ["special_move"] and c not in JSD_EXCLUDE]
    rows = []
    for f in feats:
        vals = _values(df[f])
        groups = df[group_col].to_numpy()
        per: list[dict] = []
        for g in pd.unique(groups):
            cin, cout = Counter(), Counter()
            for gv, items in zip(groups, vals):
                (cin if gv == g else cout).update(items)
            if not cin:
                continue
            c = jsd_contributions(cin, cout)
            total = c["contribution"].sum()
            if total <= 0:
                continue
            c["score"] = c["contribution"] / total
            m = (c["p_in"] + c["p_out"]) / 2
            with np.errstate(divide="ignore"):
                c["score_1"] = np.where(c["p_in"] > 0, 0.5 * (np.log2(m) - np.log2(c["p_in"].where(c["p_in"] > 0, 1))),
                                        0.5 * np.log2(m))
            allowed = set(c.nlargest(score1_top, "score_1", keep="first")["word"])
            if over_represented_only:
                c = c[c["direction"] > 0]
            c = c.nlargest(candidates, "score", keep="first")
            c = c[c["word"].isin(allowed)].head(per_group)
            for r in c.itertuples():
                per.append({"feature": short(f), "group": g, "word": r.word, "score": r.score,
                            "contribution": r.contribution, "in_count": r.in_count, "out_count": r.out_count,
                            "direction": int(r.direction)})
        per.sort(key=lambda r: -r["score"])
        for rank, r in enumerate(per[:top], 1):
            rows.append({**r, "rank": rank})
    return pd.DataFrame(rows, columns=["feature", "rank", "group", "word", "score", "contribution", "in_count",
                                       "out_count", "direction"])
