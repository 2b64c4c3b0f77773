"""Inter-rater agreement: Fleiss' kappa (categorical labels), Krippendorff's alpha (any level, missing data) and
the Jaccard index of two sets (two raters' positive sets, two languages' or two models' associations).

Pure functions on arrays; no I/O. Fleiss' kappa is computed by ``statsmodels.stats.inter_rater.fleiss_kappa``
(after our checks of the table); Krippendorff's alpha is ours, validated against Krippendorff's (2011)
worked example and the ``krippendorff`` package in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from stereoprobe.stats.bootstrap import ClusterBootstrapResult
from stereoprobe.stats.common import NAN_INTERVAL, percentile_interval

__all__ = [
    "fleiss_kappa", "jaccard", "jaccard_matrix", "krippendorff_alpha", "krippendorff_alpha_bootstrap",
    "krippendorff_alpha_from_counts", "ratings_to_counts", "spearman_brown",
]


def ratings_to_counts(
    ratings: Sequence[Sequence[Hashable]], categories: Sequence[Hashable] | None = None
) -> tuple[np.ndarray, list[Hashable]]:
    """Turn per-subject ratings into a subjects × categories count table.

    Parameters
    ----------
    ratings : sequence of sequences
        ``ratings[i]`` holds the labels the raters gave subject ``i`` (one label per rater).
    categories : sequence, optional
        Column order of the table. Defaults to the labels in order of first appearance.
        A label absent from ``categories`` raises ``ValueError``.

    Returns
    -------
    counts : ndarray of int, shape (n_subjects, n_categories)
        ``counts[i, j]`` = number of raters who put subject ``i`` in category ``j``
        (the layout of ``statsmodels.stats.inter_rater.aggregate_raters``).
    categories : list
        The column labels.
    """
    if categories is None:
        seen: dict[Hashable, None] = {}
        for row in ratings:
            for label in row:
                seen.setdefault(label, None)
        categories = list(seen)
    index = {label: j for j, label in enumerate(categories)}
    counts = np.zeros((len(ratings), len(categories)), dtype=np.int64)
    for i, row in enumerate(ratings):
        for label in row:
            if label not in index:
                raise ValueError(f"rating {label!r} of subject {i} is not one of the categories {list(categories)}")
            counts[i, index[label]] += 1
    return counts, list(categories)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa for a fixed number of raters per subject.

    With ``N`` subjects, ``n`` raters per subject and ``n_ij`` raters assigning subject ``i`` to category ``j``
    (Fleiss 1971, "Measuring nominal scale agreement among many raters", Psychol. Bull. 76(5)):

    - per-subject agreement ``P_i = (sum_j n_ij**2 - n) / (n (n - 1))``, mean ``P_bar = mean_i P_i``;
    - category shares ``p_j = sum_i n_ij / (N n)``, chance agreement ``P_e = sum_j p_j**2``;
    - ``kappa = (P_bar - P_e) / (1 - P_e)``,

    computed by ``statsmodels.stats.inter_rater.fleiss_kappa(counts, method="fleiss")``.

    >>> round(fleiss_kappa([[2, 0], [0, 2], [1, 1]]), 4)  # P_bar = 2/3, P_e = 1/2: (2/3 − 1/2) / (1/2)
    0.3333

    Parameters
    ----------
    counts : array_like, shape (N, k)
        Subjects in rows, categories in columns (see :func:`ratings_to_counts`).

    Returns
    -------
    float
        Fleiss' kappa; NaN when it is undefined: no subjects, fewer than two raters, or ``P_e == 1``
        (every rating in one category, so chance agreement is already perfect).

    Raises
    ------
    ValueError
        If the table is not 2-D, holds negative counts, or subjects have different numbers of raters.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"counts must be a 2-D subjects x categories table, got shape {table.shape}")
    if table.size == 0 or table.shape[0] == 0:
        return math.nan
    if (table < 0).any():
        raise ValueError("counts must be non-negative")
    raters = table.sum(axis=1)
    n = raters[0]
    if not np.all(raters == n):
        bad = int(np.flatnonzero(raters != n)[0])
        raise ValueError(
            f"every subject needs the same number of raters: subject 0 has {n:g}, subject {bad} has {raters[bad]:g}"
        )
    if n < 2:
        return math.nan
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

    p_j = table.sum(axis=0) / (table.shape[0] * n)
    if math.isclose(float(np.square(p_j).sum()), 1.0):  # P_e = 1: every rating in one category
        return math.nan
    return float(statsmodels_fleiss_kappa(table, method="fleiss"))


Level = Literal["nominal", "ordinal", "interval", "ratio"]


def _delta2(values: np.ndarray, totals: np.ndarray, level: Level) -> np.ndarray:
    """Squared difference function delta^2(c, k) of Krippendorff (2011) for the sorted ``values``."""
    c = values[:, None]
    k = values[None, :]
    if level == "nominal":
        return (c != k).astype(float)
    if level == "interval":
        return (c - k) ** 2
    if level == "ratio":
        with np.errstate(invalid="ignore", divide="ignore"):
            d = ((c - k) / (c + k)) ** 2
        return np.nan_to_num(d, nan=0.0)  # 0/0 when c = k = 0
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(totals)])  # cum[i] = n_0 + ... + n_{i-1}
        i = np.arange(len(values))
        lo, hi = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
        between = cum[hi + 1] - cum[lo]  # sum of n_g for g from c to k inclusive
        return (between - (totals[:, None] + totals[None, :]) / 2) ** 2
    raise ValueError(f"unknown level of measurement {level!r} (nominal, ordinal, interval or ratio)")


def krippendorff_alpha_from_counts(
    counts: np.ndarray | Sequence[Sequence[float]],
    values: Sequence[float],
    level: Level = "interval",
    weights: np.ndarray | Sequence[float] | None = None,
) -> float:
    """Krippendorff's alpha from a units x values table of counts.

    ``counts[u, c]`` = number of coders who gave unit ``u`` the value ``values[c]`` (any number of coders per
    unit: missing data is simply absent). Units with fewer than two values are not pairable and drop out.
    Following Krippendorff (2011, "Computing Krippendorff's Alpha-Reliability", Annenberg School for
    Communication, University of Pennsylvania, section C), with ``m_u`` the number of values in unit ``u``:

    - coincidences ``o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1)``, ``n_c = sum_k o_ck``, ``n = sum_c n_c``;
    - ``alpha = 1 - D_o / D_e = 1 - (n - 1) sum_ck o_ck delta2_ck / sum_ck n_c n_k delta2_ck``;
    - ``delta2``: nominal ``[c != k]``; interval ``(c - k)^2``; ratio ``((c - k) / (c + k))^2``; ordinal
      ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` over the values in sorted order.

    Parameters
    ----------
    counts : array_like, shape (U, V)
        Non-negative counts.
    values : sequence of float, length V
        The value of each column (sorted or not; they are sorted internally).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement of the values.
    weights : array_like, shape (U,), optional
        Multiplicity of each unit (a bootstrap resample of units repeats units); default 1.

    Returns
    -------
    float
        Alpha (1 = perfect agreement, 0 = chance, negative = systematic disagreement); NaN when undefined:
        no pairable values, or a single value in all of the data (``D_e = 0``).
    """
    table = np.asarray(counts, dtype=float)
    vals = np.asarray(values, dtype=float)
    if table.ndim != 2 or table.shape[1] != len(vals):
        raise ValueError(f"counts must be units x values with {len(vals)} columns, got shape {table.shape}")
    if (table < 0).any():
        raise ValueError("counts must be non-negative")
    order = np.argsort(vals, kind="mergesort")
    vals, table = vals[order], table[:, order]
    m = table.sum(axis=1)
    w = np.where(m >= 2, 1.0 / np.where(m >= 2, m - 1, 1.0), 0.0)
    if weights is not None:
        w = w * np.asarray(weights, dtype=float)
    coinc = (table * w[:, None]).T @ table - np.diag((table * w[:, None]).sum(axis=0))
    n_c = coinc.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return math.nan
    d2 = _delta2(vals, n_c, level)
    d_e = float(n_c @ d2 @ n_c)
    if d_e <= 0:
        return math.nan
    d_o = float((coinc * d2).sum())
    return float(1.0 - (n - 1) * d_o / d_e)


def krippendorff_alpha(reliability_data: np.ndarray | Sequence[Sequence[float]], level: Level = "interval") -> float:
    """Krippendorff's alpha of a coders x units matrix of numeric values, NaN = missing.

    The layout of Krippendorff (2011)'s reliability data table (one row per coder, one column per unit) and of
    ``krippendorff.alpha(reliability_data=...)``. Booleans count as 0/1. See
    :func:`krippendorff_alpha_from_counts` for the formula and the return value.

    Examples
    --------
    Krippendorff (2011), section C (4 coders, 12 units, missing values): nominal 0.743, interval 0.849.

    >>> nan = float("nan")
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    ...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    ...         [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    ...         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    >>> round(krippendorff_alpha(data, "nominal"), 3), round(krippendorff_alpha(data, "interval"), 3)
    (0.743, 0.849)
    """
    data = np.asarray(reliability_data, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"reliability data must be a 2-D coders x units array, got shape {data.shape}")
    present = data[~np.isnan(data)]
    values = np.unique(present)
    if len(values) == 0:
        return math.nan
    index = np.searchsorted(values, data)
    counts = np.zeros((data.shape[1], len(values)))
    for coder in range(data.shape[0]):
        ok = ~np.isnan(data[coder])
        np.add.at(counts, (np.flatnonzero(ok), index[coder, ok]), 1.0)
    return krippendorff_alpha_from_counts(counts, values, level)


def jaccard(a: set, b: set) -> float:
    """Jaccard (1912) similarity ``|a ∩ b| / |a ∪ b|``; NaN when both sets are empty.

    >>> jaccard({1, 2, 3}, {2, 3, 4})
    0.5
    >>> jaccard(set(), set())
    nan
    """
    union = a | b
    return len(a & b) / len(union) if union else math.nan


def jaccard_matrix(sets: Sequence[set]) -> np.ndarray:
    """Symmetric matrix of :func:`jaccard` between every two of ``sets`` (NaN where both are empty).

    >>> jaccard_matrix([{1, 2}, {2, 3}, set()]).round(3).tolist()
    [[1.0, 0.333, 0.0], [0.333, 1.0, 0.0], [0.0, 0.0, nan]]
    """
    k = len(sets)
    out = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(i, k):
            out[i, j] = out[j, i] = jaccard(sets[i], sets[j])
    return out


def krippendorff_alpha_bootstrap(
    counts: np.ndarray | Sequence[Sequence[float]],
    values: Sequence[float],
    level: Level = "interval",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> ClusterBootstrapResult:
    """Percentile bootstrap interval of Krippendorff's alpha over units (Hayes & Krippendorff 2007,
    Commun. Methods Meas. 1:77–89, resample units).

    Each resample draws the ``U`` units with replacement (``numpy.random.default_rng(seed).integers``, one
    resample after the other), passes their multiplicities as ``weights`` to
    :func:`krippendorff_alpha_from_counts`; undefined resamples (a single value) are left out.

    >>> counts = [[2, 0], [0, 2], [2, 0], [1, 1], [0, 2], [2, 0]]
    >>> res = krippendorff_alpha_bootstrap(counts, [1, 2], "nominal", n_resamples=200)
    >>> bool(res.confidence_interval.low < krippendorff_alpha_from_counts(counts, [1, 2], "nominal")
    ...      < res.confidence_interval.high)
    True
    """
    c = np.asarray(counts, dtype=float)
    n = c.shape[0]
    if n == 0 or n_resamples < 1:
        return ClusterBootstrapResult(NAN_INTERVAL, np.empty(0), math.nan)
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_resamples):
        w = np.bincount(rng.integers(0, n, size=n), minlength=n)
        a = krippendorff_alpha_from_counts(c, values, level, weights=w)
        if not math.isnan(a):
            reps.append(a)
    draws = np.asarray(reps, dtype=float)
    se = float(np.std(draws, ddof=1)) if draws.size > 1 else math.nan
    return ClusterBootstrapResult(percentile_interval(draws, confidence_level), draws, se)


def spearman_brown(r: float, factor: float = 2.0) -> float:
    """Spearman–Brown prophecy (Spearman 1910; Brown 1910): reliability of a panel ``factor`` times larger,
    ``k r / (1 + (k − 1) r)``.

    >>> round(spearman_brown(0.5), 6), round(spearman_brown(0.6, factor=3), 6)  # 1/1.5, 1.8/2.2
    (0.666667, 0.818182)
    >>> spearman_brown(-1.0)  # two halves in perfect disagreement: undefined
    nan
    """
    if math.isnan(r) or 1 + (factor - 1) * r == 0:  # r = -1/(k-1): the prophecy is undefined, not a crash
        return math.nan
    return factor * r / (1 + (factor - 1) * r)
