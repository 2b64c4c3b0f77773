"""Fisher tests for contingency tables: exact 2×2, r×c Fisher–Freeman–Halton (reference Monte Carlo,
sequential Monte Carlo, asymptotic), and the vectorised one-sided 2×2 test of every cell of a table.

The Fisher–Freeman–Halton (FFH) test (Freeman & Halton 1951, Biometrika 38:141–149) conditions on both
margins of an r×c table ``T``; under independence ``T`` is multivariate hypergeometric:

    P(T) = (∏_i R_i! ∏_j C_j!) / (n! ∏_ij n_ij!)

and the p-value is ``P_0(P(T') <= P(T))``: the null probability of a table at most as probable as the
observed one. Because the margins are fixed, ``P(T') <= P(T)`` is equivalent to
``S(T') >= S(T)`` with ``S(T) = Σ_ij log(n_ij!)``, which is what the samplers below compare.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

__all__ = [
    "ffh_log_pmf",
    "ffh_statistic",
    "ffh_asymptotic_pvalue",
    "fisher_2x2_two_sided",
    "fisher_cells_greater",
    "reference_mc_pvalue",
    "exact_ffh_pvalue",
    "McCounter",
    "clopper_pearson",
    "binom_quantile",
    "expected_counts",
    "cochran_ok",
]


def _as_table(table) -> np.ndarray:
    t = np.asarray(table)
    if t.ndim != 2:
        raise ValueError(f"a contingency table must be 2-D, got shape {t.shape}")
    if np.any(t < 0):
        raise ValueError("a contingency table must have non-negative counts")
    # C order: scipy computes the observed pmf from ``table.ravel()`` reshaped, i.e. in C order, and the sum
    # of the log-factorials rounds differently in another order, which flips near-exact ties
    return np.ascontiguousarray(t, dtype=np.int64)


def ffh_statistic(table) -> float:
    """``S(T) = Σ_ij log(n_ij!)``; larger means less probable under the fixed-margin null."""
    t = _as_table(table)
    return float(special.gammaln(t + 1.0).sum())


def ffh_log_pmf(table) -> float:
    """Log of the multivariate hypergeometric probability of ``table`` given its margins.

    ``log P(T) = Σ log R_i! + Σ log C_j! − log n! − Σ log n_ij!`` (equals
    ``log scipy.stats.random_table(R, C).pmf(T)``).

    >>> round(ffh_log_pmf([[8, 2], [1, 5]]), 6)  # log(10! 6! 9! 7! / (16! 8! 2! 1! 5!))
    -3.746449
    """
    t = _as_table(table)
    g = special.gammaln
    return float(
        g(t.sum(axis=1) + 1.0).sum() + g(t.sum(axis=0) + 1.0).sum() - g(t.sum() + 1.0) - g(t + 1.0).sum()
    )


def expected_counts(table) -> np.ndarray:
    """Expected counts under independence, ``E_ij = R_i C_j / n``."""
    t = _as_table(table).astype(float)
    n = t.sum()
    return np.outer(t.sum(axis=1), t.sum(axis=0)) / n


def cochran_ok(table, min_expected: float = 1.0, min_share_ge5: float = 0.8) -> bool:
    """Cochran's (1954, Biometrics 10:417–451) rule for chi-square approximations: every expected count
    ≥ ``min_expected`` (1) and at least ``min_share_ge5`` (80 %) of them ≥ 5."""
    e = expected_counts(table)
    return bool(e.min() >= min_expected and (e >= 5).mean() >= min_share_ge5)


def ffh_asymptotic_pvalue(table) -> float:
    """Large-sample p-value of the Fisher–Freeman–Halton test.

    The statistic ``FH = −2 log(γ P(T))`` with
    ``γ = (2π)^{(r−1)(c−1)/2} n^{−(rc−1)/2} ∏_i R_i^{(c−1)/2} ∏_j C_j^{(r−1)/2}``
    is asymptotically χ² with (r−1)(c−1) degrees of freedom (Freeman & Halton 1951; Mehta & Patel 1986,
    ACM TOMS 12:154–161; the form used by StatXact and SAS PROC FREQ's ``FISHER`` asymptotic option).
    ``γ P(T)`` is the ratio of the hypergeometric pmf to its multivariate-normal approximation at the mode,
    so the test orders tables exactly like the exact test.
    """
    t = _as_table(table)
    t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0]
    r, c = t.shape
    if r < 2 or c < 2:
        return 1.0
    n = float(t.sum())
    df = (r - 1) * (c - 1)
    log_gamma = (
        0.5 * df * np.log(2 * np.pi)
        - 0.5 * (r * c - 1) * np.log(n)
        + 0.5 * (c - 1) * np.log(t.sum(axis=1)).sum()
        + 0.5 * (r - 1) * np.log(t.sum(axis=0)).sum()
    )
    fh = -2.0 * (log_gamma + ffh_log_pmf(t))
    return float(stats.chi2.sf(max(fh, 0.0), df))


def fisher_2x2_two_sided(table) -> float:
    """Exact two-sided Fisher p-value of a 2×2 table (sum of the hypergeometric probabilities at most the
    observed one, relative tolerance 1e-7, as ``scipy.stats.fisher_exact``).

    >>> round(fisher_2x2_two_sided([[8, 2], [1, 5]]), 6)
    0.034965
    """
    t = _as_table(table)
    if t.shape != (2, 2):
        raise ValueError(f"expected a 2x2 table, got {t.shape}")
    return float(stats.fisher_exact(t).pvalue)


def fisher_cells_greater(table) -> np.ndarray:
    """One-sided (over-representation) Fisher p-value of every cell of an r×c table, vectorised.

    For cell (i, j) the 2×2 table is ``[[a, b], [c, d]]`` with ``a = n_ij``, ``b = R_i − a``,
    ``c = C_j − a``, ``d = n − a − b − c``; under the null ``a ~ Hypergeom(n, R_i, C_j)`` and
    ``p_ij = P(X >= a) = hypergeom.sf(a − 1, n, R_i, C_j)``, identical to
    ``scipy.stats.fisher_exact([[a, b], [c, d]], alternative="greater").pvalue``.

    >>> fisher_cells_greater([[8, 2], [1, 5]]).round(6).tolist()  # scipy "greater": 0.024476 for cell (0, 0)
    [[0.024476, 0.999126], [0.999126, 0.024476]]
    """
    t = _as_table(table)
    n = int(t.sum())
    rows = t.sum(axis=1, keepdims=True)
    cols = t.sum(axis=0, keepdims=True)
    rows_b, cols_b = np.broadcast_arrays(rows, cols)
    p = stats.hypergeom.sf(t - 1, n, rows_b, cols_b)
    return np.clip(p, 0.0, 1.0)


def _scipy_pmf(tables: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """pmf of a stack of tables computed exactly as ``scipy.stats.random_table.logpmf`` does (same
    ``gammaln`` terms, same summation), then ``exp``."""
    n = int(rows.sum())
    lnfac = special.gammaln(np.arange(n + 1) + 1)
    const = np.sum(special.gammaln(rows + 1), axis=-1) + np.sum(special.gammaln(cols + 1), axis=-1) \
        - special.gammaln(n + 1)
    return np.exp(const - np.sum(lnfac[tables], axis=(-1, -2)))


def _bounded_compositions(total: int, caps: np.ndarray, limit: int) -> np.ndarray | None:
    """All integer vectors ``x`` with ``0 <= x_j <= caps_j`` and ``Σ x_j = total`` (rows of the result), or
    ``None`` when more than ``limit`` partial vectors would be needed."""
    caps = np.asarray(caps, dtype=np.int64)
    rest = np.concatenate([np.cumsum(caps[::-1])[::-1][1:], [0]])  # capacity of the columns after j
    part = np.zeros((1, 0), dtype=np.int64)
    sums = np.zeros(1, dtype=np.int64)
    for j, cap in enumerate(caps):
        lo = np.maximum(0, total - sums - rest[j])
        hi = np.minimum(cap, total - sums)
        cnt = np.maximum(hi - lo + 1, 0)
        if cnt.sum() > limit:
            return None
        idx = np.repeat(np.arange(part.shape[0]), cnt)
        offs = np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        x = lo[idx] + offs
        part = np.column_stack([part[idx], x])
        sums = sums[idx] + x
    return part


def exact_ffh_pvalue(table, max_tables: int = 200_000) -> float | None:
    """Exact Fisher–Freeman–Halton p-value of a table with two rows or two columns, by enumerating every
    table with the observed margins (``None`` when there are more than ``max_tables``).

    The exceedance event is the reference's own: ``pmf(T′) <= pmf(T) + 100·eps·pmf(T)`` on scipy's pmf
    values, so the result is exactly the quantity that ``scipy.stats.fisher_exact(..., MonteCarloMethod)``
    estimates (for a 2×2 table it equals ``fisher_exact(table).pvalue`` up to the tie tolerance).

    >>> round(exact_ffh_pvalue([[8, 2], [1, 5]]), 6)  # scipy fisher_exact: 0.034965
    0.034965
    """
    t = _as_table(table)
    rows, cols = t.sum(axis=1), t.sum(axis=0)
    r, c = t.shape
    if r == 2:
        first = _bounded_compositions(int(rows[0]), cols, max_tables)
        if first is None:
            return None
        tabs = np.stack([first, cols[None, :] - first], axis=1)
    elif c == 2:
        first = _bounded_compositions(int(cols[0]), rows, max_tables)
        if first is None:
            return None
        tabs = np.stack([first, rows[None, :] - first], axis=2)
    else:
        return None
    pmf = _scipy_pmf(tabs, rows, cols)
    obs = _scipy_pmf(t[None], rows, cols)[0]
    cut = obs + abs(np.finfo(float).eps * 100 * obs)
    return float(min(1.0, pmf[pmf <= cut].sum()))


def reference_mc_pvalue(table, n_resamples: int = 500_000, seed: int = 42) -> float:
    """The upstream StereoTales p-value, reproduced exactly: ``scipy.stats.fisher_exact(table,
    method=MonteCarloMethod(n_resamples, rng=np.random.default_rng(seed)))`` with a fresh generator per
    call. ``p = (#{simulated tables with pmf <= observed pmf} + 1) / (n_resamples + 1)``."""
    t = _as_table(table)
    if t.size > t.sum():
        # scipy (1.15–1.17) mistakes such a sparse table for a batch of tables and fails; the replay of the
        # same stream gives the number it would compute
        counter = McCounter(t, seed)
        counter.draw_to(n_resamples)
        return counter.pvalue
    method = stats.MonteCarloMethod(n_resamples=int(n_resamples), rng=np.random.default_rng(seed))
    return float(stats.fisher_exact(t, method=method).pvalue)


# scipy's own quantile ufuncs behind ``stats.binom.ppf`` / ``stats.beta.ppf`` (``binom_gen._ppf``, ``beta_gen._ppf``):
# the public methods check and broadcast their arguments in Python on every call (about half a millisecond),
# which the sequential Monte Carlo test pays thousands of times on a handful of values; where the arguments are
# valid the methods return exactly these ufuncs' values (times scale 1, plus loc 0)
_BINOM_PPF = getattr(special._ufuncs, "_binom_ppf", None)
_BETA_PPF = getattr(special._ufuncs, "_beta_ppf", None)


def binom_quantile(q: float, n, p) -> np.ndarray:
    """``scipy.stats.binom.ppf(q, n, p)`` (vectorised over ``n`` and ``p``), the same doubles, for ``0 < q < 1``.

    >>> binom_quantile(0.5, [10, 0], [0.5, 0.3]).tolist()
    [5.0, 0.0]
    """
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    valid = 0 < q < 1 and bool(np.all((n >= 0) & (n == np.floor(n)) & (p >= 0) & (p <= 1)))
    if _BINOM_PPF is None or not valid:
        return np.asarray(stats.binom.ppf(q, n, p), dtype=float)
    return np.asarray(_BINOM_PPF(q, n, p), dtype=float) + 0.0


def _beta_quantile(q: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``scipy.stats.beta.ppf(q, a, b)`` where ``a, b > 0`` (the same doubles); elsewhere any value (the caller
    replaces those entries)."""
    if _BETA_PPF is None or not 0 < q < 1:
        return np.asarray(stats.beta.ppf(q, a, b), dtype=float)
    ok = (a > 0) & (b > 0)
    return np.where(ok, _BETA_PPF(q, np.where(ok, a, 1.0), np.where(ok, b, 1.0)) * 1.0 + 0.0, np.nan)


def clopper_pearson(x, k, delta):
    """Two-sided Clopper–Pearson (1934) interval of level ``1 − delta`` for a binomial proportion with
    ``x`` successes in ``k`` trials (vectorised): ``[Beta(δ/2; x, k−x+1), Beta(1−δ/2; x+1, k−x)]``.
    Takes the error ``delta`` (the sequential Monte Carlo test spends a budget of it), not a confidence level.

    >>> [round(float(b), 6) for b in clopper_pearson(7, 50, 0.05)]  # statsmodels method="beta"
    [0.058192, 0.267396]
    """
    x = np.asarray(x, dtype=float)
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        lo = np.where(x > 0, _beta_quantile(delta / 2, x, k - x + 1), 0.0)
        hi = np.where(x < k, _beta_quantile(1 - delta / 2, x + 1, k - x), 1.0)
    return lo, hi


class McCounter:
    """Monte Carlo exceedance counter of the FFH test for one table that replays the reference computation
    (``scipy.stats.fisher_exact(table, method=MonteCarloMethod(n, rng=np.random.default_rng(seed)))``)
    prefix by prefix.

    Null tables come from ``scipy.stats.random_table(R, C, seed=default_rng(seed)).rvs()``, which picks
    Patefield's algorithm (1981, Applied Statistics 30:91–97) when ``n > log(n + 1)·r·c`` and Boyett's
    (1979, Applied Statistics 28:329–332) otherwise. Both produce the tables in stream order, so the first
    ``k`` tables of the reference's 500,000 are the tables of a ``k``-draw run: Patefield's generator can
    simply continue; Boyett's keeps a shuffled state between tables of one call, so its prefix is redrawn
    from a fresh generator (at most twice the work with doubling batches); ``ahead`` > 1 draws that many times
    the asked total on each redraw (at most ``limit``) and keeps which draws counted, so the next totals up
    to it are read, not redrawn. A draw counts when
    ``pmf(T') <= pmf(T) + 100·eps·pmf(T)``, scipy's comparison on scipy's pmf values, so after
    ``draw_to(n_resamples)`` the p-value is the reference's, bit for bit.
    """

    def __init__(self, table, seed: int = 42, chunk: int = 65_536, ahead: int = 1, limit: int | None = None) -> None:
        t = _as_table(table)
        self.table = t
        self.seed = seed
        self.chunk = int(chunk)
        self.ahead, self.limit = int(ahead), limit
        self._hits = np.zeros(0, dtype=bool)  # Boyett: which of the drawn tables counted
        self.draws = 0
        self.exceed = 0
        rows, cols = t.sum(axis=1), t.sum(axis=0)
        n = int(t.sum())
        self.continuable = bool(n > np.log(n + 1) * rows.size * cols.size)
        self._rows, self._cols = rows, cols
        self._dist = None  # the stream (scipy's frozen random_table), made at the first draw
        # scipy's random_table.logpmf, term by term: const − Σ gammaln(x + 1); the table lookup returns the
        # same doubles as gammaln, so the pmf values (and the comparisons) are scipy's bit for bit, the observed
        # table's included (``random_table(R, C).pmf(T)``: exp of the same terms, summed over both axes)
        self._lnfac = special.gammaln(np.arange(n + 1) + 1)
        self._const = np.sum(special.gammaln(rows + 1), axis=-1) + np.sum(special.gammaln(cols + 1), axis=-1) \
            - special.gammaln(n + 1)
        self._obs = np.exp(self._const - np.sum(self._lnfac[t], axis=(-1, -2)))
        self._cut = self._obs + np.abs(np.finfo(float).eps * 100 * self._obs)

    def _hit(self, sims: np.ndarray) -> np.ndarray:
        pmf = np.exp(self._const - np.sum(self._lnfac[sims], axis=(-1, -2)))
        return pmf <= self._cut

    def _count(self, sims: np.ndarray) -> int:
        return int(np.count_nonzero(self._hit(sims)))

    def draw_to(self, total: int) -> None:
        """Extend the run to the first ``total`` tables of the reference stream."""
        total = int(total)
        if total <= self.draws:
            return
        if self.continuable:
            if self._dist is None:
                self._dist = stats.random_table(self._rows, self._cols, seed=np.random.default_rng(self.seed))
            while self.draws < total:
                k = min(self.chunk, total - self.draws)
                self.exceed += self._count(self._dist.rvs(size=k))
                self.draws += k
            return
        if total > self._hits.size:
            size = total if self.draws == 0 else max(total, min(self.ahead * total, self.limit or total))
            self._dist = stats.random_table(self._rows, self._cols, seed=np.random.default_rng(self.seed))
            sims = self._dist.rvs(size=size)
            self._hits = np.concatenate([self._hit(sims[i : i + self.chunk]) for i in range(0, size, self.chunk)])
        self.exceed = int(np.count_nonzero(self._hits[:total]))
        self.draws = total

    @property
    def pvalue(self) -> float:
        """``(exceed + 1) / (draws + 1)`` (Davison & Hinkley 1997, eq. 4.11; scipy's ``monte_carlo_test``)."""
        return (self.exceed + 1.0) / (self.draws + 1.0)
