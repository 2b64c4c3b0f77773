"""The example stories of each association (:mod:`stereoprobe.stereotales.mining.examples`) are the ones a
plain loop over the stories picks: per association, the non-refused stories of its model prompted with A = a
whose B is b (in its language, unless the slice is global), in the documented order, the first k."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stereoprobe.stereotales.contract import association_id
from stereoprobe.stereotales.mining.examples import EXAMPLE_COLUMNS, pick_examples

LANGS = ["de", "en", "fr"]


def _frame(categorical: bool) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 600
    frame = pd.DataFrame({
        "model": rng.choice(["m/a", "m/b"], n), "language": rng.choice(LANGS, n),
        "sample_id": [f"s{i % 97:03d}" for i in range(n)], "epoch": [1 + i // 97 for i in range(n)],
        "target_attribute": rng.choice(["age", "gender"], n), "refused": rng.random(n) < 0.1,
    })
    frame["attribute_value_key"] = np.where(frame["target_attribute"] == "age", rng.choice(["old", "young"], n),
                                            rng.choice(["female", "male"], n))
    frame["gender"] = np.where(frame["target_attribute"] == "gender", frame["attribute_value_key"],
                               rng.choice(["female", "male", "unknown"], n))
    frame["age"] = np.where(frame["target_attribute"] == "age", frame["attribute_value_key"],
                            rng.choice(["old", "young"], n))
    frame = frame.drop_duplicates(["model", "sample_id", "epoch"]).reset_index(drop=True)
    return frame.astype({c: "category" for c in ("model", "language", "target_attribute", "attribute_value_key",
                                                  "age", "gender")}) if categorical else frame


def _associations() -> pd.DataFrame:
    rows = [("m/a", "all", "age", "old", "gender", "female"), ("m/a", "en", "age", "old", "gender", "female"),
            ("m/b", "all", "gender", "male", "age", "young"), ("m/a", "fr", "gender", "female", "age", "old"),
            ("m/a", "all", "gender", "male", "age", "old"), ("m/b", "de", "age", "young", "gender", "unknown"),
            ("m/a", "all", "age", "absent", "gender", "female"), ("m/c", "all", "age", "old", "gender", "male"),
            ("m/b", "it", "age", "old", "gender", "male"), ("m/a", "all", "age", "old", "religion", "x")]
    return pd.DataFrame(rows, columns=["model", "slice", "base_attribute", "base_value", "compared_attribute",
                                       "compared_value"])


def _loop(frame: pd.DataFrame, assoc: pd.DataFrame, k: int) -> pd.DataFrame:
    """Independent: for each association, the stories in order (within (model, A): the i-th story by (sample
    id, epoch) of each language, languages in sorted order, i = 0, 1, ...), the first k matching."""
    recs = [r for r in frame.astype({c: object for c in frame.columns}).to_dict("records") if not r["refused"]]
    out = []
    groups = list(dict.fromkeys(zip(assoc["model"], assoc["base_attribute"])))
    for model, a in groups:
        sub = sorted((r for r in recs if r["model"] == model and r["target_attribute"] == a),
                     key=lambda r: (r["sample_id"], r["epoch"]))
        rank = {}
        for r in sub:
            r["_rank"] = rank[r["language"]] = rank.get(r["language"], -1) + 1
        sub.sort(key=lambda r: (r["_rank"], r["language"]))
        for x in assoc[(assoc["model"] == model) & (assoc["base_attribute"] == a)].itertuples(index=False):
            hits = [r for r in sub if x.compared_attribute in r and r["attribute_value_key"] == x.base_value
                    and r[x.compared_attribute] == x.compared_value and x.slice in ("all", r["language"])][:k]
            out += [{"association_id": association_id(a, x.base_value, x.compared_attribute, x.compared_value),
                     "model": model, "slice": x.slice, "base_attribute": a, "base_value": x.base_value,
                     "compared_attribute": x.compared_attribute, "compared_value": x.compared_value,
                     "language": r["language"], "sample_id": r["sample_id"], "epoch": r["epoch"]} for r in hits]
    return pd.DataFrame(out, columns=EXAMPLE_COLUMNS)


@pytest.mark.parametrize("categorical", [True, False])
@pytest.mark.parametrize("k", [1, 3, 50])
def test_examples_are_the_plain_loops_choice(categorical: bool, k: int) -> None:
    frame, assoc = _frame(categorical), _associations()
    got = pick_examples(frame, assoc, per_association=k)
    want = _loop(frame, assoc, k)
    assert len(want) >= 6 * k if k < 50 else len(want) > 100  # six associations have stories, four none
    assert set(want["language"]) == set(LANGS) or k == 1
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_no_association_or_no_story_gives_the_empty_table() -> None:
    assert list(pick_examples(_frame(True), _associations().iloc[:0]).columns) == EXAMPLE_COLUMNS
    assert pick_examples(_frame(True).iloc[:0], _associations()).empty

