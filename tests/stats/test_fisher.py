"""Fisher tests against scipy and hand-worked examples."""

from itertools import product
from math import comb, prod

import numpy as np
import pytest
from scipy import stats

from stereoprobe.stats.fisher import (
    McCounter,
    clopper_pearson,
    cochran_ok,
    ffh_asymptotic_pvalue,
    ffh_log_pmf,
    fisher_2x2_two_sided,
    fisher_cells_greater,
    reference_mc_pvalue,
)


def _enumerate_ffh(table):
    """Brute-force exact FFH p-value of a 2×c table: enumerate every first row with the margins."""
    t = np.asarray(table)
    r1 = t[0].sum()
    cols = t.sum(axis=0)
    n = cols.sum()

    def prob(row):
        num = prod(comb(int(c), int(x)) for c, x in zip(cols, row))
        return num / comb(int(n), int(r1))

    p_obs = prob(t[0])
    total = 0.0
    for row in product(*[range(int(c) + 1) for c in cols]):
        if sum(row) == r1:
            pr = prob(row)
            if pr <= p_obs * (1 + 1e-7):
                total += pr
    return total


def test_log_pmf_matches_scipy_random_table():
    t = np.array([[8, 2, 3], [1, 5, 4]])
    d = stats.random_table(t.sum(axis=1), t.sum(axis=0))
    assert ffh_log_pmf(t) == pytest.approx(d.logpmf(t), rel=1e-12)


def test_2x2_exact_tea_tasting():
    # Fisher's lady tasting tea: P(X >= 3) = (16 + 1) / 70 one-sided; two-sided adds the mirror tail
    t = [[3, 1], [1, 3]]
    assert fisher_2x2_two_sided(t) == pytest.approx(34 / 70)
    assert fisher_cells_greater(t)[0, 0] == pytest.approx(17 / 70)


def test_cells_greater_equals_scipy_fisher_exact_greater():
    rng = np.random.default_rng(0)
    t = rng.integers(0, 30, size=(4, 5))
    p = fisher_cells_greater(t)
    n = t.sum()
    for i in range(4):
        for j in range(5):
            a = t[i, j]
            b = t[i].sum() - a
            c = t[:, j].sum() - a
            d = n - a - b - c
            ref = stats.fisher_exact([[a, b], [c, d]], alternative="greater").pvalue
            assert p[i, j] == pytest.approx(ref, rel=1e-9, abs=1e-300)


def test_reference_mc_is_scipy_monte_carlo():
    t = np.array([[8, 2, 3], [1, 5, 4]])
    mine = reference_mc_pvalue(t, n_resamples=500_000, seed=42)
    ref = stats.fisher_exact(t, method=stats.MonteCarloMethod(n_resamples=500_000, rng=np.random.default_rng(42)))
    assert mine == ref.pvalue
    # close to the exact enumeration
    assert mine == pytest.approx(_enumerate_ffh(t), abs=3e-3)


@pytest.mark.parametrize(
    "table",
    [
        [[8, 2, 3], [1, 5, 4]],  # Patefield
        [[30, 12, 4, 9], [11, 25, 14, 6], [9, 8, 20, 30]],  # Patefield
        [[3, 1, 2, 1, 1, 2], [1, 2, 1, 3, 2, 1], [2, 2, 1, 1, 3, 2]],  # Boyett (sparse)
    ],
)
def test_counter_replays_reference_stream(table):
    t = np.array(table)
    c = McCounter(t, seed=42)
    for k in (128, 256, 1024, 20_000):
        c.draw_to(k)
        direct = stats.fisher_exact(t, method=stats.MonteCarloMethod(n_resamples=k, rng=np.random.default_rng(42)))
        assert c.pvalue == direct.pvalue


def test_counter_drawing_ahead_reads_the_same_stream():
    """Boyett's tables drawn ahead (twice the asked total, up to the limit) and read at the next totals: each
    total's p-value is scipy's own with that many resamples."""
    t = np.array([[3, 1, 2, 1, 1, 2], [1, 2, 1, 3, 2, 1], [2, 2, 1, 1, 3, 2]])
    c = McCounter(t, seed=42, ahead=2, limit=3000)
    assert not c.continuable
    for k in (128, 256, 512, 1024, 2048, 3000):
        c.draw_to(k)
        direct = stats.fisher_exact(t, method=stats.MonteCarloMethod(n_resamples=k, rng=np.random.default_rng(42)))
        assert c.pvalue == direct.pvalue
    assert c._hits.size == 3000  # 128, then 512 (read at 512), 2048 (read at 1024, 2048), then the limit


def test_sparse_table_where_scipy_fails_uses_replay():
    t = np.array([[1, 1, 1, 0, 1], [0, 1, 1, 1, 1]])  # more cells than observations would be needed: 10 > 8
    assert t.size > t.sum()
    p = reference_mc_pvalue(t, 2000, 42)
    c = McCounter(t, 42)
    c.draw_to(2000)
    assert p == c.pvalue
    assert 0 < p <= 1


def test_asymptotic_close_to_exact_on_large_table():
    t = np.array([[25, 30, 20], [20, 18, 28]])
    assert cochran_ok(t)
    exact = _enumerate_ffh(t)
    assert ffh_asymptotic_pvalue(t) == pytest.approx(exact, rel=0.15)


def test_cochran_rule():
    assert cochran_ok([[10, 10], [10, 10]])
    assert not cochran_ok([[1, 10], [0, 10]])


def test_clopper_pearson_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = clopper_pearson(7, 50, 0.05)
    slo, shi = proportion_confint(7, 50, alpha=0.05, method="beta")
    assert lo == pytest.approx(slo) and hi == pytest.approx(shi)
    lo0, hi0 = clopper_pearson(0, 50, 0.05)
    assert lo0 == 0.0 and hi0 == pytest.approx(1 - (0.025) ** (1 / 50))


def test_hand_worked_2x2_hypergeometric():
    # [[2, 1], [0, 3]]: n = 6, row 3, column 2; P(a >= 2) = C(2,2) C(4,1) / C(6,3) = 4/20
    assert fisher_cells_greater([[2, 1], [0, 3]])[0, 0] == pytest.approx(4 / 20)
    # [[1, 2], [1, 2]]: P(a >= 1) = 1 - C(2,0) C(4,3) / C(6,3) = 1 - 4/20
    assert fisher_cells_greater([[1, 2], [1, 2]])[0, 0] == pytest.approx(1 - 4 / 20)


@pytest.mark.parametrize(
    "table", [[[8, 2, 3], [1, 5, 4]], [[3, 1], [1, 3]], [[20, 10], [10, 20]], [[25, 30, 20], [20, 18, 28]],
              [[5, 6], [7, 2], [3, 9]]],
)
def test_exact_enumeration_against_brute_force(table):
    from stereoprobe.stats.fisher import exact_ffh_pvalue

    t = np.array(table)
    brute = _enumerate_ffh(t if t.shape[0] == 2 else t.T)
    assert exact_ffh_pvalue(t) == pytest.approx(brute, rel=1e-9)
    if t.shape == (2, 2):
        assert exact_ffh_pvalue(t) == pytest.approx(stats.fisher_exact(t).pvalue, rel=1e-9)


def test_exact_enumeration_declines_large_and_wide_tables():
    from stereoprobe.stats.fisher import exact_ffh_pvalue

    assert exact_ffh_pvalue([[100, 120, 80, 90, 60], [90, 100, 95, 70, 80]], max_tables=1000) is None
    assert exact_ffh_pvalue([[1, 2, 3], [3, 2, 1], [1, 1, 1]]) is None


def test_memory_layout_does_not_change_ties():
    # a Fortran-ordered table sums its log-factorials in another order; the mirror table's pmf is a near-exact
    # tie and must be counted as scipy counts it (scipy works on the C-ordered ravel)
    from stereoprobe.stats.fisher import exact_ffh_pvalue

    t = np.asfortranarray(np.array([[39, 13], [24, 22]]))
    ref = stats.fisher_exact(np.ascontiguousarray(t), method=stats.MonteCarloMethod(
        n_resamples=20_000, rng=np.random.default_rng(42))).pvalue
    assert exact_ffh_pvalue(t) == pytest.approx(stats.fisher_exact(t).pvalue, rel=1e-9)
    c = McCounter(t, 42)
    c.draw_to(20_000)
    assert c.pvalue == ref


@pytest.mark.parametrize("table", [[[8, 2, 3], [1, 5, 4]], [[39, 13], [24, 22]],
                                   [[30, 12, 4, 9], [11, 25, 14, 6], [9, 8, 20, 30]], [[0, 3, 1], [2, 0, 5], [1, 1, 0]]])
def test_counter_observed_pmf_and_cut_are_scipys(table):
    """The observed table's pmf (the cut every draw is compared with) is ``random_table(R, C).pmf(T)`` bit for
    bit, and so is each drawn table's."""
    t = np.array(table)
    c = McCounter(t, 42)
    dist = stats.random_table(t.sum(axis=1), t.sum(axis=0))
    assert c._obs == dist.pmf(t)
    sims = stats.random_table(t.sum(axis=1), t.sum(axis=0), seed=np.random.default_rng(7)).rvs(size=500)
    want = dist.pmf(sims) <= dist.pmf(t) + abs(np.finfo(float).eps * 100 * dist.pmf(t))
    np.testing.assert_array_equal(c._hit(sims), want)


def test_quantiles_are_scipys_public_ones_bit_for_bit():
    """The sequential test's quantiles go to scipy's ufuncs directly; the values are ``binom.ppf`` /
    ``beta.ppf`` exactly (they decide when a Monte Carlo test stops, hence its reported p-value)."""
    from stereoprobe.stats.fisher import binom_quantile

    rng = np.random.default_rng(45)
    n = np.concatenate([[0, 1, 500_000], rng.integers(0, 500_000, size=200)]).astype(float)
    p = np.concatenate([[0.0, 1.0, 0.5], rng.beta(0.3, 3, size=200)])
    for q in (1e-6, 1 - 1e-6, 0.3):
        np.testing.assert_array_equal(binom_quantile(q, n, p), stats.binom.ppf(q, n, p))
    k = rng.integers(1, 300_000, size=300).astype(float)
    x = np.minimum(k, rng.integers(0, 2000, size=300)).astype(float)
    x[:3], k[:3] = [0, 5, 7], [5, 5, 9]
    lo, hi = clopper_pearson(x, k, 1e-7)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(lo, np.where(x > 0, stats.beta.ppf(5e-8, x, k - x + 1), 0.0))
        np.testing.assert_array_equal(hi, np.where(x < k, stats.beta.ppf(1 - 5e-8, x + 1, k - x), 1.0))
