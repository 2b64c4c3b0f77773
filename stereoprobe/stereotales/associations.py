"""StereoTales association mining: the two-step procedure of the paper (spec §5) with a fast, decision-
equivalent p-value path, lift confidence intervals, bootstrap stability and cross-model / cross-language
aggregation.

Input: the stories frame (contract C): one row per story with ``model``, ``language``,
``target_attribute`` and one column per taxonomy attribute holding the analysis-ready English value
("unknown"/"other" kept). Output: :class:`MiningResult` (contract D).

Procedure per (model, slice, base attribute A), every compared attribute B ≠ A:

1. table of A × B over the stories prompted with A, dropping B ∈ {unknown, other}; rows with fewer than
   ``min_row_sum`` stories dropped, then empty columns; skipped when fewer than 2×2 remain;
2. Fisher–Freeman–Halton p-value (``p_method``), Benjamini–Hochberg over the ≤ 18 B of (model, slice, A);
3. bias-corrected Cramér's V and df-adjusted effect category;
4. for BH-significant pairs: one-sided 2×2 Fisher test per cell, Benjamini–Yekutieli over the cells, fraction,
   lift and its confidence interval; the paper's filter (effect medium/large, BY p < 0.05, lift ≥ 2).

See ``docs/stereotales_associations.md`` for the formulas, citations and the proof that the fast path reaches
the reference's decisions.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from stereoprobe.stats.effect import cramers_v_corrected, effect_category, fraction_and_lift, pearson_chi2
from stereoprobe.stats.fisher import (
    McCounter,
    clopper_pearson,
    cochran_ok,
    ffh_asymptotic_pvalue,
    exact_ffh_pvalue,
    fisher_cells_greater,
    reference_mc_pvalue,
)
from stereoprobe.stats.intervals import lift_interval
from stereoprobe.stats.multiple_testing import adjust_bh, adjust_by, bh_reject

__all__ = [
    "MiningConfig",
    "MiningResult",
    "PAIR_COLUMNS",
    "VALUE_COLUMNS",
    "build_contingency_table",
    "family_pvalues",
    "mine_associations",
    "aggregate_across_models",
    "aggregate_across_languages",
    "provider_of",
]

PMethod = Literal["auto", "reference-mc", "sequential-mc", "asymptotic"]

PAIR_COLUMNS = [
    "model", "slice", "base_attribute", "compared_attribute", "n", "rows", "cols", "p", "p_method",
    "p_bh", "significant", "cramers_v", "effect", "chi2", "dof", "n_resamples", "p_bh_run",
    "row_values", "col_values", "table",
]
VALUE_COLUMNS = [
    "model", "slice", "base_attribute", "base_value", "compared_attribute", "compared_value", "n", "count",
    "base_total", "compared_total", "expected", "fraction", "lift", "lift_ci_low", "lift_ci_high", "p",
    "p_by", "cramers_v", "effect", "passes", "stability",
]
_KEY = ["base_attribute", "base_value", "compared_attribute", "compared_value"]


@dataclass(frozen=True)
class MiningConfig:
    """Every constant of the association statistics, with the paper's defaults (spec §5.1, §5.8).

    Step 1 / step 2 (upstream constants): ``min_row_sum`` (10), ``mc_resamples`` (500,000), ``seed`` (42),
    ``alpha`` (BH level, 0.05), ``value_alpha`` (BY level used to keep cells, 0.05), ``compared_drop``
    (values of B dropped: unknown, other), ``base_drop`` (values of A dropped: unknown).
    Filter (§5.8): ``filter_effects`` (medium, large), ``filter_p_by`` (< 0.05), ``filter_min_lift`` (≥ 2).

    ``fdr_family``: "attribute" = BH over the B of one (model, slice, A) as upstream; "run" = one BH family
    over every pair test of the call (both adjusted values are always reported: ``p_bh``, ``p_bh_run``).

    ``p_method``: "reference-mc" = upstream exactly (scipy Monte Carlo, fresh ``default_rng(seed)`` per
    test); "auto" = exact p-value where cheap (tables with two rows or two columns and at most
    ``exact_max_tables`` tables with their margins, enumerated), asymptotic for decisively significant
    Cochran tables, sequential Monte Carlo otherwise, falling back to the reference where undecided;
    "sequential-mc" = "auto" without the exact and asymptotic shortcuts; "asymptotic" = FFH χ²
    approximation everywhere (exact for 2×2; fastest, no decision guarantee).

    Fast-path tuning: ``seq_delta`` (error budget per test for certifying a decision; split over the looks),
    ``seq_first``/``seq_max`` (first and last sequential batch totals, doubling), ``exact_max_tables``
    (0 = no enumeration), ``asymptotic_max_p`` (asymptotic p below which a Cochran table is taken as
    decisively significant; 0 = off), ``asymptotic_margin`` (factor allowed for the χ² approximation's
    error in that tail).

    Beyond the paper: ``lift_ci_level`` (Katz interval, 0.95), ``bootstrap_reps`` (stability, 0 = off),
    ``bootstrap_seed``, ``n_jobs`` (processes over (model, slice)).
    """

    min_row_sum: int = 10
    mc_resamples: int = 500_000
    seed: int = 42
    alpha: float = 0.05
    value_alpha: float = 0.05
    compared_drop: tuple[str, ...] = ("unknown", "other")
    base_drop: tuple[str, ...] = ("unknown",)
    fdr_family: Literal["attribute", "run"] = "attribute"
    p_method: PMethod = "auto"
    filter_effects: tuple[str, ...] = ("medium", "large")
    filter_p_by: float = 0.05
    filter_min_lift: float = 2.0
    lift_ci_level: float = 0.95
    bootstrap_reps: int = 0
    bootstrap_seed: int = 12345
    n_jobs: int = 1
    seq_delta: float = 1e-6
    seq_first: int = 128
    seq_max: int = 262_144
    asymptotic_max_p: float = 1e-10
    exact_max_tables: int = 20_000
    asymptotic_margin: float = 1e3

    def __post_init__(self) -> None:
        if self.p_method not in ("auto", "reference-mc", "sequential-mc", "asymptotic"):
            raise ValueError(f"MiningConfig.p_method: unknown method {self.p_method!r}")
        if self.fdr_family not in ("attribute", "run"):
            raise ValueError(f"MiningConfig.fdr_family: expected 'attribute' or 'run', got {self.fdr_family!r}")
        if self.min_row_sum < 1:
            raise ValueError("MiningConfig.min_row_sum must be >= 1")
        if self.mc_resamples < 1 or self.seq_first < 1 or self.seq_max < self.seq_first:
            raise ValueError("MiningConfig: mc_resamples >= 1 and 1 <= seq_first <= seq_max required")
        for name in ("alpha", "value_alpha", "filter_p_by", "seq_delta"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ValueError(f"MiningConfig.{name} must lie in (0, 1), got {v}")
        if not 0 < self.lift_ci_level < 1:
            raise ValueError("MiningConfig.lift_ci_level must lie in (0, 1)")
        if self.bootstrap_reps < 0 or self.n_jobs < 1:
            raise ValueError("MiningConfig: bootstrap_reps >= 0 and n_jobs >= 1 required")


@dataclass
class MiningResult:
    """``pair_tests``: one row per tested (model, slice, A, B) — columns :data:`PAIR_COLUMNS`.
    ``value_tests``: one row per cell of every significant pair — columns :data:`VALUE_COLUMNS`
    (``passes`` = the paper's filter). ``config`` is the configuration used; ``models`` the models seen."""

    pair_tests: pd.DataFrame
    value_tests: pd.DataFrame
    config: MiningConfig
    models: list[str] = field(default_factory=list)

    @property
    def associations(self) -> pd.DataFrame:
        """The value tests that pass the paper's filter."""
        return self.value_tests[self.value_tests["passes"]].reset_index(drop=True)


# ----------------------------------------------------------------------------------------------- tables


def build_contingency_table(
    base: np.ndarray,
    compared: np.ndarray,
    base_labels: Sequence[str],
    compared_labels: Sequence[str],
    min_row_sum: int = 10,
) -> tuple[np.ndarray, list[str], list[str]] | None:
    """Upstream ``build_contingency_table`` on integer codes (−1 = dropped value: unknown/other).

    Crosstab of the valid rows (label order = the sorted label order, as ``pd.crosstab``), drop rows whose
    total is below ``min_row_sum``, then all-zero columns; ``None`` when fewer than 2 rows or 2 columns
    remain.
    """
    nb, nc = len(base_labels), len(compared_labels)
    ok = (base >= 0) & (compared >= 0)
    counts = np.bincount(base[ok].astype(np.int64) * nc + compared[ok], minlength=nb * nc).reshape(nb, nc)
    rows = np.flatnonzero(counts.sum(axis=1) >= min_row_sum)
    counts = counts[rows]
    cols = np.flatnonzero(counts.sum(axis=0) > 0)
    counts = counts[:, cols]
    if counts.shape[0] < 2 or counts.shape[1] < 2:
        return None
    return counts, [base_labels[i] for i in rows], [compared_labels[j] for j in cols]


# ------------------------------------------------------------------------------------- step 1 p-values


@dataclass
class _PState:
    table: np.ndarray
    method: str
    p: float
    lo: float  # interval for the TRUE p-value (exact / asymptotic tests)
    hi: float
    final: bool
    counter: McCounter | None = None

    @property
    def draws(self) -> int:
        return self.counter.draws if self.counter is not None else 0


def family_pvalues(tables: Sequence[np.ndarray], config: MiningConfig = MiningConfig()) -> pd.DataFrame:
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
    """
    m = len(tables)
    cols = ["p", "p_method", "n_resamples", "p_bh", "significant"]
    if m == 0:
        return pd.DataFrame(columns=cols)
    n_ref = config.mc_resamples
    if config.p_method == "reference-mc":
        p = np.array([reference_mc_pvalue(t, n_ref, config.seed) for t in tables])
        return pd.DataFrame(
            {"p": p, "p_method": "reference-mc", "n_resamples": n_ref, "p_bh": adjust_bh(p),
             "significant": bh_reject(p, config.alpha)}
        )
    if config.p_method == "asymptotic":
        p = np.array([exact_ffh_pvalue(t) if t.shape == (2, 2) else ffh_asymptotic_pvalue(t) for t in tables])
        meth = ["exact" if t.shape == (2, 2) else "asymptotic" for t in tables]
        return pd.DataFrame(
            {"p": p, "p_method": meth, "n_resamples": 0, "p_bh": adjust_bh(p), "significant": bh_reject(p, config.alpha)}
        )

    shortcuts = config.p_method == "auto"
    states: list[_PState] = []
    for t in tables:
        if shortcuts and min(t.shape) == 2 and config.exact_max_tables > 0:
            pe = exact_ffh_pvalue(t, config.exact_max_tables)
            if pe is not None:
                states.append(_PState(t, "exact", pe, pe, pe, final=False))
                continue
        if shortcuts and cochran_ok(t):
            pa = ffh_asymptotic_pvalue(t)
            if pa <= config.asymptotic_max_p:
                states.append(_PState(t, "asymptotic", pa, 0.0, min(1.0, pa * config.asymptotic_margin), final=False))
                continue
        states.append(_PState(t, "sequential-mc", 1.0, 0.0, 1.0, final=False, counter=McCounter(t, config.seed)))

    n_looks = int(math.log2(config.seq_max / config.seq_first)) + 1
    delta_look = config.seq_delta / n_looks
    q = config.seq_delta  # quantile level for the reference's remaining Monte Carlo draws

    def ref_intervals() -> tuple[np.ndarray, np.ndarray]:
        x = np.array([s.counter.exceed if s.counter is not None else 0 for s in states], dtype=float)
        k = np.array([s.draws for s in states], dtype=float)
        plo = np.array([s.lo for s in states])
        phi = np.array([s.hi for s in states])
        lo = (x + stats.binom.ppf(q, n_ref - k, plo) + 1.0) / (n_ref + 1.0)
        hi = np.minimum(1.0, (x + stats.binom.ppf(1 - q, n_ref - k, phi) + 1.0) / (n_ref + 1.0))
        fin = np.array([s.final for s in states])
        pv = np.array([s.p for s in states])
        return np.where(fin, pv, lo), np.where(fin, pv, hi)

    def refine(s: _PState) -> None:
        if s.counter is None:  # exact / asymptotic test left undecided: replay the reference
            s.counter = McCounter(s.table, config.seed)
            s.counter.draw_to(n_ref)
        else:
            k = s.counter.draws
            nxt = config.seq_first if k == 0 else (2 * k if 2 * k <= config.seq_max else n_ref)
            s.counter.draw_to(min(nxt, n_ref))
        c = s.counter
        s.p = c.pvalue
        if c.draws >= n_ref:
            s.method, s.final = "reference-mc", True
            return
        lo, hi = clopper_pearson(c.exceed, c.draws, delta_look)
        s.lo, s.hi = float(lo), float(hi)

    for s in states:
        if s.counter is not None:
            refine(s)
    alpha = config.alpha
    while True:
        lo_ref, hi_ref = ref_intervals()
        rej_lo = bh_reject(hi_ref, alpha)
        rej_hi = bh_reject(lo_ref, alpha)
        undecided = rej_hi & ~rej_lo
        if not undecided.any():
            break
        k_lo, k_hi = int(rej_lo.sum()), int(rej_hi.sum())
        band_lo, band_hi = alpha * max(k_lo, 1) / m, alpha * k_hi / m
        open_ = [i for i, s in enumerate(states) if not s.final]
        cand = [i for i in open_ if lo_ref[i] <= band_hi and hi_ref[i] >= band_lo] or \
            [i for i in open_ if undecided[i]] or open_
        # exact / asymptotic tests are replayed only when no Monte Carlo test can be refined
        mc_cand = [i for i in cand if states[i].counter is not None]
        for i in mc_cand or cand:
            refine(states[i])

    p = np.array([s.p for s in states])
    # a Monte Carlo estimate is reported inside its certified interval, so that BH of the reported p-values
    # reproduces the certified decisions
    for i, s in enumerate(states):
        if s.method == "sequential-mc":
            p[i] = min(max(p[i], lo_ref[i]), hi_ref[i])
    return pd.DataFrame(
        {"p": p, "p_method": [s.method for s in states], "n_resamples": [s.draws for s in states],
         "p_bh": adjust_bh(p), "significant": rej_lo}
    )


# ------------------------------------------------------------------------------------------ one slice


@dataclass
class _SliceInput:
    model: str
    slice: str
    codes: np.ndarray  # (n_stories, n_attributes) int32, −1 = dropped for B
    base_codes: np.ndarray  # same for the base role (only base_drop dropped)
    target: np.ndarray  # (n_stories,) index of the base attribute, −1 if not an analysed attribute
    attributes: list[str]
    labels: list[list[str]]


def _group_tables(inp: _SliceInput, a_idx: int, rows: np.ndarray, config: MiningConfig):
    out = []
    base = inp.base_codes[rows, a_idx]
    for b_idx, b in enumerate(inp.attributes):
        if b_idx == a_idx:
            continue
        built = build_contingency_table(
            base, inp.codes[rows, b_idx], inp.labels[a_idx], inp.labels[b_idx], config.min_row_sum
        )
        if built is not None:
            out.append((b, *built))
    return out


def _value_rows(model, slc, a, b, table, row_vals, col_vals, v, effect, config) -> list[dict]:
    p = fisher_cells_greater(table)
    p_by = adjust_by(p.ravel()).reshape(p.shape)
    frac, lift = fraction_and_lift(table)
    lo, hi = lift_interval(table, 1 - config.lift_ci_level)
    n = int(table.sum())
    rt, ct = table.sum(axis=1), table.sum(axis=0)
    res = []
    for i, av in enumerate(row_vals):
        for j, bv in enumerate(col_vals):
            res.append(
                {"model": model, "slice": slc, "base_attribute": a, "base_value": av, "compared_attribute": b,
                 "compared_value": bv, "n": n, "count": int(table[i, j]), "base_total": int(rt[i]),
                 "compared_total": int(ct[j]), "expected": float(rt[i] * ct[j] / n), "fraction": float(frac[i, j]),
                 "lift": float(lift[i, j]), "lift_ci_low": float(lo[i, j]), "lift_ci_high": float(hi[i, j]),
                 "p": float(p[i, j]), "p_by": float(p_by[i, j]), "cramers_v": v, "effect": effect}
            )
    return res


def _passes(row_effect: str, p_by: float, lift: float, config: MiningConfig) -> bool:
    return row_effect in config.filter_effects and p_by < config.filter_p_by and lift >= config.filter_min_lift


def _mine_group(inp: _SliceInput, a_idx: int, rows: np.ndarray, config: MiningConfig, with_tables: bool = True):
    """Steps 1 and 2 for one (model, slice, A). Returns (pair rows, value rows)."""
    a = inp.attributes[a_idx]
    built = _group_tables(inp, a_idx, rows, config)
    if not built:
        return [], []
    fam = family_pvalues([t for _, t, _, _ in built], config)
    pairs, values = [], []
    for (b, table, row_vals, col_vals), (_, f) in zip(built, fam.iterrows()):
        r, c = table.shape
        v = cramers_v_corrected(table)
        eff = effect_category(v, min(r, c) - 1)
        pr = {
            "model": inp.model, "slice": inp.slice, "base_attribute": a, "compared_attribute": b,
            "n": int(table.sum()), "rows": r, "cols": c, "p": float(f["p"]), "p_method": f["p_method"],
            "p_bh": float(f["p_bh"]), "significant": bool(f["significant"]), "cramers_v": v, "effect": eff,
            "chi2": pearson_chi2(table), "dof": (r - 1) * (c - 1), "n_resamples": int(f["n_resamples"]),
        }
        if with_tables:
            pr.update(row_values=json.dumps(row_vals), col_values=json.dumps(col_vals),
                      table=json.dumps(table.tolist()))
        pairs.append(pr)
        need = pr["significant"] or (config.fdr_family == "run" and pr["p"] < config.alpha)
        if need:
            values.extend(_value_rows(inp.model, inp.slice, a, b, table, row_vals, col_vals, v, eff, config))
    return pairs, values


def _stability(inp: _SliceInput, a_idx: int, rows: np.ndarray, keys: set[tuple], config: MiningConfig) -> dict:
    """Share of stratified bootstrap resamples (stories resampled with replacement within each prompted
    base value, keeping the design's row totals) in which each association passes the filter again."""
    rng = np.random.default_rng(np.random.SeedSequence([config.bootstrap_seed, zlib.crc32(
        f"{inp.model}|{inp.slice}|{inp.attributes[a_idx]}".encode())]))
    base = inp.base_codes[rows, a_idx]
    strata = [rows[base == v] for v in np.unique(base)]
    hits = dict.fromkeys(keys, 0)
    boot_cfg = replace(config, bootstrap_reps=0, fdr_family="attribute")
    for _ in range(config.bootstrap_reps):
        sample = np.concatenate([rng.choice(s, size=s.size, replace=True) for s in strata])
        _, vals = _mine_group(inp, a_idx, sample, boot_cfg, with_tables=False)
        for v in vals:
            k = (v["base_attribute"], v["base_value"], v["compared_attribute"], v["compared_value"])
            if k in hits and _passes(v["effect"], v["p_by"], v["lift"], config):
                hits[k] += 1
    return {k: h / config.bootstrap_reps for k, h in hits.items()}


def _mine_slice(inp: _SliceInput, config: MiningConfig) -> tuple[list[dict], list[dict]]:
    pairs, values = [], []
    for a_idx in range(len(inp.attributes)):
        rows = np.flatnonzero(inp.target == a_idx)
        if rows.size == 0:
            continue
        p, v = _mine_group(inp, a_idx, rows, config)
        for row in v:
            row["passes"] = bool(_passes(row["effect"], row["p_by"], row["lift"], config))
            row["stability"] = float("nan")
        sig = {(r["base_attribute"], r["compared_attribute"]) for r in p if r["significant"]}
        if config.bootstrap_reps > 0:
            keys = {tuple(r[k] for k in _KEY) for r in v if r["passes"]
                    and (r["base_attribute"], r["compared_attribute"]) in sig}
            if keys:
                stab = _stability(inp, a_idx, rows, keys, config)
                for r in v:
                    k = tuple(r[c] for c in _KEY)
                    if k in stab:
                        r["stability"] = stab[k]
        pairs.extend(p)
        values.extend(v)
    return pairs, values


def _run_slice(args):
    return _mine_slice(*args)


# ------------------------------------------------------------------------------------------ public API


def _encode(stories: pd.DataFrame, attributes: Sequence[str], config: MiningConfig):
    codes = np.empty((len(stories), len(attributes)), dtype=np.int32)
    base_codes = np.empty_like(codes)
    labels: list[list[str]] = []
    for k, a in enumerate(attributes):
        col = stories[a]
        if isinstance(col.dtype, pd.CategoricalDtype):
            # categorical frames (the stories reader's): recode the categories in sorted label order
            cats = [str(c) for c in col.cat.categories] + ["unknown"]
            uniq = sorted(set(cats))
            pos = {u: i for i, u in enumerate(uniq)}
            remap = np.array([pos[c] for c in cats], dtype=np.int64)
            raw = col.cat.codes.to_numpy().astype(np.int64)
            inv = remap[np.where(raw < 0, len(cats) - 1, raw)]
        else:
            if col.isna().any():
                col = col.astype(object).where(col.notna(), "unknown")
            inv, uniq = pd.factorize(col.astype(str), sort=True)
            uniq = [str(u) for u in uniq]
        drop_c = np.array([u in config.compared_drop for u in uniq], dtype=bool)
        drop_b = np.array([u in config.base_drop for u in uniq], dtype=bool)
        codes[:, k] = np.where(drop_c[inv], -1, inv)
        base_codes[:, k] = np.where(drop_b[inv], -1, inv)
        labels.append(uniq)
    index = {a: i for i, a in enumerate(attributes)}
    target = stories["target_attribute"].map(index).fillna(-1).astype(np.int64).to_numpy()
    return codes, base_codes, target, labels


def mine_associations(
    stories: pd.DataFrame,
    attributes: Sequence[str],
    config: MiningConfig = MiningConfig(),
    by_language: bool = False,
) -> MiningResult:
    """Run the association statistics on a stories frame (contract C).

    ``by_language=False``: one slice "all" per model (languages pooled); ``True``: one slice per
    (model, language). Slices are independent and run in ``config.n_jobs`` processes.
    """
    attributes = list(attributes)
    required = ["model", "target_attribute"] + (["language"] if by_language else []) + attributes
    missing = [c for c in required if c not in stories.columns]
    if missing:
        raise ValueError(f"stories frame: missing column(s) {missing}")
    if len(set(attributes)) != len(attributes) or len(attributes) < 2:
        raise ValueError("attributes: need at least two distinct attribute keys")
    codes, base_codes, target, labels = _encode(stories, attributes, config)
    models = sorted(stories["model"].astype(str).unique())
    group_cols = ["model", "language"] if by_language else ["model"]
    jobs = []
    for key, idx in stories.groupby(group_cols, sort=True).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        slc = str(key[1]) if by_language else "all"
        inp = _SliceInput(str(key[0]), slc, codes[idx], base_codes[idx], target[idx], attributes, labels)
        jobs.append((inp, config))
    if config.n_jobs > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=config.n_jobs) as ex:
            results = list(ex.map(_run_slice, jobs, chunksize=max(1, len(jobs) // (4 * config.n_jobs))))
    else:
        results = [_run_slice(j) for j in jobs]
    pair_rows = [r for p, _ in results for r in p]
    value_rows = [r for _, v in results for r in v]
    pairs = pd.DataFrame(pair_rows, columns=[c for c in PAIR_COLUMNS if c != "p_bh_run"] + ["p_bh_run"])
    pairs = pairs[PAIR_COLUMNS]
    pairs["p_bh_run"] = adjust_bh(pairs["p"].to_numpy(float)) if len(pairs) else []
    values = pd.DataFrame(value_rows, columns=VALUE_COLUMNS)
    if config.fdr_family == "run" and len(pairs):
        pairs["significant"] = pairs["p_bh_run"] < config.alpha
        sig = pairs.loc[pairs["significant"], ["model", "slice", "base_attribute", "compared_attribute"]]
        values = values.merge(sig, on=list(sig.columns), how="inner")[VALUE_COLUMNS]
    for c, t in (("passes", bool), ("n", "int64"), ("count", "int64")):
        values[c] = values[c].astype(t)
    pairs["significant"] = pairs["significant"].astype(bool)
    return MiningResult(pairs.reset_index(drop=True), values.reset_index(drop=True), config, models)


# ---------------------------------------------------------------------------------------- aggregation


def provider_of(model: str) -> str:
    """Provider derived from a model name: the part before the first "/" (``openai/gpt-4o`` → ``openai``,
    LiteLLM ``azure_ai/gpt-5`` → ``azure_ai``); the name itself when there is no "/"."""
    return model.split("/", 1)[0] if "/" in model else model


def aggregate_across_models(value_tests: pd.DataFrame, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Cross-model aggregation of the associations passing the filter (spec §5.8), per slice.

    Columns: ``slice, base_attribute, base_value, compared_attribute, compared_value, models_count,
    models_total, mean_percentage`` (mean of 100·fraction over the models where it passes, 1 decimal),
    ``mean_lift`` (3 decimals), ``min_lift, max_lift, models, providers_count, providers``.
    ``models_total`` = ``len(models)`` if given, else the number of models of that slice in ``value_tests``.
    """
    cols = ["slice", *_KEY, "models_count", "models_total", "mean_percentage", "mean_lift", "min_lift",
            "max_lift", "models", "providers_count", "providers"]
    passing = value_tests[value_tests["passes"]]
    if passing.empty:
        return pd.DataFrame(columns=cols)
    totals = value_tests.groupby("slice")["model"].nunique()
    g = passing.groupby(["slice", *_KEY], sort=True)
    out = g.agg(
        models_count=("model", "nunique"),
        mean_percentage=("fraction", lambda x: round(100 * float(np.mean(x)), 1)),
        mean_lift=("lift", lambda x: round(float(np.mean(x)), 3)),
        min_lift=("lift", "min"),
        max_lift=("lift", "max"),
        models=("model", lambda x: ";".join(sorted(set(x)))),
        providers=("model", lambda x: ";".join(sorted({provider_of(m) for m in x}))),
    ).reset_index()
    out["providers_count"] = out["providers"].str.split(";").str.len()
    out["models_total"] = len(models) if models is not None else out["slice"].map(totals).astype(int)
    return out.sort_values(["slice", "models_count", "mean_lift"], ascending=[True, False, False])[cols].reset_index(drop=True)


def aggregate_across_languages(
    value_tests: pd.DataFrame, languages: Sequence[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Cross-language view of a per-language run (spec §9). S_L = the associations (A, a, B, b) passing the
    filter for at least one model in language L (slice "all" ignored).

    Returns ``(per_association, jaccard, language_specific)``: per association its ``languages_count`` and
    ``languages`` and ``models_count`` (distinct models over all languages); the symmetric Jaccard matrix
    ``|S_L1 ∩ S_L2| / |S_L1 ∪ S_L2|`` (NaN when both sets are empty); the associations found in exactly one
    language, with that language and its models count. ``languages``: the languages of the run (default:
    those present in ``value_tests``; pass ``pair_tests["slice"].unique()`` to include languages without any
    significant pair).
    """
    lang = value_tests[(value_tests["slice"] != "all") & value_tests["passes"]]
    present = set(value_tests.loc[value_tests["slice"] != "all", "slice"].unique())
    languages = sorted(set(languages) - {"all"} if languages is not None else present)
    per_cols = [*_KEY, "languages_count", "languages", "models_count"]
    if lang.empty:
        jac = pd.DataFrame(np.nan, index=languages, columns=languages)
        return pd.DataFrame(columns=per_cols), jac, pd.DataFrame(columns=[*_KEY, "language", "models_count"])
    per = lang.groupby(_KEY, sort=True).agg(
        languages_count=("slice", "nunique"),
        languages=("slice", lambda x: ";".join(sorted(set(x)))),
        models_count=("model", "nunique"),
    ).reset_index().sort_values(["languages_count"], ascending=False, kind="stable")
    sets = {L: set(map(tuple, lang.loc[lang["slice"] == L, _KEY].to_numpy().tolist())) for L in languages}
    jac = pd.DataFrame(np.nan, index=languages, columns=languages, dtype=float)
    for l1 in languages:
        for l2 in languages:
            u = sets[l1] | sets[l2]
            jac.loc[l1, l2] = len(sets[l1] & sets[l2]) / len(u) if u else np.nan
    single = per[per["languages_count"] == 1]
    spec = single.merge(
        lang.groupby([*_KEY, "slice"]).agg(models_count_lang=("model", "nunique")).reset_index(), on=_KEY
    )
    spec = spec.rename(columns={"slice": "language"})[[*_KEY, "language", "models_count_lang"]]
    spec = spec.rename(columns={"models_count_lang": "models_count"}).reset_index(drop=True)
    return per.reset_index(drop=True), jac, spec


def config_dict(config: MiningConfig) -> dict:
    """The configuration as a JSON-serialisable dict (for run manifests)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(config).items()}
