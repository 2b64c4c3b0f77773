"""Fleiss' kappa against statsmodels and the hand-worked example of Fleiss (1971) as tabulated on Wikipedia."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from stereoprobe.stats.agreement import fleiss_kappa, ratings_to_counts

# Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories; kappa = 0.210.
WIKI_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_worked_example():
    assert fleiss_kappa(WIKI_TABLE) == pytest.approx(0.20993, abs=5e-5)


@pytest.mark.parametrize("seed", range(12))
def test_matches_statsmodels_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    n_subjects, n_raters, n_cats = rng.integers(2, 40), rng.integers(2, 6), rng.integers(2, 7)
    # correlated raters: each subject has a "true" category that raters pick with prob 0.6
    truth = rng.integers(0, n_cats, n_subjects)
    ratings = np.where(rng.random((n_subjects, n_raters)) < 0.6, truth[:, None],
                       rng.integers(0, n_cats, (n_subjects, n_raters)))
    table, _ = aggregate_raters(ratings)
    expected = sm_fleiss_kappa(table, method="fleiss")
    ours, cats = ratings_to_counts(ratings.tolist())
    assert fleiss_kappa(ours) == pytest.approx(expected, abs=1e-12)
    assert fleiss_kappa(table) == pytest.approx(expected, abs=1e-12)


def test_perfect_agreement_is_one_and_string_labels():
    ratings = [["man", "man", "man"], ["woman", "woman", "woman"], ["unknown", "unknown", "unknown"]]
    counts, cats = ratings_to_counts(ratings)
    assert cats == ["man", "woman", "unknown"]
    assert counts.tolist() == [[3, 0, 0], [0, 3, 0], [0, 0, 3]]
    assert fleiss_kappa(counts) == pytest.approx(1.0)


def test_hand_computed_two_raters():
    # 4 subjects, 2 raters: (a,a) (a,b) (b,b) (a,a)
    # P_i = 1, 0, 1, 1 -> P_bar = 0.75; p_a = 5/8, p_b = 3/8 -> P_e = 34/64; kappa = (0.75-34/64)/(30/64) = 14/30
    counts, _ = ratings_to_counts([["a", "a"], ["a", "b"], ["b", "b"], ["a", "a"]], categories=["a", "b"])
    assert fleiss_kappa(counts) == pytest.approx(14 / 30)


def test_undefined_cases_are_nan():
    assert math.isnan(fleiss_kappa(np.zeros((0, 3))))
    assert math.isnan(fleiss_kappa([[1, 0], [0, 1]]))  # a single rater
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))  # every rating in one category


def test_bad_input_raises():
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([[2, 1], [1, 1]])
    with pytest.raises(ValueError, match="2-D"):
        fleiss_kappa([1, 2, 3])
    with pytest.raises(ValueError, match="not one of the categories"):
        ratings_to_counts([["a", "z"]], categories=["a", "b"])


def test_jaccard_hand_worked():
    from stereoprobe.stats.agreement import jaccard

    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    assert jaccard({"a"}, {"a"}) == 1.0 and jaccard({"a"}, {"b"}) == 0.0
    assert math.isnan(jaccard(set(), set()))


def test_jaccard_matrix_by_hand():
    from stereoprobe.stats.agreement import jaccard_matrix

    m = jaccard_matrix([{"a", "b"}, {"b", "c", "d"}, set()])
    assert m[0, 1] == m[1, 0] == 1 / 4 and m[0, 0] == m[1, 1] == 1.0
    assert m[0, 2] == m[2, 1] == 0.0 and math.isnan(m[2, 2])


def test_spearman_brown_by_hand():
    from stereoprobe.stats.agreement import spearman_brown

    assert spearman_brown(0.5) == pytest.approx(2 / 3)  # 2 * 0.5 / 1.5
    assert spearman_brown(0.6, factor=3) == pytest.approx(1.8 / 2.2)
    assert math.isnan(spearman_brown(float("nan")))


def test_krippendorff_alpha_bootstrap_matches_resampling_the_units():
    """Weights = resampled units: each draw equals alpha of the table with the drawn rows repeated."""
    from stereoprobe.stats.agreement import krippendorff_alpha_bootstrap, krippendorff_alpha_from_counts

    rng = np.random.default_rng(3)
    counts = rng.multinomial(4, [0.2, 0.3, 0.5], size=15).astype(float)
    values = [1.0, 2.0, 3.0]
    res = krippendorff_alpha_bootstrap(counts, values, "interval", n_resamples=60, confidence_level=0.9, seed=5)
    draw = np.random.default_rng(5)
    naive = []
    for _ in range(60):
        rows = draw.integers(0, 15, size=15)
        a = krippendorff_alpha_from_counts(counts[rows], values, "interval")
        if not math.isnan(a):
            naive.append(a)
    assert res.bootstrap_distribution == pytest.approx(naive, abs=1e-12)
    assert res.confidence_interval == pytest.approx(tuple(np.quantile(naive, [0.05, 0.95])), abs=1e-12)
    assert all(math.isnan(b) for b in krippendorff_alpha_bootstrap(np.zeros((0, 3)), values).confidence_interval)
