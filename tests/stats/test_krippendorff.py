"""Krippendorff's alpha against the worked examples of Krippendorff (2011) and the ``krippendorff`` package.

Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for Communication,
University of Pennsylvania. Example A (2 coders, binary data): alpha = 0.095. Example C (4 coders, 12 units,
values 1-5 with missing data): nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from stereoprobe.stats.agreement import krippendorff_alpha, krippendorff_alpha_from_counts

NAN = math.nan
EXAMPLE_A = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]
EXAMPLE_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def test_example_a_binary():
    assert krippendorff_alpha(EXAMPLE_A, "nominal") == pytest.approx(0.095, abs=5e-4)


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_example_c_published_values(level, published):
    assert krippendorff_alpha(EXAMPLE_C, level) == pytest.approx(published, abs=5e-4)


def test_example_c_nominal_by_hand():
    # Pairable values per value (n_c): 1 -> 9, 2 -> 13, 3 -> 10, 4 -> 5, 5 -> 3 (n = 40; unit 12 has one value).
    # Off-diagonal coincidences (ordered pairs of different values / (m_u - 1)): unit 2 (2,2,3,2): 6/3 = 2;
    # unit 6 (1,2,3,4): 12/3 = 4; unit 8 (1,1,2,1): 6/3 = 2 -> 8. Every other unit agrees.
    # alpha_nominal = 1 - (n - 1) * 8 / (n^2 - sum n_c^2) = 1 - 39 * 8 / (1600 - 384).
    n_c = np.array([9, 13, 10, 5, 3], dtype=float)
    n = n_c.sum()
    alpha = 1 - (n - 1) * 8.0 / (n * n - (n_c**2).sum())
    assert alpha == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(EXAMPLE_C, "nominal") == pytest.approx(alpha, abs=1e-12)


def test_counts_form_and_weights_equal_repeated_units():
    data = np.array(EXAMPLE_C)
    values = np.array([1.0, 2, 3, 4, 5])
    counts = np.stack([[np.sum(data[:, u] == v) for v in values] for u in range(data.shape[1])])
    assert krippendorff_alpha_from_counts(counts, values, "interval") == pytest.approx(0.849, abs=5e-4)
    # weights = a unit repeated: same as stacking it twice
    w = np.ones(len(counts))
    w[1] = 2
    doubled = np.vstack([counts, counts[1:2]])
    assert krippendorff_alpha_from_counts(counts, values, "ordinal", weights=w) == pytest.approx(
        krippendorff_alpha_from_counts(doubled, values, "ordinal"), abs=1e-12)
    # column order does not matter
    rev = counts[:, ::-1]
    assert krippendorff_alpha_from_counts(rev, values[::-1], "ordinal") == pytest.approx(0.815, abs=5e-4)


def test_undefined_cases():
    assert math.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]], "interval"))  # one value only: D_e = 0
    assert math.isnan(krippendorff_alpha([[1, NAN], [NAN, 2]], "interval"))  # nothing pairable
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 3]], "interval") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(EXAMPLE_C, "cardinal")  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_matches_krippendorff_package(seed, level):
    kp = pytest.importorskip("krippendorff")  # optional, test-only reference (pip install krippendorff)
    rng = np.random.default_rng(seed)
    coders, units = rng.integers(2, 7), rng.integers(5, 60)
    truth = rng.integers(1, 6, units)
    data = np.where(rng.random((coders, units)) < 0.6, truth, rng.integers(1, 6, (coders, units))).astype(float)
    data[rng.random((coders, units)) < 0.2] = np.nan
    expected = kp.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-9)
