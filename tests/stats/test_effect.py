import math

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from stereoprobe.stats.effect import cramers_v_corrected, effect_category, fraction_and_lift, pearson_chi2


def _bergsma(table):
    """Bergsma (2013) written from the paper's formulas on scipy's chi-square."""
    t = np.asarray(table, float)
    n = t.sum()
    r, k = t.shape
    chi2 = chi2_contingency(t, correction=False)[0]
    phi2c = max(0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    rc = r - (r - 1) ** 2 / (n - 1)
    kc = k - (k - 1) ** 2 / (n - 1)
    return math.sqrt(phi2c / min(kc - 1, rc - 1))


@pytest.mark.parametrize("seed", range(4))
def test_chi2_and_v_against_scipy(seed):
    rng = np.random.default_rng(seed)
    t = rng.integers(1, 40, size=(3 + seed % 2, 4 + seed))
    assert pearson_chi2(t) == pytest.approx(chi2_contingency(t, correction=False).statistic)
    assert cramers_v_corrected(t) == pytest.approx(_bergsma(t))


def test_v_hand_worked():
    assert cramers_v_corrected([[20, 0], [0, 20]]) == pytest.approx(1.0)  # perfect association
    assert cramers_v_corrected([[10, 10], [10, 10]]) == 0.0  # independence
    # [[30, 10], [10, 30]]: chi2 = 20, n = 80, phi2 = .25, phi2* = .25 - 1/79, r* = k* = 2 - 1/79
    v = math.sqrt((0.25 - 1 / 79) / (1 - 1 / 79))
    assert cramers_v_corrected([[30, 10], [10, 30]]) == pytest.approx(v)


def test_effect_categories_df_adjusted():
    assert effect_category(0.2, 1) == "small"
    assert effect_category(0.2, 4) == "medium"  # thresholds .05 .15 .25
    assert effect_category(0.26, 4) == "large"
    assert effect_category(0.04, 4) == "negligible"
    assert effect_category(0.3, 1) == "medium"
    with pytest.raises(ValueError):
        effect_category(0.3, 0)


def test_fraction_and_lift_hand_worked():
    frac, lift = fraction_and_lift([[30, 10], [10, 30]])
    assert frac[0, 0] == pytest.approx(0.75)
    assert lift[0, 0] == pytest.approx(30 * 80 / (40 * 40))
    _, lift_ind = fraction_and_lift([[10, 20], [30, 60]])
    assert lift_ind == pytest.approx(np.ones((2, 2)))  # independent table: lift 1
