"""Religion consistency between the generation probe and APX (paper section 6.3, Table 8).

The paper lists, for the top religion words of the generated profiles (Llama 3 70B), the groups they were
generated for, next to the groups the same religions are associated with through APX (Llama 3 8B), and finds
the same groups. :func:`religion_consistency` builds that table from the profiles' top words (``stereoprobe
profiles``) and the bias scores (``stereoprobe globalbias``):

- a word matches the religion descriptors whose words it equals or prefixes (or that prefix it), at least 3
  letters ("jewish" ~ "a Jew", "shinto" ~ "Shintoist"). Religion descriptors are those of every source
  dataset: HolisticBias descriptors of the axis ``religion`` and the descriptors of the datasets without axes
  (Ghavami & Peplau, StereoSet), so the Ghavami & Peplau "Muslim" (the only Muslim descriptor flagged for the
  Arab groups in the paper's Table 9) is matched next to HolisticBias' "a Muslim";
- groups are compared by a normalised key (:func:`group_key`): the upstream profile layout "('THAI', 'F')" and
  the APX layout "THAI_F" are the same group;
- the APX groups of a word are the groups that its descriptors flag by the reference rule, and its
  lowest-scoring group (mean bias score over its descriptors).
"""

from __future__ import annotations

import ast
import re

import pandas as pd

from stereoprobe.globalbias.apx import strip_descriptor

COLUMNS = ["apx_model", "word", "generation_group", "apx_descriptors", "apx_flagged_groups", "apx_lowest_group",
           "agrees"]
RELIGION_AXIS = "religion"


def group_key(group: object) -> str:
    """The normalised key of a gender-by-ethnicity group: "('THAI', 'F')", "THAI_F" and "thai_f" -> "THAI_F"
    (any other text: stripped and upper-cased)."""
    text = str(group).strip()
    if text.startswith("("):
        try:
            parts = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parts = None
        if isinstance(parts, tuple) and len(parts) == 2:
            return f"{str(parts[0]).strip()}_{str(parts[1]).strip()}".upper()
    return text.upper()


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z'-]+", text.lower())


def _matches(word: str, descriptor: str) -> bool:
    w = word.lower().strip()
    for t in _tokens(strip_descriptor(descriptor)):
        common = min(len(t), len(w))
        if common >= 3 and (t.startswith(w) or w.startswith(t)):
            return True
    return False


def religion_descriptors(bias_scores: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``bias_scores`` whose descriptor can name a religion: HolisticBias axis ``religion`` and
    the descriptors of datasets without axes (axis empty); without an ``axis`` column, every row."""
    if "axis" not in bias_scores.columns:
        return bias_scores
    axis = bias_scores["axis"]
    empty = axis.isna() | axis.astype(str).str.strip().isin(["", "nan", "None"])
    return bias_scores[empty | (axis == RELIGION_AXIS)]


def religion_consistency(top_words: pd.DataFrame, bias_scores: pd.DataFrame) -> pd.DataFrame:
    """One row per APX model x religion top word x generation group (see the module docstring); ``agrees``:
    the generation group is flagged for, or is the lowest-scoring group of, the word's descriptors. Groups
    are written as normalised keys (:func:`group_key`)."""
    words = top_words[top_words["feature"] == "religion"]
    if "direction" in words.columns:
        words = words[words["direction"] > 0]  # the groups a religion was generated for
    scores = religion_descriptors(bias_scores).copy()
    scores["group"] = scores["group"].map(group_key)
    rows = []
    models = scores["model"].unique() if "model" in scores.columns else [None]
    for model in models:
        sub = scores if model is None else scores[scores["model"] == model]
        for word, gen in words.groupby("word", sort=True):
            descs = sorted(d for d in sub["descriptor"].unique() if _matches(str(word), str(d)))
            ds = sub[sub["descriptor"].isin(descs)]
            flagged = sorted(set(ds.loc[ds["flagged"].fillna(False).astype(bool), "group"])) if len(ds) else []
            lowest = ds.groupby("group")["score"].mean().idxmin() if len(ds) else None
            for g in sorted({group_key(x) for x in gen["group"]}):
                rows.append({"apx_model": model, "word": word, "generation_group": g,
                             "apx_descriptors": "; ".join(descs), "apx_flagged_groups": "; ".join(flagged),
                             "apx_lowest_group": lowest,
                             "agrees": bool(descs) and (g in flagged or g == lowest)})
    return pd.DataFrame(rows, columns=COLUMNS)
