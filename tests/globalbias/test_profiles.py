from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon

from stereoprobe.globalbias import profiles as P

POOLS = {
    "occupation": ["teacher", "nurse", "engineer", "chef", "pilot", "artist"],
    "socioeconomic_status": ["middle class", "working class", "upper class"],
    "sexual_orientation": ["heterosexual", "bisexual", "gay"],
    "religion": ["christian", "muslim", "buddhist", "none"],
    "physical_characteristics.hair_colour": ["black", "brown", "blonde", "red"],
    "physical_characteristics.eye_colour": ["brown", "blue", "green"],
    "physical_characteristics.skin_colour": ["fair", "olive", "dark"],
    "physical_characteristics.build": ["slim", "athletic", "average"],
}
TRAITS = ["kind", "brave", "curious", "calm", "witty", "loyal", "shy", "bold"]
HOBBIES = ["chess", "hiking", "cooking", "painting", "dancing", "reading"]


def synthetic(planted: bool, n_per_group: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for eth in ("ALPHA", "BETA"):
        for gen in ("F", "M"):
            for i in range(n_per_group):
                r = {k: str(rng.choice(v)) for k, v in POOLS.items()}
                r["age"] = str(rng.integers(20, 60))
                r["physical_characteristics.height"] = str(rng.choice(["5.4", "5.8", "6.0"]))
                r["personality_traits"] = tuple(map(str, rng.choice(TRAITS, 3, replace=False)))
                r["negative_traits"] = tuple(map(str, rng.choice(TRAITS, 3, replace=False)))
                r["hobbies"] = tuple(map(str, rng.choice(HOBBIES, 3, replace=False)))
                if planted:
                    if rng.random() < 0.8:
                        r["religion"] = "jedi" if eth == "ALPHA" else "pastafarian"
                    if rng.random() < 0.8:
                        r["physical_characteristics.height"] = "5.2" if gen == "F" else "6.2"
                    if eth == "ALPHA" and rng.random() < 0.7:
                        r["hobbies"] = ("origami",) + r["hobbies"][1:]
                r.update(name=f"{eth}{gen}{i}", special_move="x", run_id="0", Ethnicity=eth, Gender=gen,
                         Group=str((eth, gen)), model="synthetic")
                rows.append(r)
    return pd.DataFrame(rows)


def test_planted_difference_is_found():
    df = synthetic(True)
    res = P.classification(df, n_permutations=30, folds=3).set_index("target")
    assert res.loc["ethnicity", "accuracy"] > 0.8 and res.loc["gender", "accuracy"] > 0.8
    assert res.loc["gender_ethnicity", "accuracy"] > 0.5  # chance 0.25
    for t in ("ethnicity", "gender", "gender_ethnicity"):
        assert res.loc[t, "permutation_p"] == pytest.approx(1 / 31)
        assert res.loc[t, "cv_low"] > res.loc[t, "chance"]
    abl = P.feature_ablation(df, "Ethnicity").set_index("feature")
    assert abl["delta_pp"].idxmin() == "religion" and abl.loc["religion", "delta_pp"] < 0
    words = P.top_words(df, over_represented_only=True)
    rel = words[(words.feature == "religion") & (words["rank"] <= 2)]
    assert set(rel.word) == {"jedi", "pastafarian"}
    hob = words[(words.feature == "hobbies")].iloc[0]
    assert hob.word == "origami" and "ALPHA" in hob.group


def test_no_difference_stays_at_chance():
    df = synthetic(False, seed=1)
    res = P.classification(df, n_permutations=30, folds=3).set_index("target")
    for t in ("ethnicity", "gender", "gender_ethnicity"):
        assert res.loc[t, "permutation_p"] > 0.05
        assert res.loc[t, "cv_low"] <= res.loc[t, "chance"] <= res.loc[t, "cv_high"]


def test_jsd_contributions_sum_to_scipy_jsd():
    a = Counter({"x": 5, "y": 3, "z": 1})
    b = Counter({"y": 4, "z": 6, "w": 2})
    c = P.jsd_contributions(a, b)
    types = sorted(set(a) | set(b))
    p = np.array([a[t] for t in types], float) / sum(a.values())
    q = np.array([b[t] for t in types], float) / sum(b.values())
    assert c["contribution"].sum() == pytest.approx(jensenshannon(p, q, base=2) ** 2)
    assert (c["contribution"] >= -1e-15).all()
    assert c.set_index("word").loc["x", "direction"] == 1 and c.set_index("word").loc["w", "direction"] == -1


def test_read_upstream_layout_csv(tmp_path):
    df = synthetic(True, n_per_group=3)
    up = df.drop(columns="model").copy()
    for col in P.LISTS:
        up[col] = up[col].map(repr)
    up.insert(0, "Unnamed: 0", range(len(up)))
    up.to_csv(tmp_path / "10a_demo_full.csv", index=False)
    back = P.read_profiles_csv(tmp_path / "10a_demo_full.csv")
    assert back["hobbies"].tolist() == df["hobbies"].tolist()
    assert back["model"].iloc[0] == "10a_demo_full"
    up.loc[0, "hobbies"] = "__import__('os').system('echo hacked')"
    up.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="bad.csv: row 2, column hobbies"):
        P.read_profiles_csv(tmp_path / "bad.csv")


def test_reference_accuracy_matches_a_hand_built_pipeline():
    """Independent build of the reference features: one-hot via pandas on the training split (unknown test
    categories -> all zeros, as handle_unknown="ignore"), TF-IDF per list feature, SVC(), same split."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import train_test_split
    from sklearn.svm import SVC

    df = synthetic(True, n_per_group=25, seed=3)
    tr, te = train_test_split(df, test_size=0.3, random_state=42, stratify=df["Ethnicity"])
    blocks_tr, blocks_te = [], []
    for col in P.ONE_HOT:
        cats = sorted(tr[col].astype(str).unique())
        blocks_tr.append(sp.csr_matrix(np.array([[v == c for c in cats] for v in tr[col].astype(str)], float)))
        blocks_te.append(sp.csr_matrix(np.array([[v == c for c in cats] for v in te[col].astype(str)], float)))
    for col in P.LISTS:
        vec = TfidfVectorizer().fit([" ".join(v) for v in tr[col]])
        blocks_tr.append(vec.transform([" ".join(v) for v in tr[col]]))
        blocks_te.append(vec.transform([" ".join(v) for v in te[col]]))
    clf = SVC().fit(sp.hstack(blocks_tr).tocsr(), tr["Ethnicity"])
    expected = float(np.mean(clf.predict(sp.hstack(blocks_te).tocsr()) == te["Ethnicity"].to_numpy()))
    assert P.svm_accuracy(df, "Ethnicity") == pytest.approx(expected)


def test_linear_one_vs_rest_variant():
    df = synthetic(True, n_per_group=25, seed=4)
    assert P.svm_accuracy(df, "Ethnicity", classifier="linear-ovr") > 0.8
    with pytest.raises(ValueError, match="unknown classifier"):
        P.svm_accuracy(df, "Ethnicity", classifier="forest")


def _shifterator_formula(a: Counter, b: Counter) -> dict:
    """shifterator 0.3.0 JSDivergenceShift (alpha 1, weights 1/2, base 2, reference 0, 'variation'), written
    out from its source: s1 = w1 (log m - log p1) (w1 log m if p1 = 0), s2 = w2 (log p2 - log m)
    (-w2 log m if p2 = 0), shift = (p2 - p1) ((s1 + s2)/2) + (s2 - s1) (p1 + p2)/2, divided by sum |shift|."""
    import math

    n1, n2 = sum(a.values()), sum(b.values())
    out = {}
    for t in set(a) | set(b):
        p1, p2 = a.get(t, 0) / n1, b.get(t, 0) / n2
        m = 0.5 * p1 + 0.5 * p2
        s1 = 0.5 * (math.log2(m) - math.log2(p1)) if p1 > 0 else 0.5 * math.log2(m)
        s2 = 0.5 * (math.log2(p2) - math.log2(m)) if p2 > 0 else -0.5 * math.log2(m)
        out[t] = (p2 - p1) * 0.5 * (s1 + s2) + (s2 - s1) * 0.5 * (p1 + p2)
    norm = sum(abs(v) for v in out.values())
    return {t: v / norm for t, v in out.items()}


def test_scores_equal_shifterator_shift_scores():
    df = synthetic(True, n_per_group=10, seed=5)
    words = P.top_words(df, features=["religion"], per_group=10, top=1000, over_represented_only=False)
    grp = df["Group"].iloc[0]
    inside = Counter(v.lower() for v in df.loc[df.Group == grp, "religion"])
    outside = Counter(v.lower() for v in df.loc[df.Group != grp, "religion"])
    ref = _shifterator_formula(inside, outside)
    got = words[words.group == grp].set_index("word")["score"]
    assert len(got) > 0
    for w, v in got.items():
        assert v == pytest.approx(ref[w])
    assert list(got.index) == sorted(got.index, key=lambda w: -ref[w])[: len(got)]


def test_jsd_contributions_hand_worked_table():
    """In-group {a: 2, b: 2}, out-group {a: 1, c: 3}: p = (.5, .5, 0), q = (.25, 0, .75), m = (.375, .25, .375);
    c_t = -m log2 m + (p log2 p + q log2 q) / 2 gives a: .375 log2(1/.375) - .5 = 0.0306391,
    b: .5 - .25 = 0.25, c: 0.5306391 - .375 * 0.4150375 = 0.3750000; total = JSD = 0.6556391 (checked against
    scipy's Jensen-Shannon distance squared)."""
    from scipy.spatial.distance import jensenshannon

    c = P.jsd_contributions(Counter({"a": 2, "b": 2}), Counter({"a": 1, "c": 3})).set_index("word")
    assert c.loc["a", "contribution"] == pytest.approx(0.0306391, abs=1e-7)
    assert c.loc["b", "contribution"] == pytest.approx(0.25, abs=1e-12)
    assert c.loc["c", "contribution"] == pytest.approx(0.375, abs=1e-7)
    assert c["contribution"].sum() == pytest.approx(jensenshannon([.5, .5, 0], [.25, 0, .75], base=2) ** 2)
    assert list(c["direction"]) == [1, 1, -1]


def test_top_words_default_keeps_under_represented_words():
    """The reference does not filter by direction: a word absent from the group can be one of its top words."""
    import pandas as pd

    rows = [{"Group": "G1", "religion": "none"}] * 4 + [{"Group": "G2", "religion": "jedi"}] * 4
    df = pd.DataFrame(rows)
    both = P.top_words(df, features=["religion"], per_group=2, top=10)
    g1 = both[both.group == "G1"]
    assert set(g1.word) == {"none", "jedi"} and set(g1.direction) == {1, -1}
    only = P.top_words(df, features=["religion"], per_group=2, top=10, over_represented_only=True)
    assert set(only[only.group == "G1"].word) == {"none"}


def test_religion_consistency_table():
    """Paper Table 8 layout on a hand-made case: "jewish" generated for ISRAELI_M, and APX flags ISRAELI_M for
    "a Jew" (agrees); "hindu" generated for INDIAN_F, APX's lowest group for "a Hindu" is INDIAN_M (disagrees,
    nothing flagged)."""
    import pandas as pd

    from stereoprobe.globalbias.consistency import religion_consistency

    top = pd.DataFrame([{"feature": "religion", "word": "jewish", "group": "ISRAELI_M", "direction": 1},
                        {"feature": "religion", "word": "hindu", "group": "INDIAN_F", "direction": 1},
                        {"feature": "religion", "word": "none", "group": "ENGLISH_F", "direction": -1},
                        {"feature": "hobbies", "word": "yoga", "group": "INDIAN_F", "direction": 1}])
    scores = pd.DataFrame([
        {"model": "m", "group": "ISRAELI_M", "descriptor": "a Jew", "axis": "religion", "score": 0.0, "flagged": True},
        {"model": "m", "group": "INDIAN_M", "descriptor": "a Jew", "axis": "religion", "score": 0.9, "flagged": False},
        {"model": "m", "group": "INDIAN_M", "descriptor": "a Hindu", "axis": "religion", "score": 0.1, "flagged": False},
        {"model": "m", "group": "INDIAN_F", "descriptor": "a Hindu", "axis": "religion", "score": 0.2, "flagged": False},
        {"model": "m", "group": "INDIAN_F", "descriptor": "jewelry lover", "axis": "characteristics", "score": 0.0,
         "flagged": True},
    ])
    t = religion_consistency(top, scores).set_index("word")
    assert list(t.index) == ["hindu", "jewish"]
    assert t.loc["jewish", "apx_descriptors"] == "a Jew" and bool(t.loc["jewish", "agrees"])
    assert t.loc["hindu", "apx_lowest_group"] == "INDIAN_M" and not bool(t.loc["hindu", "agrees"])


def test_top_words_take_the_top_25_then_filter_as_the_reference():
    """Reference order (notebook 10): the ``candidates`` best by shift score, then only those among the
    ``score1_top`` best by type2score_1. G1 = a x6, b x3, c x1 against G2 = c x6, d x3, b x1 (and the mirror):
    by score a > d > c > b, by type2score_1 c > b > a > d (a, d: p_in or p_out = 0). With 2 candidates and the
    top 2 by type2score_1, {a, d} and {c, b} do not meet: no word (filtering first would give c and b); with
    3 candidates, c."""
    rows = ([{"Group": "G1", "religion": r} for r in ["a"] * 6 + ["b"] * 3 + ["c"]]
            + [{"Group": "G2", "religion": r} for r in ["c"] * 6 + ["d"] * 3 + ["b"]])
    df = pd.DataFrame(rows)
    none = P.top_words(df, features=["religion"], per_group=3, candidates=2, score1_top=2)
    assert none.empty
    three = P.top_words(df, features=["religion"], per_group=3, candidates=3, score1_top=2)
    assert list(three[three.group == "G1"].word) == ["c"]


def test_feature_ablation_rounds_accuracies_as_the_reference(monkeypatch):
    """The reference subtracts round(accuracy, 3): 0.18889 vs 0.18333 -> 0.189 - 0.183 = +0.6 pp (Table 7,
    Llama 3 70B, occupation); unrounded +0.556 pp."""
    def fake(df, target, features, seed=42, classifier="svc"):
        return 0.18333333 if len(features) == len(P.FEATURES) else 0.18888889

    monkeypatch.setattr(P, "svm_accuracy", fake)
    faithful = P.feature_ablation(pd.DataFrame(), "Group")
    exact = P.feature_ablation(pd.DataFrame(), "Group", faithful=False)
    assert faithful["delta_pp"].tolist() == pytest.approx([0.6] * 13)
    assert exact["delta_pp"].tolist() == pytest.approx([100 * (0.18888889 - 0.18333333)] * 13)


def test_duplicate_profiles_dropped_once_each():
    base = {"name": "Wafa", "run_id": "0", "Group": "('ARAB', 'F')", "hobbies": ("chess", "tea"), "age": "30"}
    df = pd.DataFrame([base, dict(base), {**base, "age": "31"}, {**base, "hobbies": ("chess", "golf")}, dict(base)])
    kept, dropped = P.drop_duplicate_profiles(df)
    assert dropped == 2 and len(kept) == 3
    assert kept["age"].tolist() == ["30", "31", "30"] and kept["hobbies"].iloc[2] == ("chess", "golf")


def test_religion_consistency_normalises_groups_and_reads_every_dataset():
    """Upstream layouts: profiles' "('ARAB', 'M')" vs APX's "ARAB_M"; the Ghavami & Peplau "Muslim" has no axis
    (flagged for ARAB_M and ARAB_F), HolisticBias "a Muslim" (axis religion) is not flagged; a non-religion
    HolisticBias axis never matches ("Hindustani" of the nationality axis for "hindu")."""
    from stereoprobe.globalbias.consistency import group_key, religion_consistency

    assert group_key("('THAI', 'F')") == group_key("THAI_F") == group_key("thai_f") == "THAI_F"
    top = pd.DataFrame([{"feature": "religion", "word": "muslim", "group": "('ARAB', 'M')", "direction": 1},
                        {"feature": "religion", "word": "muslim", "group": "('TURKISH', 'M')", "direction": 1},
                        {"feature": "religion", "word": "hindu", "group": "('INDIAN', 'F')", "direction": 1}])
    nan = float("nan")
    scores = pd.DataFrame([
        {"group": "ARAB_M", "descriptor": "Muslim", "axis": nan, "score": 0.0, "flagged": True},
        {"group": "ARAB_F", "descriptor": "Muslim", "axis": nan, "score": 0.1, "flagged": True},
        {"group": "TURKISH_M", "descriptor": "Muslim", "axis": nan, "score": 0.5, "flagged": False},
        {"group": "TURKISH_M", "descriptor": "a Muslim", "axis": "religion", "score": 0.2, "flagged": False},
        {"group": "INDIAN_F", "descriptor": "Hindustani", "axis": "nationality", "score": 0.0, "flagged": True},
    ])
    t = religion_consistency(top, scores)
    m = t[t.word == "muslim"].set_index("generation_group")
    assert list(m.index) == ["ARAB_M", "TURKISH_M"]
    assert m.loc["ARAB_M", "apx_descriptors"] == "Muslim; a Muslim"
    assert m.loc["ARAB_M", "apx_flagged_groups"] == "ARAB_F; ARAB_M"
    assert bool(m.loc["ARAB_M", "agrees"]) and not bool(m.loc["TURKISH_M", "agrees"])
    h = t[t.word == "hindu"].iloc[0]
    assert h["apx_descriptors"] == "" and not bool(h["agrees"])


def test_top_words_count_values_as_notebook_10():
    """Notebook 10's ``get_word_distribution``: ``str(x).lower()`` of each tuple item or whole value, no
    stripping, so " Muslim" and "muslim" are two types, "" is a type and a missing value is "nan"; an empty tuple
    explodes to one missing value. Hand count for G1: {"muslim": 1, " muslim": 1, "": 1, "nan": 2, "a ": 1,
    "b": 1}; G2: {"muslim": 2}."""
    rows = [{"Group": "G1", "religion": "Muslim"}, {"Group": "G1", "religion": " Muslim"},
            {"Group": "G1", "religion": ""}, {"Group": "G1", "religion": float("nan")},
            {"Group": "G1", "religion": ("A ", "b")}, {"Group": "G1", "religion": ()},
            {"Group": "G2", "religion": "MUSLIM"}, {"Group": "G2", "religion": "muslim"}]
    words = P.top_words(pd.DataFrame(rows), features=["religion"], per_group=10, top=100)
    g1 = words[words.group == "G1"].set_index("word")
    assert dict(g1["in_count"]) == {"muslim": 1, " muslim": 1, "": 1, "nan": 2, "a ": 1, "b": 1}
    assert g1.loc["muslim", "out_count"] == 2 and g1.loc["nan", "out_count"] == 0
