"""Complete units only: a group x descriptor pair is scored only when it holds every name of its group under
every template of the run (an interrupted run never contributes a part of a unit)."""

from __future__ import annotations

import pandas as pd

UNIT = ["model", "group", "descriptor"]
COLUMNS = ["model", "group", "descriptor", "present", "expected"]


def split_complete(sentences: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows of complete units, one row per incomplete unit with ``present`` and ``expected`` name x template
    cells).

    Expected cells of a unit: (names of the group seen anywhere in the model's rows) x (templates seen in the
    model's rows); without names (group-level tables) the templates alone.
    """
    if sentences.empty:
        return sentences, pd.DataFrame(columns=COLUMNS)
    has_names = "name" in sentences.columns and sentences["name"].notna().any()
    keep = []
    missing = []
    for model, sub in sentences.groupby("model", sort=False):
        n_templates = sub["template"].nunique()
        if has_names:
            names = sub.groupby("group")["name"].nunique()
            cells = sub.groupby(["group", "descriptor"])[["name", "template"]].apply(
                lambda d: len(d.drop_duplicates()))
            expected = cells.index.get_level_values("group").map(names) * n_templates
        else:
            cells = sub.groupby(["group", "descriptor"])["template"].nunique()
            expected = pd.Index([n_templates] * len(cells))
        ok = pd.Series(cells.to_numpy() >= expected.to_numpy(), index=cells.index)
        bad = cells[~ok.to_numpy()]
        for (g, d), present in bad.items():
            missing.append((model, g, d, int(present), int(expected[cells.index.get_loc((g, d))])))
        good = ok[ok].index
        idx = pd.MultiIndex.from_frame(sub[["group", "descriptor"]])
        keep.append(sub[idx.isin(good)])
    return pd.concat(keep, ignore_index=True), pd.DataFrame(missing, columns=COLUMNS)
