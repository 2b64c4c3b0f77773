import numpy as np
import pytest
from statsmodels.stats.contingency_tables import Table2x2

from stereoprobe.stats.effect import fraction_and_lift
from stereoprobe.stats.intervals import katz_log_rr_interval, lift_interval


def test_katz_against_statsmodels():
    a, b, c, d = 25, 75, 10, 90
    rr, lo, hi = katz_log_rr_interval(a, b, c, d, 0.95)
    t = Table2x2(np.array([[a, b], [c, d]]))
    slo, shi = t.riskratio_confint(alpha=0.05, method="normal")  # normal approximation of log RR = Katz
    assert rr == pytest.approx(t.riskratio)
    assert lo == pytest.approx(slo) and hi == pytest.approx(shi)


def test_katz_hand_worked():
    # RR = (20/100)/(10/100) = 2, se = sqrt(1/20 - 1/100 + 1/10 - 1/100) = sqrt(0.13)
    rr, lo, hi = katz_log_rr_interval(20, 80, 10, 90, 0.95)
    se = np.sqrt(0.13)
    assert rr == pytest.approx(2.0)
    assert lo == pytest.approx(2 * np.exp(-1.959963984540054 * se))
    assert hi == pytest.approx(2 * np.exp(1.959963984540054 * se))


def test_lift_interval_contains_point_and_maps_rr():
    t = np.array([[40, 20, 10], [10, 30, 30], [15, 15, 40]])
    lo, hi = lift_interval(t, 0.95)
    _, lift = fraction_and_lift(t)
    assert np.all(lo < lift) and np.all(lift < hi)
    # cell (0, 0) by hand: RR against the other rows, mapped by 1/(w + (1-w)/RR)
    a, b = 40, 30
    c, d = 25, 115
    _, rlo, rhi = katz_log_rr_interval(a, b, c, d, 0.95)
    w = 70 / 210
    assert lo[0, 0] == pytest.approx(1 / (w + (1 - w) / rlo))
    assert hi[0, 0] == pytest.approx(1 / (w + (1 - w) / rhi))


def test_lift_interval_coverage_by_simulation():
    rng = np.random.default_rng(1)
    p_row0, p_other, rows = 0.3, 0.1, np.array([60, 120])
    true = p_row0 / ((60 * p_row0 + 120 * p_other) / 180)
    cover = 0
    for _ in range(400):
        x0 = rng.binomial(rows[0], p_row0)
        x1 = rng.binomial(rows[1], p_other)
        t = np.array([[x0, rows[0] - x0], [x1, rows[1] - x1]])
        lo, hi = lift_interval(t, 0.95)
        cover += lo[0, 0] <= true <= hi[0, 0]
    assert 0.92 <= cover / 400 <= 0.99
