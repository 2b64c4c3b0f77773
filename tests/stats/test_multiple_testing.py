import numpy as np
import pytest
from scipy.stats import false_discovery_control
from statsmodels.stats.multitest import multipletests

from stereoprobe.stats.multiple_testing import adjust_bh, adjust_by, bh_reject


def test_bh_hand_worked():
    # sorted .005 .01 .03 .04, m = 4: 4p/k = .02 .02 .04 .04
    assert adjust_bh([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_by_hand_worked():
    c = 1 + 1 / 2 + 1 / 3
    assert adjust_by([0.01, 0.02, 0.2]) == pytest.approx([min(1, 0.03 * c), min(1, 0.03 * c), min(1, 0.2 * c)])


@pytest.mark.parametrize("m", [1, 2, 7, 18, 200])
def test_against_scipy_and_statsmodels(m):
    rng = np.random.default_rng(m)
    p = np.concatenate([rng.uniform(size=m // 2), rng.uniform(0, 0.01, size=m - m // 2)])
    assert adjust_bh(p) == pytest.approx(false_discovery_control(p, method="bh"))
    assert adjust_by(p) == pytest.approx(false_discovery_control(p, method="by"))
    assert adjust_bh(p) == pytest.approx(multipletests(p, method="fdr_bh")[1])
    assert adjust_by(p) == pytest.approx(multipletests(p, method="fdr_by")[1])


def test_reject_and_errors():
    assert list(bh_reject([0.01, 0.5], 0.05)) == [True, False]
    with pytest.raises(ValueError):
        adjust_bh([0.1, np.nan])
    assert adjust_bh(np.zeros((2, 3))).shape == (2, 3)


@pytest.mark.parametrize("seed", range(40))
def test_bit_identical_to_scipy(seed):
    """The NumPy arithmetic gives scipy's doubles exactly (the association mining's p_bh columns are compared
    to the last digit with tables written through scipy), ties, zeros and ones included."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 60))
    p = [rng.uniform(size=m), rng.uniform(0, 1e-3, size=m), rng.beta(0.2, 1, size=m)][seed % 3]
    if seed % 4 == 0:  # ties and the ends of [0, 1]
        p[rng.integers(0, m, size=m // 3)] = p[0]
        p[: min(2, m)] = [0.0, 1.0][: min(2, m)]
    for method, ours in (("bh", adjust_bh), ("by", adjust_by)):
        want = np.minimum(false_discovery_control(p, method=method), 1.0)
        np.testing.assert_array_equal(ours(p), want)
    np.testing.assert_array_equal(bh_reject(p, 0.05), false_discovery_control(p, method="bh") < 0.05)


def test_single_and_shaped_like_scipy():
    np.testing.assert_array_equal(adjust_bh([0.3]), [0.3])
    p = np.random.default_rng(3).uniform(size=(3, 4))
    np.testing.assert_array_equal(adjust_by(p), false_discovery_control(p.ravel(), method="by").reshape(3, 4))
