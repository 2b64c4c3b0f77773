"""StereoTales association mining: the two-step procedure of the paper (Le Jeune et al. 2026, arXiv
2605.10442; upstream Giskard-AI/stereotales-pipeline ``src/stereotales_pipeline/step_02_compute_associations.py``)
with a fast, decision-
equivalent p-value path, lift confidence intervals, bootstrap stability and cross-model / cross-language
aggregation.

Input: the stories frame (:mod:`.stories`): one row per story with ``model``, ``language``,
``target_attribute`` and one column per taxonomy attribute holding the analysis-ready English value
("unknown"/"other" kept). Output: :class:`MiningResult`.

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
import zlib
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np
import pandas as pd

from stereoprobe.inputs import Progress, no_progress
from stereoprobe.stats.effect import cramers_v_corrected, effect_category, fraction_and_lift, pearson_chi2
from stereoprobe.stats.fisher import fisher_cells_greater
from stereoprobe.stats.intervals import lift_interval
from stereoprobe.stats.multiple_testing import adjust_bh, adjust_by
from stereoprobe.stereotales.contract import ALL_SLICE, KEY_COLUMNS, MAX_ATTRIBUTES, PAIR_COLUMNS, VALUE_COLUMNS
from stereoprobe.stereotales.mining.aggregate import (
    aggregate_across_languages,
    aggregate_across_models,
    provider_of,
)
from stereoprobe.stereotales.mining.config import MiningConfig, PMethod, config_dict
from stereoprobe.stereotales.mining.pvalues import StepOneCache, family_columns, family_pvalues

T = TypeVar("T")

__all__ = [
    "MiningConfig",
    "MiningResult",
    "PAIR_COLUMNS",
    "VALUE_COLUMNS",
    "build_contingency_table",
    "family_pvalues",
    "mine_associations",
    "mine_global_and_by_language",
    "aggregate_across_models",
    "aggregate_across_languages",
    "provider_of",
    "config_dict",
    "PMethod",
]


_KEY = KEY_COLUMNS
NOT_APPLICABLE = "N/A"  # effect category of a pair that is not significant (upstream's value)


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
    return _filter_counts(counts, base_labels, compared_labels, min_row_sum)


def _filter_counts(counts: np.ndarray, base_labels: Sequence[str], compared_labels: Sequence[str],
                   min_row_sum: int) -> tuple[np.ndarray, list[str], list[str]] | None:
    """Upstream's filters on a crosstab: rows under ``min_row_sum`` dropped, then all-zero columns; ``None``
    when fewer than 2 rows or 2 columns remain."""
    rows = np.flatnonzero(counts.sum(axis=1) >= min_row_sum)
    counts = counts[rows]
    cols = np.flatnonzero(counts.sum(axis=0) > 0)
    counts = counts[:, cols]
    if counts.shape[0] < 2 or counts.shape[1] < 2:
        return None
    return counts, [base_labels[i] for i in rows], [compared_labels[j] for j in cols]


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


def _slice_tables(inp: _SliceInput, config: MiningConfig) -> dict[int, list]:
    """Every table of one slice from one columnar pass: per compared attribute B, one ``np.bincount`` of
    (base attribute, base value, value of B) over the slice's stories, then upstream's filters per (A, B).
    Returns, per base attribute index with stories, the built tables of :func:`_group_tables` (same order)."""
    n_attr = len(inp.attributes)
    kmax = max(len(lab) for lab in inp.labels)
    rows = np.flatnonzero(inp.target >= 0)
    t = inp.target[rows]
    base = inp.base_codes[rows, t].astype(np.int64)
    key0 = t * kmax + base
    counts = []
    for b_idx in range(n_attr):
        comp = inp.codes[rows, b_idx]
        ok = (base >= 0) & (comp >= 0)
        nc = len(inp.labels[b_idx])
        flat = np.bincount(key0[ok] * nc + comp[ok], minlength=n_attr * kmax * nc)
        counts.append(flat.reshape(n_attr, kmax, nc))
    present = np.bincount(t, minlength=n_attr) > 0
    out: dict[int, list] = {}
    for a_idx in np.flatnonzero(present):
        built = []
        na = len(inp.labels[a_idx])
        for b_idx, b in enumerate(inp.attributes):
            if b_idx == a_idx:
                continue
            got = _filter_counts(counts[b_idx][a_idx, :na], inp.labels[a_idx], inp.labels[b_idx], config.min_row_sum)
            if got is not None:
                built.append((b, *got))
        out[int(a_idx)] = built
    return out


def _value_rows(model, slc, a, b, table, row_vals, col_vals, v, effect, config) -> list[dict]:
    p = fisher_cells_greater(table)
    p_by = adjust_by(p.ravel()).reshape(p.shape)
    frac, lift = fraction_and_lift(table)
    lo, hi = lift_interval(table, config.lift_ci_level)
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


def _mine_group(inp: _SliceInput, a_idx: int, rows: np.ndarray | None, config: MiningConfig,
                with_tables: bool = True, built: list | None = None, cache: StepOneCache | None = None):
    """Steps 1 and 2 for one (model, slice, A) (tables: ``built``, else counted from the stories ``rows``).
    Returns (pair rows, value rows)."""
    a = inp.attributes[a_idx]
    if built is None:
        built = _group_tables(inp, a_idx, rows, config)
    if not built:
        return [], []
    fam = family_columns([t for _, t, _, _ in built], config, cache)
    pairs, values = [], []
    rows_f = [dict(zip(fam, vals)) for vals in zip(*fam.values())]
    for (b, table, row_vals, col_vals), f in zip(built, rows_f):
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
            rows = _value_rows(inp.model, inp.slice, a, b, table, row_vals, col_vals, v, eff, config)
            for row in rows:
                row["pair_p_method"] = pr["p_method"]
            values.extend(rows)
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


_RUN_CACHE: list[StepOneCache] = []  # the step-1 cache of the run under way in this process (worker)


def _run_cache(config: MiningConfig) -> StepOneCache:
    """This process's :class:`StepOneCache` for ``config`` (a worker keeps it across the slices it is given)."""
    if not _RUN_CACHE or _RUN_CACHE[0].config != config:
        _RUN_CACHE[:] = [StepOneCache(config)]
    return _RUN_CACHE[0]


def _mine_slice(inp: _SliceInput, config: MiningConfig) -> tuple[list[dict], list[dict]]:
    pairs, values = [], []
    cache = _run_cache(config)
    for a_idx, built in _slice_tables(inp, config).items():
        p, v = _mine_group(inp, a_idx, None, config, built=built, cache=cache)
        for row in v:
            row["passes"] = bool(_passes(row["effect"], row["p_by"], row["lift"], config))
            row["stability"] = float("nan")
        sig = {(r["base_attribute"], r["compared_attribute"]) for r in p if r["significant"]}
        if config.bootstrap_reps > 0:
            keys = {tuple(r[k] for k in _KEY) for r in v if r["passes"]
                    and (r["base_attribute"], r["compared_attribute"]) in sig}
            if keys:
                stab = _stability(inp, a_idx, np.flatnonzero(inp.target == a_idx), keys, config)
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


class _Counted(Iterable[T]):
    """An iterator with a known length (the slices of a process pool), so a progress bar shows a total."""

    def __init__(self, items: Iterable[T], total: int) -> None:
        self._items, self._total = items, total

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __len__(self) -> int:
        return self._total


def _check_frame(stories: pd.DataFrame, attributes: list[str], by_language: bool) -> None:
    required = ["model", "target_attribute"] + (["language"] if by_language else []) + attributes
    missing = [c for c in required if c not in stories.columns]
    if missing:
        raise ValueError(f"stories frame: missing column(s) {missing}")
    if len(set(attributes)) != len(attributes) or len(attributes) < 2:
        raise ValueError("attributes: need at least two distinct attribute keys")
    if len(attributes) > MAX_ATTRIBUTES:  # every ordered pair is tested: bound the work instead of hanging
        from stereoprobe.errors import InputError

        raise InputError(f"stories: {len(attributes):,} attribute keys (e.g. {', '.join(attributes[:3])}); "
                         f"association mining tests every pair, so at most {MAX_ATTRIBUTES} are accepted "
                         "(the paper's release has 19)")


def _slice_jobs(stories: pd.DataFrame, attributes: list[str], config: MiningConfig, encoded, by_language: bool):
    codes, base_codes, target, labels = encoded
    group_cols = ["model", "language"] if by_language else ["model"]
    jobs = []
    for key, idx in stories.groupby(group_cols, sort=True).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        slc = str(key[1]) if by_language else ALL_SLICE
        inp = _SliceInput(str(key[0]), slc, codes[idx], base_codes[idx], target[idx], attributes, labels)
        jobs.append((inp, config))
    return jobs


def _run_jobs(jobs: list, config: MiningConfig, progress: Progress) -> list:
    """The slices' results in job order, in ``config.n_jobs`` processes (each keeps its step-1 cache across
    the slices it runs). With several processes the slices go out one at a time, largest first (stories as
    the measure of work: a global slice holds its model's every language), so no process is left with a
    batch of large slices at the end (longest-processing-time-first scheduling)."""
    label = "association tests" + (" and bootstrap" if config.bootstrap_reps else "") + " (model x slice)"
    try:
        if config.n_jobs > 1 and len(jobs) > 1:
            _RUN_CACHE.clear()  # workers start with an empty cache
            order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][0].target))
            out: list = [None] * len(jobs)
            with ProcessPoolExecutor(max_workers=config.n_jobs) as ex:
                done = ex.map(_run_slice, [jobs[i] for i in order], chunksize=1)
                for i, res in zip(order, progress(_Counted(done, len(jobs)), label)):
                    out[i] = res
            return out
        return [_run_slice(j) for j in progress(jobs, label)]
    finally:
        _RUN_CACHE.clear()


def _assemble(results: list, config: MiningConfig, models: list[str]) -> MiningResult:
    """One call's result from its slices' rows: BH over the call's pair tests (``p_bh_run``), the run-family
    decisions, column types, "N/A" effects of pairs that are not significant."""
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
    if not config.effect_all_pairs:  # upstream writes "N/A" for the pairs that are not significant
        pairs.loc[~pairs["significant"], "effect"] = NOT_APPLICABLE
    return MiningResult(pairs.reset_index(drop=True), values.reset_index(drop=True), config, models)


def mine_associations(
    stories: pd.DataFrame,
    attributes: Sequence[str],
    config: MiningConfig = MiningConfig(),
    by_language: bool = False,
    *,
    progress: Progress = no_progress,
) -> MiningResult:
    """Run the association statistics on a stories frame (:mod:`.stories`).

    ``by_language=False``: one slice "all" per model (languages pooled); ``True``: one slice per
    (model, language). Slices are independent and run in ``config.n_jobs`` processes. ``progress`` reports
    the slices as they finish (:data:`stereoprobe.inputs.Progress`; default: silent; the CLI draws a bar).
    """
    attributes = list(attributes)
    _check_frame(stories, attributes, by_language)
    encoded = _encode(stories, attributes, config)
    models = sorted(stories["model"].astype(str).unique())
    jobs = _slice_jobs(stories, attributes, config, encoded, by_language)
    return _assemble(_run_jobs(jobs, config, progress), config, models)


def mine_global_and_by_language(
    stories: pd.DataFrame,
    attributes: Sequence[str],
    config: MiningConfig = MiningConfig(),
    *,
    progress: Progress = no_progress,
) -> tuple[MiningResult, MiningResult]:
    """``mine_associations(by_language=False)`` and ``mine_associations(by_language=True)`` in one pass: the
    frame is encoded once and the global and per-language slices run in one pool, sharing each process's
    step-1 cache (a per-language table equal to a global one, e.g. a model with one language, is tested
    once). The two results are those of the two calls, bit for bit (``p_bh_run`` is still computed within
    each)."""
    attributes = list(attributes)
    _check_frame(stories, attributes, True)
    encoded = _encode(stories, attributes, config)
    models = sorted(stories["model"].astype(str).unique())
    glob = _slice_jobs(stories, attributes, config, encoded, False)
    lang = _slice_jobs(stories, attributes, config, encoded, True)
    results = _run_jobs(glob + lang, config, progress)
    return (_assemble(results[: len(glob)], config, models), _assemble(results[len(glob):], config, models))
