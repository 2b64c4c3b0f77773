"""Religion consistency between the generation probe and APX (paper section 6, Table 8).

The paper lists, for the top religion words of the generated profiles, the groups they were generated for,
next to the groups the same religion descriptors are associated with through APX, and finds the same groups.
:func:`religion_consistency` builds that table from the profiles' top words (``stereoprobe profiles``) and
the bias scores (``stereoprobe globalbias``): a word matches the religion descriptors (HolisticBias axis
``religion``) whose words it equals or prefixes (or that prefix it), at least 3 letters ("jewish" ~ "a Jew",
"shinto" ~ "Shintoist"); the APX groups of a word are the groups its descriptors flag by the reference rule,
and its lowest-scoring group (mean bias score over its descriptors).
"""

from __future__ import annotations

import re

import pandas as pd

from stereoprobe.globalbias.apx import strip_descriptor

COLUMNS = ["apx_model", "word", "generation_group", "apx_descriptors", "apx_flagged_groups", "apx_lowest_group",
           "agrees"]


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z'-]+", text.lower())


def _matches(word: str, descriptor: str) -> bool:
    w = word.lower().strip()
    for t in _tokens(strip_descriptor(descriptor)):
        common = min(len(t), len(w))
        if common >= 3 and (t.startswith(w) or w.startswith(t)):
            return True
    return False


def religion_consistency(top_words: pd.DataFrame, bias_scores: pd.DataFrame) -> pd.DataFrame:
    """One row per APX model x religion top word x generation group (see the module docstring); ``agrees``:
    the generation group is flagged for, or is the lowest-scoring group of, the word's descriptors."""
    words = top_words[top_words["feature"] == "religion"]
    if "direction" in words.columns:
        words = words[words["direction"] > 0]  # the groups a religion was generated for
    scores = bias_scores
    if "axis" in scores.columns:
        scores = scores[scores["axis"] == "religion"]
    rows = []
    models = scores["model"].unique() if "model" in scores.columns else [None]
    for model in models:
        sub = scores if model is None else scores[scores["model"] == model]
        for word, gen in words.groupby("word", sort=True):
            descs = sorted(d for d in sub["descriptor"].unique() if _matches(str(word), str(d)))
            ds = sub[sub["descriptor"].isin(descs)]
            flagged = sorted(set(ds.loc[ds["flagged"].fillna(False).astype(bool), "group"])) if len(ds) else []
            lowest = ds.groupby("group")["score"].mean().idxmin() if len(ds) else None
            for g in sorted(gen["group"].unique()):
                rows.append({"apx_model": model, "word": word, "generation_group": g,
                             "apx_descriptors": "; ".join(descs), "apx_flagged_groups": "; ".join(flagged),
                             "apx_lowest_group": lowest,
                             "agrees": bool(descs) and (g in flagged or g == lowest)})
    return pd.DataFrame(rows, columns=COLUMNS)
