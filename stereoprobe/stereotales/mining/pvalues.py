"""Step 1 p-values of StereoTales association mining: the Fisher–Freeman–Halton test of every attribute pair
of one family, with Benjamini–Hochberg decisions equal to the upstream Monte Carlo procedure's
(Giskard-AI/stereotales-pipeline ``src/stereotales_pipeline/step_02_compute_associations.py``:
``scipy.stats.fisher_exact`` with ``MonteCarloMethod(n_resamples=500_000, rng=default_rng(42))``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from stereoprobe.stats.fisher import (
    McCounter,
    binom_quantile,
    clopper_pearson,
    cochran_ok,
    exact_ffh_pvalue,
    ffh_asymptotic_pvalue,
    ffh_log_pmf,
    reference_mc_pvalue,
)
from stereoprobe.stats.multiple_testing import adjust_bh, bh_reject
from stereoprobe.stereotales.mining.config import MiningConfig




def table_key(table: np.ndarray) -> tuple:
    """A hashable key of a table: its shape and counts (two tables with equal keys get equal tests)."""
    t = np.ascontiguousarray(table, dtype=np.int64)
    return t.shape, t.tobytes()


class _Stream:
    """The reference's Monte Carlo stream of one table, shared by every test of that table in a run: the
    exceedance count after each number of draws asked for, and the counter furthest along the stream.
    The count after ``k`` draws depends only on the table, the seed and ``k`` (:class:`McCounter` replays the
    reference's stream prefix by prefix), so a test of an identical table reads it instead of drawing again."""

    def __init__(self, table: np.ndarray, seed: int, limit: int, live: list["_Stream"]) -> None:
        self.table, self.seed, self.limit, self._live = table, seed, limit, live
        self.counter: McCounter | None = None  # released after each family (it holds O(n) arrays)
        self.exceed_after: dict[int, int] = {0: 0}

    def exceed_at(self, total: int) -> int:
        hit = self.exceed_after.get(total)
        if hit is None:
            c = self.counter
            if c is None or total < c.draws:  # a prefix not reached by the live counter: replayed from the start
                # Boyett's tables (redrawn from the start to extend): twice the asked total, kept for the next look
                c = self.counter = McCounter(self.table, self.seed, ahead=2, limit=self.limit)
                self._live.append(self)
            c.draw_to(total)
            hit = self.exceed_after[total] = c.exceed
        return hit


class _Draws:
    """One test's position on its table's :class:`_Stream` (the interface of :class:`McCounter`)."""

    def __init__(self, stream: _Stream) -> None:
        self.stream, self.draws, self.exceed = stream, 0, 0

    def draw_to(self, total: int) -> None:
        if total > self.draws:
            self.exceed, self.draws = self.stream.exceed_at(total), total

    @property
    def pvalue(self) -> float:
        return (self.exceed + 1.0) / (self.draws + 1.0)


class StepOneCache:
    """Step-1 work shared across the families of one run, keyed on the tables (:func:`table_key`): whole
    families (the same tables in the same order get the same frame), the exact and asymptotic shortcuts of
    a table, and its Monte Carlo stream. Every entry is a deterministic function of its key and the
    configuration, so a cached result is the result computed again, bit for bit. One cache serves one
    configuration (:meth:`for_config`)."""

    def __init__(self, config: MiningConfig) -> None:
        self.config = config
        self.families: dict[tuple, pd.DataFrame] = {}
        self.shortcuts: dict[tuple, tuple[str, float, float, float] | None] = {}
        self.streams: dict[tuple, _Stream] = {}
        self._live: list[_Stream] = []

    def stream(self, key: tuple, table: np.ndarray) -> _Draws:
        st = self.streams.get(key)
        if st is None:
            st = self.streams[key] = _Stream(table, self.config.seed, self.config.mc_resamples, self._live)
        return _Draws(st)

    def release(self) -> None:
        """Drop the live counters (their tables' counts stay): memory stays bounded over a run."""
        for st in self._live:
            st.counter = None
        self._live.clear()


@dataclass
class _PState:
    table: np.ndarray
    method: str
    p: float
    lo: float  # interval for the TRUE p-value (exact / asymptotic tests)
    hi: float
    final: bool
    counter: _Draws | None = None
    key: tuple = ()

    @property
    def draws(self) -> int:
        return self.counter.draws if self.counter is not None else 0


def log_table_count_bound(table: np.ndarray) -> float:
    """Log of an upper bound on the number of tables with the margins of ``table``.

    A table with row sums ``R_1..R_r`` and ``c`` columns is a choice, per row, of a composition of ``R_i``
    into ``c`` non-negative parts: at most ``Π_i C(R_i + c − 1, c − 1)`` tables (the column sums only remove
    some); the same holds with rows and columns swapped, so the smaller product bounds the count.
    """
    t = np.asarray(table, dtype=np.int64)
    r, c = t.shape
    g = special.gammaln

    def log_compositions(sums: np.ndarray, parts: int) -> float:
        # log C(s + parts - 1, parts - 1)
        return float((g(sums + parts) - g(sums + 1.0) - g(float(parts))).sum())

    return min(log_compositions(t.sum(axis=1).astype(float), c), log_compositions(t.sum(axis=0).astype(float), r))


def exact_pvalue_upper_bound(table: np.ndarray) -> float:
    """A certified upper bound of the exact Fisher–Freeman–Halton p-value of ``table``.

    The exact p-value is ``Σ pmf(T')`` over the tables ``T'`` with the observed margins and
    ``pmf(T') ≤ pmf(T)`` (scipy's comparison allows a relative ``100·eps``); each term is at most
    ``pmf(T)·(1 + 100·eps)``, and there are at most :func:`log_table_count_bound` of them, so
    ``p ≤ pmf(T)·(1 + 100·eps)·count``. A computation, not an approximation: the asymptotic shortcut of
    :func:`family_pvalues` is taken only when this bound alone already decides the test.
    """
    log_p = ffh_log_pmf(table) + math.log1p(100 * np.finfo(float).eps) + log_table_count_bound(table)
    return float(min(1.0, math.exp(log_p))) if log_p < 0 else 1.0


def family_pvalues(tables: Sequence[np.ndarray], config: MiningConfig = MiningConfig(),
                   cache: StepOneCache | None = None) -> pd.DataFrame:
    """FFH p-values and BH decisions of one family of tables (the ≤ 18 B of one (model, slice, A)).

    Returns a frame with ``p``, ``p_method``, ``n_resamples``, ``p_bh`` (BH of ``p``), ``significant``.

    ``p_method="auto"`` / ``"sequential-mc"``: the decisions are those of the reference procedure (Monte
    Carlo with ``mc_resamples`` draws from ``default_rng(seed)``, BH, ``p_bh < alpha``) except with
    probability at most ``2·seq_delta`` per test. Each Monte Carlo test replays a prefix of the reference's
    own random stream (:class:`McCounter`): after ``k`` draws with ``x`` exceedances the reference's final
    count is ``x + Y``, ``Y ~ Bin(N − k, p)``, and ``p`` lies in the Clopper–Pearson interval of ``x/k`` at
    level ``seq_delta/looks``; the binomial quantiles at ``seq_delta`` of ``Y`` at both ends of that interval
    bound the reference's p-value. BH is monotone, so when the decisions computed from all upper bounds equal
    those from all lower bounds they are the reference's decisions. Undecided tests draw more (doubling up
    to ``seq_max``, then the full ``N``, where the p-value IS the reference's). Exact (2×2) and asymptotic
    p-values enter with the interval of the reference's estimate around them and, if ever undecided, are
    replaced by the replayed reference.

    ``cache`` (:class:`StepOneCache` of the same configuration): work shared with the other families of a run;
    the result is the same with or without it.
    """
    return pd.DataFrame(family_columns(tables, config, cache), columns=FAMILY_COLUMNS)


FAMILY_COLUMNS = ["p", "p_method", "n_resamples", "p_bh", "significant"]


def family_columns(tables: Sequence[np.ndarray], config: MiningConfig = MiningConfig(),
                   cache: StepOneCache | None = None) -> dict[str, list]:
    """:func:`family_pvalues` as plain columns (lists of Python numbers, in :data:`FAMILY_COLUMNS` order): what
    the mining reads row by row, without a frame per family."""
    if len(tables) == 0:
        return {c: [] for c in FAMILY_COLUMNS}
    if cache is None or cache.config != config:
        cache = StepOneCache(config)
    keys = [table_key(t) for t in tables]
    fkey = tuple(keys)
    hit = cache.families.get(fkey)
    if hit is None:
        hit = cache.families[fkey] = _family(tables, keys, config, cache)
        cache.release()
    return {c: list(v) for c, v in hit.items()}


def _columns(p: np.ndarray, method: Sequence[str], draws: Sequence[int], significant: np.ndarray) -> dict[str, list]:
    return {"p": [float(x) for x in p], "p_method": list(method), "n_resamples": [int(d) for d in draws],
            "p_bh": [float(x) for x in adjust_bh(p)], "significant": [bool(x) for x in significant]}


def _family(tables: Sequence[np.ndarray], keys: list[tuple], config: MiningConfig,
            cache: StepOneCache) -> dict[str, list]:
    if config.p_method == "reference-mc":
        return _reference_family(tables, config)
    if config.p_method == "asymptotic":
        return _asymptotic_family(tables, config)
    states = [_initial_state(t, k, config, cache) for t, k in zip(tables, keys)]
    loop = _DecisionLoop(states, config, cache)
    lo_ref, hi_ref, significant = loop.run()
    p = np.array([s.p for s in states])
    # a Monte Carlo estimate is reported inside its certified interval, so that BH of the reported p-values
    # reproduces the certified decisions
    for i, s in enumerate(states):
        if s.method == "sequential-mc":
            p[i] = min(max(p[i], lo_ref[i]), hi_ref[i])
    return _columns(p, [s.method for s in states], [s.draws for s in states], significant)


def _reference_family(tables: Sequence[np.ndarray], config: MiningConfig) -> dict[str, list]:
    """Upstream's computation itself: scipy's Monte Carlo p-value per table, then BH."""
    p = np.array([reference_mc_pvalue(t, config.mc_resamples, config.seed) for t in tables])
    return _columns(p, ["reference-mc"] * len(p), [config.mc_resamples] * len(p), bh_reject(p, config.alpha))


def _asymptotic_family(tables: Sequence[np.ndarray], config: MiningConfig) -> dict[str, list]:
    """The FFH chi-square approximation everywhere (exact for 2x2): fastest, no decision guarantee."""
    p = np.array([exact_ffh_pvalue(t) if t.shape == (2, 2) else ffh_asymptotic_pvalue(t) for t in tables])
    meth = ["exact" if t.shape == (2, 2) else "asymptotic" for t in tables]
    return _columns(p, meth, [0] * len(p), bh_reject(p, config.alpha))


def _shortcut(t: np.ndarray, config: MiningConfig) -> tuple[str, float, float, float] | None:
    """(method, p, lo, hi) of the exact or asymptotic shortcut of a table, or ``None`` (Monte Carlo)."""
    if config.p_method != "auto":
        return None
    if min(t.shape) == 2 and config.exact_max_tables > 0:
        pe = exact_ffh_pvalue(t, config.exact_max_tables)
        if pe is not None:
            return "exact", pe, pe, pe
    if config.asymptotic_max_p > 0 and cochran_ok(t):
        bound = exact_pvalue_upper_bound(t)
        if bound <= config.asymptotic_max_p:
            # reported: the asymptotic p-value; decided on: [0, bound], which holds the exact p-value
            return "asymptotic", ffh_asymptotic_pvalue(t), 0.0, bound
    return None


def _initial_state(t: np.ndarray, key: tuple, config: MiningConfig, cache: StepOneCache) -> _PState:
    """Exact p-value where cheap, the asymptotic one where its certified bound decides (``auto`` only),
    else a sequential Monte Carlo test on the reference's own random stream."""
    if key in cache.shortcuts:
        short = cache.shortcuts[key]
    else:
        short = cache.shortcuts[key] = _shortcut(t, config)
    if short is not None:
        method, p, lo, hi = short
        return _PState(t, method, p, lo, hi, final=False, key=key)
    return _PState(t, "sequential-mc", 1.0, 0.0, 1.0, final=False, counter=cache.stream(key, t), key=key)


class _DecisionLoop:
    """Draw more where BH decisions are not yet certain (docs/stereotales_associations.md, section 2.2)."""

    def __init__(self, states: list[_PState], config: MiningConfig, cache: StepOneCache) -> None:
        self.states, self.config, self.cache = states, config, cache
        self.n_ref = config.mc_resamples
        n_looks = int(math.log2(config.seq_max / config.seq_first)) + 1
        self.delta_look = config.seq_delta / n_looks
        self.q = config.seq_delta  # quantile level for the reference's remaining Monte Carlo draws

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per test, an interval holding the reference's p-value (except with probability ``2·seq_delta``)."""
        states, n_ref, q = self.states, self.n_ref, self.q
        x = np.array([s.counter.exceed if s.counter is not None else 0 for s in states], dtype=float)
        k = np.array([s.draws for s in states], dtype=float)
        plo = np.array([s.lo for s in states])
        phi = np.array([s.hi for s in states])
        lo = (x + binom_quantile(q, n_ref - k, plo) + 1.0) / (n_ref + 1.0)
        hi = np.minimum(1.0, (x + binom_quantile(1 - q, n_ref - k, phi) + 1.0) / (n_ref + 1.0))
        fin = np.array([s.final for s in states])
        pv = np.array([s.p for s in states])
        return np.where(fin, pv, lo), np.where(fin, pv, hi)

    def refine(self, batch: list[_PState]) -> None:
        """Double the draws of each Monte Carlo test of ``batch`` (then the full reference); replay an
        undecided shortcut. The Clopper–Pearson intervals of the batch are computed in one call."""
        cfg, n_ref = self.config, self.n_ref
        open_ = []
        for s in batch:
            if s.counter is None:  # exact / asymptotic test left undecided: replay the reference
                s.counter = self.cache.stream(s.key, s.table)
                s.counter.draw_to(n_ref)
            else:
                k = s.counter.draws
                nxt = cfg.seq_first if k == 0 else (2 * k if 2 * k <= cfg.seq_max else n_ref)
                s.counter.draw_to(min(nxt, n_ref))
            c = s.counter
            s.p = c.pvalue
            if c.draws >= n_ref:
                s.method, s.final = "reference-mc", True
            else:
                open_.append(s)
        if open_:
            lo, hi = clopper_pearson([s.counter.exceed for s in open_], [s.counter.draws for s in open_],
                                     self.delta_look)
            for s, a, b in zip(open_, np.atleast_1d(lo), np.atleast_1d(hi)):
                s.lo, s.hi = float(a), float(b)

    def run(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Refine until BH on all upper bounds equals BH on all lower bounds; returns the final intervals
        and the certified decisions."""
        states, alpha, m = self.states, self.config.alpha, len(self.states)
        self.refine([s for s in states if s.counter is not None])
        while True:
            lo_ref, hi_ref = self.intervals()
            rej_lo = bh_reject(hi_ref, alpha)
            rej_hi = bh_reject(lo_ref, alpha)
            undecided = rej_hi & ~rej_lo
            if not undecided.any():
                return lo_ref, hi_ref, rej_lo
            k_lo, k_hi = int(rej_lo.sum()), int(rej_hi.sum())
            band_lo, band_hi = alpha * max(k_lo, 1) / m, alpha * k_hi / m
            open_ = [i for i, s in enumerate(states) if not s.final]
            cand = [i for i in open_ if lo_ref[i] <= band_hi and hi_ref[i] >= band_lo] or \
                [i for i in open_ if undecided[i]] or open_
            # exact / asymptotic tests are replayed only when no Monte Carlo test can be refined
            mc_cand = [i for i in cand if states[i].counter is not None]
            self.refine([states[i] for i in mc_cand or cand])
