"""Example stories of each association (:func:`pick_examples`), chosen in one columnar pass per compared
attribute instead of one boolean mask over a model's stories per association."""

from __future__ import annotations

import numpy as np
import pandas as pd

from stereoprobe.stereotales.contract import ALL_SLICE, KEY_COLUMNS, association_id

EXAMPLE_COLUMNS = ["association_id", "model", "slice", *KEY_COLUMNS, "language", "sample_id", "epoch"]


def _codes(col: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of ``col`` whose order is the order ``sort_values`` gives the column (a categorical's
    category order, else the values sorted), from 1 (0: a missing value), and the values they stand for."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy().astype(np.int64) + 1, col.cat.categories
    codes, uniq = pd.factorize(col, sort=True)
    return codes.astype(np.int64) + 1, uniq


def _lookup(index: pd.Index, values: pd.Series) -> np.ndarray:
    """The code (as :func:`_codes`) of each of ``values`` in ``index`` (0: absent, so it matches no story)."""
    return np.asarray(index.get_indexer(pd.Index(values.astype(object))), dtype=np.int64) + 1


def _story_order(complied: pd.DataFrame, m: np.ndarray, t: np.ndarray, lang: np.ndarray) -> np.ndarray:
    """Each story's position in the order the examples are taken from: per (model, prompted attribute), by
    sample id and epoch within a language, the first story of each language, then the second, ..."""
    by_id = complied.reset_index(drop=True).sort_values(["sample_id", "epoch"]).index.to_numpy()
    group = (m[by_id] * (t.max() + 1) + t[by_id]) * (lang.max() + 1) + lang[by_id]
    srt = np.argsort(group, kind="stable")
    start = np.r_[True, group[srt][1:] != group[srt][:-1]]
    rank_sorted = np.arange(len(srt)) - np.maximum.accumulate(np.where(start, np.arange(len(srt)), 0))
    rank = np.empty(len(by_id), dtype=np.int64)
    rank[by_id[srt]] = rank_sorted
    pos = np.empty(len(rank), dtype=np.int64)
    pos[np.lexsort((lang, rank, t, m))] = np.arange(len(rank))
    return pos


def pick_examples(frame: pd.DataFrame, associations: pd.DataFrame, per_association: int = 3) -> pd.DataFrame:
    """Up to ``per_association`` stories per association row (model, slice, A=a → B=b) that show it.

    A story shows the association when it was not refused, was prompted with A = a and its extracted B is b
    (same model; same language unless the slice is global). Chosen deterministically (by sample id and epoch
    within a language, spread over the languages of a global slice: the first story of each language, then
    the second, ...). Rows: associations grouped by (model, A) in order of first appearance, each
    association's stories in that order.
    """
    if associations.empty or frame.empty:
        return pd.DataFrame(columns=EXAMPLE_COLUMNS)
    complied = frame[~frame["refused"].astype(bool)]
    (m, m_names), (t, t_names) = _codes(complied["model"]), _codes(complied["target_attribute"])
    (lang, l_names), (avk, a_names) = _codes(complied["language"]), _codes(complied["attribute_value_key"])
    pos = _story_order(complied, m, t, lang)
    assoc = associations.reset_index(drop=True)
    group = assoc.groupby(["model", "base_attribute"], sort=False).ngroup().to_numpy()
    a_m, a_t = _lookup(m_names, assoc["model"]), _lookup(t_names, assoc["base_attribute"])
    a_avk = _lookup(a_names, assoc["base_value"])
    is_global = (assoc["slice"] == ALL_SLICE).to_numpy()
    a_lang = np.where(is_global, len(l_names) + 1, _lookup(l_names, assoc["slice"]))  # + 1: "all languages"
    hits: list[tuple[np.ndarray, np.ndarray]] = []  # (association row, story row) pairs
    for b in pd.unique(assoc["compared_attribute"]):
        known = (a_m > 0) & (a_t > 0) & (a_avk > 0) & (a_lang > 0)
        rows = np.flatnonzero((assoc["compared_attribute"] == b).to_numpy() & known)
        if b not in complied.columns or not len(rows):
            continue
        bv, b_names = _codes(complied[b])
        a_b = _lookup(b_names, assoc["compared_value"].iloc[rows])
        rows, a_b = rows[a_b > 0], a_b[a_b > 0]
        dims = [len(m_names) + 1, len(t_names) + 1, len(a_names) + 1, len(b_names) + 1, len(l_names) + 2]
        story_key = np.ravel_multi_index((m, t, avk, bv, lang), dims)
        story_all = np.ravel_multi_index((m, t, avk, bv, np.full(len(m), len(l_names) + 1)), dims)
        want = np.ravel_multi_index((a_m[rows], a_t[rows], a_avk[rows], a_b, a_lang[rows]), dims)
        hits += _first_hits(rows, want, story_key, story_all, pos, per_association)
    return _example_rows(assoc, complied, hits, group)


def _first_hits(rows: np.ndarray, want: np.ndarray, story_key: np.ndarray, story_all: np.ndarray, pos: np.ndarray,
                k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each association row (``rows``, its key ``want``), the first ``k`` stories (by ``pos``) whose key
    (``story_key``, or ``story_all`` for a global slice) is ``want``."""
    out = []
    for keys in (story_key, story_all):
        stories = np.flatnonzero(np.isin(keys, want))
        if not len(stories):
            continue
        srt = stories[np.lexsort((pos[stories], keys[stories]))]
        key = keys[srt]
        start = np.r_[True, key[1:] != key[:-1]]
        rank = np.arange(len(srt)) - np.maximum.accumulate(np.where(start, np.arange(len(srt)), 0))
        srt, key = srt[rank < k], key[rank < k]
        first = np.searchsorted(key, want, side="left")
        last = np.searchsorted(key, want, side="right")
        for r, f, e in zip(rows, first, last):
            if e > f:
                out.append((np.full(e - f, r), srt[f:e]))
    return out


def _example_rows(assoc: pd.DataFrame, complied: pd.DataFrame, hits: list[tuple[np.ndarray, np.ndarray]],
                  group: np.ndarray) -> pd.DataFrame:
    """The examples table: one row per (association, story), associations in (model, A) group order."""
    if not hits:
        return pd.DataFrame(columns=EXAMPLE_COLUMNS)
    a_rows = np.concatenate([h[0] for h in hits])
    s_rows = np.concatenate([h[1] for h in hits])
    seq = np.concatenate([np.arange(len(h[1])) for h in hits])
    order = np.lexsort((seq, a_rows, group[a_rows]))
    a_rows, s_rows = a_rows[order], s_rows[order]
    a = assoc.iloc[a_rows]
    s = complied.iloc[s_rows]
    out = []
    for rec, lang, sid, ep in zip(a[["model", "slice", *KEY_COLUMNS]].itertuples(index=False),
                                  s["language"].tolist(), s["sample_id"].tolist(), s["epoch"].tolist()):
        out.append({"association_id": association_id(rec.base_attribute, rec.base_value, rec.compared_attribute,
                                                     rec.compared_value),
                    "model": rec.model, "slice": rec.slice, "base_attribute": rec.base_attribute,
                    "base_value": rec.base_value, "compared_attribute": rec.compared_attribute,
                    "compared_value": rec.compared_value, "language": lang, "sample_id": sid, "epoch": int(ep)})
    return pd.DataFrame(out, columns=EXAMPLE_COLUMNS)
