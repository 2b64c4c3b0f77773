"""Counts of the output tables (:mod:`stereoprobe.stereotales.mining.tables`) against pandas itself."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stereoprobe.stereotales.mining.tables import group_sizes


def _frame(categorical: bool) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 500
    frame = pd.DataFrame({"model": rng.choice(["m/b", "m/a"], n), "language": rng.choice(["fr", "de", "en"], n),
                          "age": rng.choice(["young", "old", "unknown"], n), "gender": rng.choice(["male", "female"], n)})
    return frame.astype("category") if categorical else frame


@pytest.mark.parametrize("keys", [["model", "language", "age"], ["model", "gender"], ["model", "language"]])
def test_group_sizes_is_pandas_groupby_size(keys: list[str]) -> None:
    """The distributions' counts by one bincount (tables.group_sizes) equal pandas' groupby(...).size(),
    dtypes included; a missing key drops the story, as groupby does."""
    frame = _frame(True)
    frame.loc[frame.index[::11], "age"] = np.nan
    frame["model"] = frame["model"].cat.add_categories(["m/unused"])
    want = frame.groupby(keys, observed=True).size().rename("count").reset_index()
    pd.testing.assert_frame_equal(group_sizes(frame, keys), want, check_exact=True)
    plain = _frame(False)
    pd.testing.assert_frame_equal(group_sizes(plain, keys),
                                  plain.groupby(keys, observed=True).size().rename("count").reset_index())


def test_unknown_rates_count_every_story_once() -> None:
    """unknown_rates (counts per value, weighted) against one row per story summed by pandas."""
    from stereoprobe.stereotales.mining.tables import unknown_rates

    frame = _frame(False).assign(target_attribute=np.where(np.arange(500) % 3 == 0, "age", "gender"),
                                 refused=np.arange(500) % 17 == 0)
    frame["gender"] = np.where(np.arange(500) % 5 == 0, "other", frame["gender"])
    cat = frame.astype({c: "category" for c in ("model", "language", "age", "gender", "target_attribute")})
    got = unknown_rates(cat, ["age", "gender"])
    rows = []
    for a in ("age", "gender"):
        sub = frame[(frame["target_attribute"] != a) & ~frame["refused"]]
        for pooled in (False, True):
            keys = ["model"] if pooled else ["model", "language"]
            g = sub.groupby(keys).agg(n=(a, "size"), unknown=(a, lambda x: int((x == "unknown").sum())),
                                      other=(a, lambda x: int((x == "other").sum()))).reset_index()
            rows += [{"model": r.model, "language": "all" if pooled else r.language, "attribute": a, "n": r.n,
                      "unknown": r.unknown, "other": r.other} for r in g.itertuples()]
    want = pd.DataFrame(rows).sort_values(["model", "language", "attribute"]).reset_index(drop=True)
    assert len(want) == 16 and want["other"].sum() > 0
    for c in ("n", "unknown", "other"):
        assert got[c].tolist() == want[c].tolist(), c
    assert got[["model", "language", "attribute"]].astype(str).values.tolist() == want[["model", "language", "attribute"]].values.tolist()
    assert np.allclose(got["unknown_rate"], want["unknown"] / want["n"])
