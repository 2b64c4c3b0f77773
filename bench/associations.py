"""Benchmark of StereoTales association mining at the paper's scale, against the reference procedure.

Synthetic stories (``stereoprobe.stereotales.mining.synthetic``): 23 models × 10 languages × 2,844 prompts
(19 attributes with the taxonomy's value counts, realistic unknown rates, planted associations of varied
strength). Times (wall clock and CPU seconds, the latter independent of other users of a shared machine)
the global run and the per-language run of ``mine_associations`` (``p_method="auto"``,
``n_jobs`` processes), then, in the same command, the reference procedure (scipy Monte Carlo Fisher test,
500,000 resamples, seed 42, BH per family) on a random subset of families: its time per test, the
extrapolated reference time for all tests, the ratio, and the agreement of the decisions on the subset.

    .venv/bin/python bench/associations.py            # full scale (a few minutes on 2 cores)
    .venv/bin/python bench/associations.py --quick    # 4 models, 3 languages, smaller reference subset
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np
import pandas as pd

from stereoprobe.stereotales.mining.associations import MiningConfig, family_pvalues, mine_associations
from stereoprobe.stereotales.mining.synthetic import ATTRIBUTE_SHAPES, Planted, synthetic_stories

LANGUAGES = ["en", "fr", "es", "it", "pt", "du", "uk", "ar", "hi", "zh"]


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its finished children (the worker processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def planted_set(rng: np.random.Generator, n: int, models: list[str]) -> list[Planted]:
    """``n`` random planted associations, lifts 1.3–4, each in a random subset of models and languages."""
    attrs = list(ATTRIBUTE_SHAPES)
    out = []
    while len(out) < n:
        a, b = rng.choice(attrs, size=2, replace=False)
        ka, kb = ATTRIBUTE_SHAPES[a][0], ATTRIBUTE_SHAPES[b][0]
        lift = float(rng.uniform(1.3, 4.0))
        if lift / ka >= 0.95:
            continue
        ms = tuple(rng.choice(models, size=int(rng.integers(1, len(models) + 1)), replace=False))
        ls = None if rng.random() < 0.6 else tuple(rng.choice(LANGUAGES, size=int(rng.integers(1, 6)), replace=False))
        out.append(Planted(str(a), int(rng.integers(ka)), str(b), int(rng.integers(kb)), lift, ms, ls))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="4 models, 3 languages, 2 reference families")
    ap.add_argument("--models", type=int, default=23)
    ap.add_argument("--languages", type=int, default=10)
    ap.add_argument("--planted", type=int, default=40)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--ref-families", type=int, default=3, help="families (model, slice, A) run by the reference")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args()
    if args.quick:
        args.models, args.languages, args.ref_families, args.planted = 4, 3, 2, 12

    load0 = os.getloadavg()
    rng = np.random.default_rng(args.seed)
    models = [f"provider{i % 10}/model-{i}" for i in range(args.models)]
    langs = LANGUAGES[: args.languages]
    t0 = time.perf_counter()
    stories = synthetic_stories(models, langs, planted=planted_set(rng, args.planted, models), seed=args.seed)
    t_gen = time.perf_counter() - t0
    attrs = list(ATTRIBUTE_SHAPES)
    cfg = MiningConfig(n_jobs=args.n_jobs)
    print(f"stories: {len(stories):,} ({args.models} models × {args.languages} languages), generated in {t_gen:.1f}s",
          flush=True)

    t0, c0 = time.perf_counter(), cpu_seconds()
    glob = mine_associations(stories, attrs, cfg)
    t_glob, c_glob = time.perf_counter() - t0, cpu_seconds() - c0
    print(f"global run: {len(glob.pair_tests):,} pair tests in {t_glob:.1f}s wall, {c_glob:.1f} CPU-s", flush=True)
    t0, c0 = time.perf_counter(), cpu_seconds()
    lang = mine_associations(stories, attrs, cfg, by_language=True)
    t_lang, c_lang = time.perf_counter() - t0, cpu_seconds() - c0
    pairs = pd.concat([glob.pair_tests, lang.pair_tests], ignore_index=True)
    n_tests = len(pairs)
    print(f"global run: {len(glob.pair_tests):,} pair tests in {t_glob:.1f}s; "
          f"per-language run: {len(lang.pair_tests):,} pair tests in {t_lang:.1f}s; total {t_glob + t_lang:.1f}s "
          f"(n_jobs={args.n_jobs}); CPU time {c_glob:.1f}s + {c_lang:.1f}s = {c_glob + c_lang:.1f}s "
          f"→ {(c_glob + c_lang) / args.n_jobs:.1f}s on {args.n_jobs} free cores")
    print("p-value methods:", pairs["p_method"].value_counts().to_dict(),
          f"| resamples drawn: {int(pairs['n_resamples'].sum()):,} "
          f"(reference: {n_tests * cfg.mc_resamples:,})")
    print(f"associations passing the filter: global {int(glob.value_tests['passes'].sum()):,}, "
          f"per-language {int(lang.value_tests['passes'].sum()):,}")

    # reference on a subset of families, in the same run
    fams = pairs.groupby(["model", "slice", "base_attribute"]).size().reset_index()[["model", "slice", "base_attribute"]]
    n_glob = max(1, args.ref_families // 3)
    g_f = fams[fams["slice"] == "all"].sample(n=min(n_glob, (fams["slice"] == "all").sum()), random_state=args.seed)
    l_f = fams[fams["slice"] != "all"].sample(n=min(args.ref_families - len(g_f), (fams["slice"] != "all").sum()),
                                              random_state=args.seed)
    subset = pd.concat([g_f, l_f])
    ref_cfg = MiningConfig(p_method="reference-mc")
    agree = total = 0
    t_ref = {"all": 0.0, "lang": 0.0}
    n_ref = {"all": 0, "lang": 0}
    t_fast_sub = 0.0
    disagreements = []
    for _, f in subset.iterrows():
        rows = pairs[(pairs["model"] == f["model"]) & (pairs["slice"] == f["slice"])
                     & (pairs["base_attribute"] == f["base_attribute"])]
        tables = [np.array(json.loads(t)) for t in rows["table"]]
        kind = "all" if f["slice"] == "all" else "lang"
        t0 = time.process_time()
        ref = family_pvalues(tables, ref_cfg)
        t_ref[kind] += time.process_time() - t0
        n_ref[kind] += len(tables)
        t0 = time.process_time()
        family_pvalues(tables, cfg)
        t_fast_sub += time.process_time() - t0
        same = ref["significant"].to_numpy() == rows["significant"].to_numpy()
        agree += int(same.sum())
        total += len(tables)
        for (_, r), s, rp in zip(rows.iterrows(), same, ref["p"]):
            if not s:
                disagreements.append((r["model"], r["slice"], r["base_attribute"], r["compared_attribute"], r["p"], rp))
    per_test = {k: t_ref[k] / n_ref[k] for k in t_ref if n_ref[k]}
    n_kind = {"all": len(glob.pair_tests), "lang": len(lang.pair_tests)}
    extrapolated = sum(per_test.get(k, np.mean(list(per_test.values()))) * n_kind[k] for k in n_kind)
    fast_cpu = c_glob + c_lang
    load1 = os.getloadavg()
    print(f"reference on {total} tests of {len(subset)} families: {sum(t_ref.values()):.1f} CPU-s "
          f"(fast path on the same families: {t_fast_sub:.2f} CPU-s, ratio {sum(t_ref.values()) / t_fast_sub:.0f}×); "
          "per test: " + ", ".join(f"{k} {v:.2f}s" for k, v in per_test.items()))
    print(f"extrapolated reference CPU time for all {n_tests:,} tests: {extrapolated / 3600:.1f} h "
          f"({extrapolated / 3600 / args.n_jobs:.1f} h on {args.n_jobs} cores); fast path {fast_cpu:.1f} CPU-s "
          f"→ ratio {extrapolated / fast_cpu:.0f}×")
    print(f"decision agreement with the reference on the subset: {agree}/{total}")
    for d in disagreements:
        print("  disagreement:", d)
    print(f"load average (1 min) before/after: {load0[0]:.1f} / {load1[0]:.1f} on {os.cpu_count()} CPUs")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({
                "stories": len(stories), "models": args.models, "languages": args.languages, "n_jobs": args.n_jobs,
                "global_s": t_glob, "per_language_s": t_lang, "total_s": t_glob + t_lang,
                "global_cpu_s": c_glob, "per_language_cpu_s": c_lang, "tests": n_tests,
                "methods": pairs["p_method"].value_counts().to_dict(),
                "resamples": int(pairs["n_resamples"].sum()), "ref_tests": total, "ref_s": sum(t_ref.values()),
                "ref_per_test_s": per_test, "fast_subset_s": t_fast_sub, "extrapolated_ref_s": extrapolated,
                "ratio": extrapolated / fast_cpu, "agreement": [agree, total],
                "load_before": load0, "load_after": load1,
            }, fh, indent=1)


if __name__ == "__main__":
    main()
