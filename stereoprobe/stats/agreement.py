"""Inter-rater agreement for categorical labels (extractor ensembles, refusal judges).

Pure functions on arrays; no I/O. Validated against ``statsmodels.stats.inter_rater`` in the tests.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["fleiss_kappa", "ratings_to_counts"]


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
    - ``kappa = (P_bar - P_e) / (1 - P_e)``.

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
    n_subjects = table.shape[0]
    p_i = (np.square(table).sum(axis=1) - n) / (n * (n - 1))
    p_bar = float(p_i.mean())
    p_j = table.sum(axis=0) / (n_subjects * n)
    p_e = float(np.square(p_j).sum())
    if math.isclose(p_e, 1.0):
        return math.nan
    return (p_bar - p_e) / (1.0 - p_e)
