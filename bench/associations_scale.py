"""Stage profile of ``stereoprobe associations`` (global, then ``--by-language``) at the release's scale.

Makes the synthetic table itself (``stereoprobe.stereotales.mining.synthetic``: 23 models × 10 languages ×
2,844 prompts = 654,120 stories, 19 attributes, planted associations; one Parquet file in the release's
layout), then, in one command:

1. the **count pass alone** (the floor): every contingency table of both commands from one columnar pass
   (``np.bincount`` on the categorical codes, one pass per compared attribute);
2. the **stage profile** (``--profile``, in this process, ``--jobs 1``): each command through the Python API
   that the command line calls (``analyze`` + ``write``), with every stage's exclusive seconds: reading,
   contingency tables, the r×c tests (exact, asymptotic, Monte Carlo, the decision loop with its BH),
   per-cell tests, multiple testing of the cells, effect sizes, the other tables, writing, the report;
3. the **commands themselves** (``--cli``): ``stereoprobe associations FILE --out DIR [--by-language]
   --jobs J`` as subprocesses, wall seconds and peak memory (max RSS) of each.

The load average before and after is printed with the figures (the development machine is shared).

    .venv/bin/python bench/associations_scale.py --profile --cli          # 654k stories (minutes)
    .venv/bin/python bench/associations_scale.py --models 3 --profile     # 85k stories while iterating
    .venv/bin/python bench/associations_scale.py --models 2 --languages 3 --compare OLD_CHECKOUT
    .venv/bin/python bench/associations_scale.py --models 23 --languages 1 --compare-io OLD_CHECKOUT
    .venv/bin/python bench/associations_scale.py --compare-tables OLD_CHECKOUT   # 654k, ~10 min

``--compare OLD_CHECKOUT`` (a checkout of an earlier commit, e.g. ``git worktree add /tmp/old e38b47b``):
the mining alone (global + per-language, ``--jobs 1``) on the same synthetic frame with the old code and with
this one, in one command (old, new, new, old), CPU seconds of each and whether every pair and value test is
identical. ``--compare-io OLD_CHECKOUT``: the same for the two stages outside the statistics, reading the
table and rebuilding the report of its output folder (CPU seconds, old/new/new/old). ``--compare-tables
OLD_CHECKOUT``: the stages of ``--by-language`` outside the statistics and the report (reading, the other
tables, the example stories, the manifest, writing the tables), old/new/new/old, with the mining replaced by
one result made beforehand (``p_method="asymptotic"``: the tables have the sizes of a real run, in minutes),
CPU seconds of each stage and whether the two output folders are byte-identical (``run_info.json`` but its
time stamps and timings).
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from associations import LANGUAGES, planted_set  # noqa: E402

from stereoprobe.stereotales.mining.synthetic import ATTRIBUTE_SHAPES, release_table, synthetic_stories  # noqa: E402

M = "stereoprobe.stereotales.mining."
# (module, attribute, stage): wrapped where the attribute exists (the code before and after issue 45 differ)
STAGES: list[tuple[str, str, str]] = [
    (M + "api", "read_stories", "read (release reader)"),
    (M + "associations", "_group_tables", "contingency tables"),
    (M + "associations", "_slice_tables", "contingency tables"),
    (M + "counts", "count_tables", "contingency tables"),
    (M + "pvalues", "exact_ffh_pvalue", "r×c exact"),
    (M + "pvalues", "ffh_asymptotic_pvalue", "r×c asymptotic"),
    (M + "pvalues", "exact_pvalue_upper_bound", "r×c asymptotic"),
    (M + "pvalues", "cochran_ok", "r×c asymptotic"),
    ("stereoprobe.stats.fisher", "McCounter.draw_to", "r×c Monte Carlo draws"),
    ("stereoprobe.stats.fisher", "McCounter.__init__", "r×c Monte Carlo draws"),
    (M + "associations", "family_pvalues", "r×c decision loop (BH, intervals)"),
    (M + "associations", "family_columns", "r×c decision loop (BH, intervals)"),
    (M + "associations", "fisher_cells_greater", "per-cell tests"),
    (M + "associations", "adjust_by", "multiple testing (cells, BY)"),
    (M + "associations", "adjust_bh", "multiple testing (run BH)"),
    (M + "associations", "cramers_v_corrected", "effect sizes"),
    (M + "associations", "pearson_chi2", "effect sizes"),
    (M + "associations", "effect_category", "effect sizes"),
    (M + "associations", "fraction_and_lift", "effect sizes"),
    (M + "associations", "lift_interval", "effect sizes"),
    (M + "api", "_tables", "other tables (distributions, aggregates)"),
    (M + "api", "write_table", "writing tables"),
    ("stereoprobe.tables", "write_table", "writing tables"),
    (M + "api", "write_associations_report", "report"),
]


class StageClock:
    """Exclusive seconds per stage: a wrapped call's time minus the wrapped calls inside it."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[float] = []  # children's time of each open call

    def wrap(self, fn: Callable[..., Any], stage: str) -> Callable[..., Any]:
        def timed(*a: Any, **k: Any) -> Any:
            self._stack.append(0.0)
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                dt = time.perf_counter() - t
                inner = self._stack.pop()
                self.seconds[stage] += dt - inner
                if self._stack:
                    self._stack[-1] += dt
        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed

    def install(self) -> list[tuple[Any, str, Any]]:
        undo = []
        for mod_name, attr, stage in STAGES:
            try:
                obj: Any = importlib.import_module(mod_name)
            except ImportError:
                continue
            *path, name = attr.split(".")
            for p in path:
                obj = getattr(obj, p)
            if not hasattr(obj, name):
                continue
            orig = getattr(obj, name)
            undo.append((obj, name, orig))
            setattr(obj, name, self.wrap(orig, stage))
        return undo


def make_table(models: int, languages: int, planted: int, seed: int, folder: Path) -> tuple[Path, int]:
    rng = np.random.default_rng(seed)
    names = [f"provider{i % 10}/model-{i}" for i in range(models)]
    stories = synthetic_stories(names, LANGUAGES[:languages], planted=planted_set(rng, planted, names), seed=seed)
    path = folder / "stories.parquet"
    release_table(stories, list(ATTRIBUTE_SHAPES)).to_parquet(path, index=False)
    return path, len(stories)


def count_floor(path: Path) -> tuple[float, int]:
    """Seconds of the count pass alone on the read frame: every (model, language, base attribute, base value,
    compared value) count for each compared attribute by one ``np.bincount``; global tables are the sums over
    languages. Returns (seconds, non-zero cells)."""
    from stereoprobe.stereotales.mining.stories import read_stories

    frame = read_stories([path]).frame
    attrs = [a for a in ATTRIBUTE_SHAPES if a in frame.columns]
    t = time.perf_counter()
    n_models = frame["model"].cat.categories.size
    n_lang = frame["language"].cat.categories.size
    slice_id = frame["model"].cat.codes.to_numpy().astype(np.int64) * n_lang + frame["language"].cat.codes.to_numpy()
    target = frame["target_attribute"].cat.set_categories(attrs).cat.codes.to_numpy().astype(np.int64)
    codes = np.stack([frame[a].cat.codes.to_numpy().astype(np.int64) for a in attrs], axis=1)
    widths = [frame[a].cat.categories.size for a in attrs]
    kmax = max(widths)
    ok = target >= 0
    base = codes[np.flatnonzero(ok), target[ok]]
    key0 = (slice_id[ok] * len(attrs) + target[ok]) * kmax + base
    nz = 0
    for j in range(len(attrs)):
        key = key0 * widths[j] + codes[ok, j]
        per_lang = np.bincount(key, minlength=n_models * n_lang * len(attrs) * kmax * widths[j])
        per_lang = per_lang.reshape(n_models, n_lang, -1)
        glob = per_lang.sum(axis=1)
        nz += int(np.count_nonzero(per_lang)) + int(np.count_nonzero(glob))
    return time.perf_counter() - t, nz


def profile(path: Path, by_language: bool, out: Path) -> dict[str, float]:
    from stereoprobe.stereotales.mining import AssociationOptions, analyze, write
    from stereoprobe.stereotales.mining.config import MiningConfig

    clock = StageClock()
    undo = clock.install()
    try:
        t = time.perf_counter()
        res = analyze([path], AssociationOptions(MiningConfig(), by_language=by_language))
        write(res, out)
        total = time.perf_counter() - t
    finally:
        for obj, name, orig in reversed(undo):
            setattr(obj, name, orig)
    stages = dict(clock.seconds)
    stages["(rest)"] = total - sum(stages.values())
    stages["TOTAL"] = total
    return stages


def cli(path: Path, by_language: bool, jobs: int, out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (GB) of ``stereoprobe associations`` as a user runs it."""
    cmd = [sys.executable, "-m", "stereoprobe", "associations", str(path), "--out", str(out), "--jobs", str(jobs)]
    if by_language:
        cmd.append("--by-language")
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err[-2000:]}")
    # ru_maxrss of the command's process; its workers (--jobs > 1) are its children, counted in ours below
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(ru.ru_maxrss, kids) / 1e6


def mine_only(models: int, languages: int, planted: int, seed: int, out: str) -> None:
    """Global + per-language mining of the synthetic frame with the ``stereoprobe`` on ``sys.path``; pickles
    the four tables to ``out`` and prints the CPU seconds."""
    import pickle

    import stereoprobe.stereotales.mining.associations as assoc

    rng = np.random.default_rng(seed)
    names = [f"provider{i % 10}/model-{i}" for i in range(models)]
    st = synthetic_stories(names, LANGUAGES[:languages], planted=planted_set(rng, planted, names), seed=seed)
    attrs, cfg = list(ATTRIBUTE_SHAPES), assoc.MiningConfig()
    t = time.process_time()
    if hasattr(assoc, "mine_global_and_by_language"):
        g, lang = assoc.mine_global_and_by_language(st, attrs, cfg)
    else:  # the code before issue 45
        g, lang = assoc.mine_associations(st, attrs, cfg), assoc.mine_associations(st, attrs, cfg, by_language=True)
    cpu = time.process_time() - t
    with open(out, "wb") as fh:
        pickle.dump((g.pair_tests, g.value_tests, lang.pair_tests, lang.value_tests), fh)
    print(f"{cpu:.3f} {len(st)}")


def compare(args: argparse.Namespace, old: Path) -> None:
    """Old code vs this code on the mining alone, interleaved old/new/new/old; CPU seconds and equality."""
    import pickle

    import pandas as pd

    here = Path(__file__).resolve().parents[1]
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as d:
        for which in ("old", "new", "new", "old"):
            root = old.resolve() if which == "old" else here
            env = {**os.environ, "PYTHONPATH": str(root)}
            cmd = [sys.executable, __file__, "--mine-only", f"{d}/{which}.pkl", "--models", str(args.models),
                   "--languages", str(args.languages), "--planted", str(args.planted), "--seed", str(args.seed)]
            out = subprocess.run(cmd, env=env, cwd=root, check=True, capture_output=True, text=True).stdout.split()
            cpu[which].append(float(out[-2]))
            print(f"{which}: {float(out[-2]):.2f} CPU-s ({int(out[-1]):,} stories)", flush=True)
        tables = {w: pickle.load(open(f"{d}/{w}.pkl", "rb")) for w in ("old", "new")}
    for a, b in zip(tables["old"], tables["new"]):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    o, n = sum(cpu["old"]) / 2, sum(cpu["new"]) / 2
    print(f"mining alone: old {o:.2f} CPU-s, new {n:.2f} CPU-s, ratio {o / n:.2f}x; every pair and value test "
          f"identical ({', '.join(str(len(t)) for t in tables['new'])} rows)")


def io_only(table: Path, tables: Path) -> None:
    """Reading ``table`` and rebuilding the report of the output folder ``tables`` (a copy) with the
    ``stereoprobe`` on ``sys.path``; prints the CPU seconds of each."""
    import shutil

    from stereoprobe.stereotales.mining.report import write_associations_report
    from stereoprobe.stereotales.mining.stories import read_stories

    t = time.process_time()
    n = len(read_stories([table]).frame)
    read = time.process_time() - t
    with tempfile.TemporaryDirectory() as d:
        copy = Path(d) / "out"
        shutil.copytree(tables, copy)
        t = time.process_time()
        write_associations_report(copy)
        report = time.process_time() - t
    print(f"{read:.3f} {report:.3f} {n}")


def compare_io(args: argparse.Namespace, old: Path) -> None:
    """Old code vs this code on the two stages outside the statistics, interleaved old/new/new/old on one
    synthetic table: reading it, and rebuilding the report of its global output folder (made once, by this
    code; the report reads only the folder). CPU seconds of each."""
    from stereoprobe.stereotales.mining import AssociationOptions, analyze, write
    from stereoprobe.stereotales.mining.config import MiningConfig

    here = Path(__file__).resolve().parents[1]
    cpu: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as d:
        path, n = make_table(args.models, args.languages, args.planted, args.seed, Path(d))
        write(analyze([path], AssociationOptions(MiningConfig())), Path(d) / "tables")
        print(f"{n:,} stories ({args.models} models × {args.languages} languages); tables written", flush=True)
        for which in ("old", "new", "new", "old"):
            root = old.resolve() if which == "old" else here
            env = {**os.environ, "PYTHONPATH": str(root)}
            cmd = [sys.executable, __file__, "--io-only", str(path), str(Path(d) / "tables")]
            out = subprocess.run(cmd, env=env, cwd=root, check=True, capture_output=True, text=True).stdout.split()
            cpu[which].append((float(out[-3]), float(out[-2])))
            print(f"{which}: read {float(out[-3]):.2f} CPU-s, report {float(out[-2]):.2f} CPU-s", flush=True)
    for k, name in enumerate(("reading", "report")):
        o, n = (sum(x[k] for x in cpu[w]) / 2 for w in ("old", "new"))
        print(f"{name}: old {o:.2f} CPU-s, new {n:.2f} CPU-s, ratio {o / n:.2f}x")


def tables_only(table: Path, mined: Path, out: Path) -> None:
    """``analyze`` (``--by-language``) + ``write`` without the report, the mining replaced by the pickled
    result ``mined``, with the ``stereoprobe`` on ``sys.path``; prints the CPU seconds of each stage (JSON)."""
    import json
    import pickle

    import pandas as pd

    from stereoprobe.stereotales.mining import AssociationOptions, api
    from stereoprobe.stereotales.mining import tables as T

    gp, gv, lp, lv = pickle.loads(mined.read_bytes())
    api._mine = lambda *a, **k: (pd.concat([gp, lp[lp["slice"] != "all"]], ignore_index=True),
                                 pd.concat([gv, lv[lv["slice"] != "all"]], ignore_index=True))
    clock: dict[str, float] = defaultdict(float)

    def timed(fn: Callable[..., Any], stage: str) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                clock[stage] += time.process_time() - t
        return run

    for mod, name, stage in ((api, "read_stories", "reading"), (api, "_tables", "other tables"),
                             (T, "pick_examples", "examples"), (api, "read_story_excerpts", "excerpts"),
                             (api, "_manifest", "manifest")):
        setattr(mod, name, timed(getattr(mod, name), stage))
    run = timed(api.analyze, "analyze")([table], AssociationOptions(by_language=True))
    timed(api.write, "writing tables")(run, out, report=False)
    clock["analyze"] -= sum(v for k, v in clock.items() if k not in ("analyze", "writing tables"))
    clock["rest of analyze"] = clock.pop("analyze")
    print(json.dumps(clock))


def _same_folders(a: Path, b: Path) -> str:
    import filecmp
    import json

    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return "different files"
    bad = []
    for name in names:
        if name == "run_info.json":
            x, y = (json.loads((d / name).read_text()) for d in (a, b))
            for j in (x, y):
                j.pop("created", None), j.pop("timings", None)
            bad += [name] if x != y else []
        elif not filecmp.cmp(a / name, b / name, shallow=False):
            bad.append(name)
    return f"{len(names)} files byte-identical" if not bad else f"DIFFERENT: {bad}"


def compare_tables(args: argparse.Namespace, old: Path) -> None:
    """Old code vs this code on the stages outside the statistics and the report, old/new/new/old."""
    import json
    import pickle

    from stereoprobe.stereotales.mining.associations import mine_global_and_by_language
    from stereoprobe.stereotales.mining.config import MiningConfig
    from stereoprobe.stereotales.mining.stories import read_stories

    here = Path(__file__).resolve().parents[1]
    cpu: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as d:
        path, n = make_table(args.models, args.languages, args.planted, args.seed, Path(d))
        st = read_stories([path])
        g, lang = mine_global_and_by_language(st.frame, st.attributes, MiningConfig(p_method="asymptotic"))
        mined = Path(d) / "mined.pkl"
        mined.write_bytes(pickle.dumps((g.pair_tests, g.value_tests, lang.pair_tests, lang.value_tests)))
        del st, g, lang
        print(f"{n:,} stories ({args.models} models × {args.languages} languages); mined once", flush=True)
        for k, which in enumerate(("old", "new", "new", "old")):
            root = old.resolve() if which == "old" else here
            env = {**os.environ, "PYTHONPATH": str(root)}
            cmd = [sys.executable, __file__, "--tables-only", str(path), str(mined), f"{d}/{which}{k}"]
            out = subprocess.run(cmd, env=env, cwd=root, check=True, capture_output=True, text=True).stdout
            cpu[which].append(json.loads(out.strip().splitlines()[-1]))
            print(f"{which}: " + ", ".join(f"{s} {v:.2f}" for s, v in cpu[which][-1].items()) + " CPU-s", flush=True)
        print(f"outputs old vs new: {_same_folders(Path(d) / 'old0', Path(d) / 'new1')}")
    stages = list(cpu["new"][0])
    for s in stages + ["total"]:
        o, w = (sum(sum(r.values()) if s == "total" else r.get(s, 0.0) for r in cpu[x]) / 2 for x in ("old", "new"))
        print(f"  {s:<18} old {o:7.2f}  new {w:7.2f} CPU-s  ratio {o / w if w else float('nan'):.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=23)
    ap.add_argument("--languages", type=int, default=10)
    ap.add_argument("--planted", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="--jobs of the command-line runs")
    ap.add_argument("--profile", action="store_true", help="stage profile in this process (--jobs 1)")
    ap.add_argument("--cli", action="store_true", help="time the two commands as subprocesses")
    ap.add_argument("--compare", metavar="OLD_CHECKOUT", help="mining alone: an earlier checkout vs this one")
    ap.add_argument("--compare-io", metavar="OLD_CHECKOUT", help="reading and report: an earlier checkout vs this one")
    ap.add_argument("--compare-tables", metavar="OLD_CHECKOUT",
                    help="reading, other tables, examples, writing (--by-language): an earlier checkout vs this one")
    ap.add_argument("--io-only", nargs=2, metavar=("TABLE", "TABLES"), help=argparse.SUPPRESS)  # --compare-io side
    ap.add_argument("--tables-only", nargs=3, metavar=("TABLE", "PKL", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--make-only", metavar="DIR", help=argparse.SUPPRESS)  # the table, in a child process
    ap.add_argument("--mine-only", metavar="PKL", help=argparse.SUPPRESS)  # one side of --compare
    args = ap.parse_args()
    if args.mine_only:
        mine_only(args.models, args.languages, args.planted, args.seed, args.mine_only)
        return
    if args.io_only:
        io_only(Path(args.io_only[0]), Path(args.io_only[1]))
        return
    if args.tables_only:
        tables_only(*map(Path, args.tables_only))
        return
    if args.compare_tables:
        load0 = os.getloadavg()
        compare_tables(args, Path(args.compare_tables))
        print(f"load average (1 min) before/after: {load0[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        return
    if args.compare or args.compare_io:
        load0 = os.getloadavg()
        if args.compare_io:
            compare_io(args, Path(args.compare_io))
            print(f"load average (1 min) before/after: {load0[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
            return
        compare(args, Path(args.compare))
        print(f"load average (1 min) before/after: {load0[0]:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        return
    if args.make_only:
        print(make_table(args.models, args.languages, args.planted, args.seed, Path(args.make_only))[1])
        return
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        t = time.perf_counter()
        # made in a child process, so that this process's peak memory is the commands'
        made = subprocess.run([sys.executable, __file__, "--make-only", d, "--models", str(args.models), "--languages",
                               str(args.languages), "--planted", str(args.planted), "--seed", str(args.seed)],
                              check=True, capture_output=True, text=True)
        path, n = folder / "stories.parquet", int(made.stdout.split()[-1])
        print(f"stories: {n:,} ({args.models} models × {args.languages} languages), table made in "
              f"{time.perf_counter() - t:.1f} s ({path.stat().st_size / 1e6:.0f} MB Parquet)", flush=True)
        floor, cells = count_floor(path)
        print(f"floor: count pass alone (every table of both commands, {cells:,} non-zero cells): {floor:.2f} s",
              flush=True)
        if args.profile:
            for by_language in (False, True):
                name = "--by-language" if by_language else "global"
                st = profile(path, by_language, folder / f"prof-{name}")
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
                print(f"stage profile, {name} (--jobs 1), exclusive seconds (peak RSS so far {peak:.2f} GB):")
                for k, v in sorted(st.items(), key=lambda kv: (kv[0] == "TOTAL", -kv[1])):
                    print(f"  {k:<44} {v:8.2f}")
                sys.stdout.flush()
        if args.cli:
            tot = 0.0
            for by_language in (False, True):
                name = "--by-language" if by_language else "global"
                wall, rss = cli(path, by_language, args.jobs, folder / f"cli-{name}")
                tot += wall
                print(f"stereoprobe associations {name} --jobs {args.jobs}: {wall:.1f} s wall, peak RSS {rss:.2f} GB",
                      flush=True)
            print(f"both commands: {tot:.1f} s (floor {floor:.2f} s)")
    load1 = os.getloadavg()
    print(f"load average (1 min) before/after: {load0[0]:.1f} / {load1[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
