"""One-sample and Welch t-tests against scipy, with the degenerate cases by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from stereoprobe.stats.ttest import one_sample_ttest, welch_ttest


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_one_sample_matches_scipy(alternative):
    rng = np.random.default_rng(1)
    for n in (2, 7, 60):
        x = rng.normal(0.2, 1.0, n)
        res, ref = one_sample_ttest(x, alternative=alternative), stats.ttest_1samp(x, 0.0, alternative=alternative)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10) and res.df == ref.df
        ci = stats.ttest_1samp(x, 0.0).confidence_interval(confidence_level=0.9)
        assert res.confidence_interval(0.9) == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_one_sample_degenerate_cases():
    same = one_sample_ttest([0.5, 0.5, 0.5])  # no variance, mean != 0: p = 0, interval [0.5, 0.5]
    assert same.pvalue == 0.0 and same.confidence_interval() == (0.5, 0.5)
    assert one_sample_ttest([0.0, 0.0]).pvalue == 1.0
    one = one_sample_ttest([2.0])
    assert one.estimate == 2.0 and math.isnan(one.pvalue) and all(math.isnan(b) for b in one.confidence_interval())


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_welch_matches_scipy(alternative):
    rng = np.random.default_rng(1)
    for _ in range(5):
        a, b = rng.normal(0, 1, 10), rng.normal(0.3, 2, 30)
        ref = stats.ttest_ind(a, b, equal_var=False, alternative=alternative)
        res = welch_ttest(a, b, alternative=alternative)
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-12) and res.df == pytest.approx(ref.df, rel=1e-12)
        ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(confidence_level=0.95)
        assert res.confidence_interval() == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_welch_degenerate_and_checked():
    assert math.isnan(welch_ttest([1.0], [1.0, 2.0]).pvalue)
    assert math.isnan(welch_ttest([1.0, 1.0], [2.0, 2.0]).pvalue)
    with pytest.raises(ValueError, match="alternative"):
        welch_ttest([1.0, 2.0], [2.0, 4.0], alternative="lower")


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_many_welch_tests_at_once_are_the_tests_one_at_a_time_bit_for_bit(alternative: str) -> None:
    from stereoprobe.stats.ttest import welch_ttest, welch_ttests

    rng = np.random.default_rng(11)
    pairs = [(rng.normal(0.3 * k % 1, 1 + k % 3, 2 + k % 9), rng.normal(0, 1, 3 + k % 40)) for k in range(300)]
    pairs += [(np.array([1.0]), rng.normal(0, 1, 5)),  # too few values: NaN, no p-value
              (np.full(4, 2.0), np.full(6, 2.0)),  # no variance in either
              (np.array([]), rng.normal(0, 1, 3))]
    at_once = welch_ttests(pairs, alternative=alternative)  # type: ignore[arg-type]
    one_by_one = [welch_ttest(x, y, alternative=alternative) for x, y in pairs]  # type: ignore[arg-type]

    def as_bytes(results: list) -> bytes:
        return np.array([[r.statistic, r.pvalue, r.df, r.estimate, r.standard_error] for r in results]).tobytes()

    assert as_bytes(at_once) == as_bytes(one_by_one)
    assert sum(not np.isnan(r.pvalue) for r in at_once) == 300
    assert welch_ttests([]) == []
