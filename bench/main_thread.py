"""inspect's main thread during a GlobalBias run: its CPU seconds, old code against new, in one command.

The provider's worker scores on other threads; everything else during ``inspect eval`` (tokenizing the grouped
requests, the live metrics, inspect's per-sample copies, events, log and sample buffer) runs on the process's
main thread, which on a 2-core machine takes its CPU from the projection (issue 44). This bench runs, in fresh
processes, an in-process ``inspect eval`` of GlobalBias on the harness's tiny model (2 layers, width 64, the
default model's 49,152-token vocabulary; upstream's 30,000 sentences with ``--source``) and prints per run the
main thread's CPU seconds during the eval (``time.thread_time``), the whole process's CPU seconds and the wall.

``--old REV`` runs the code of git revision ``REV`` (extracted to a temporary folder, put before the editable
install on the import path) against the working tree, interleaved old/new/new/old (``--rounds`` times), and
prints the new/old ratios of the summed figures. ``--profile FILE`` (one run of the working tree) writes a
cProfile of the main thread during the eval.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/main_thread.py --source ../shared/refdata/GlobalBias --old 367fb7c
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPED = ("tasks", "solvers", "scorers", "datasets")  # installed as stereoprobe.<name> (setup.py)


def _use_code(root: str) -> None:
    """Import stereoprobe from ``root`` (a package folder laid out as installed) instead of the editable
    install: its finder leaves the meta path, the folder goes first on ``sys.path``."""
    sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
    sys.path.insert(0, root)


def _one_run(args: argparse.Namespace) -> dict[str, float]:
    """One eval in this process: the main thread's CPU, the process's CPU and the wall, in seconds."""
    if args.code:
        _use_code(args.code)
    sys.path.insert(0, str(ROOT / "bench"))
    from globalbias_harness import make_tiny_model
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    import stereoprobe.scorers.globalbias as scorer_module
    from stereoprobe.tasks.globalbias import globalbias

    assert args.code is None or scorer_module.__file__.startswith(args.code), scorer_module.__file__
    with tempfile.TemporaryDirectory() as tmp:
        model = get_model(f"transformers/{make_tiny_model(Path(tmp) / 'tiny')}", device="cpu", memoize=False)
        kwargs = {"source": args.source, "descriptors": list(range(25))} if args.source else {"source": "bundled"}
        task = globalbias(**kwargs)
        profile = None
        if args.profile:
            import cProfile

            profile = cProfile.Profile()
        t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        if profile is not None:
            profile.enable()
        [log] = inspect_eval(task, model=model, log_dir=f"{tmp}/logs", display="none", max_samples=512)
        if profile is not None:
            profile.disable()
            profile.dump_stats(args.profile)
        out = {"main_cpu": time.thread_time() - c0, "process_cpu": time.process_time() - p0,
               "wall": time.perf_counter() - t0}
        assert log.status == "success", log.status
        out["flagged_pairs"] = log.results.scores[0].metrics["flagged_pairs"].value
    return out


def _extract(rev: str, folder: Path) -> str:
    """Revision ``rev`` of the repository laid out as installed (``stereoprobe/`` with the mapped folders)."""
    archive = folder / "src.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev], check=True)
    src = folder / "src"
    with tarfile.open(archive) as tar:
        tar.extractall(src)
    pkg = folder / "path"
    pkg.mkdir()
    (src / "stereoprobe").rename(pkg / "stereoprobe")
    for name in MAPPED:
        (src / name).rename(pkg / "stereoprobe" / name)
    return str(pkg)


def _spawn(argv: list[str]) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--one", *argv], check=True, capture_output=True, text=True)
    line = [x for x in out.stdout.splitlines() if x.startswith("RUN ")][-1]
    return json.loads(line[4:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", help="a local copy of upstream GlobalBias (default: the bundled sentences)")
    ap.add_argument("--old", help="a git revision to run against the working tree, interleaved")
    ap.add_argument("--rounds", type=int, default=1, help="old/new/new/old rounds (with --old)")
    ap.add_argument("--profile", help="write a cProfile of the main thread (one run of the working tree)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--code", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.one:
        print("RUN " + json.dumps(_one_run(args)), flush=True)
        return 0
    base = ["--source", args.source] if args.source else []
    if not args.old:
        res = _spawn(base + (["--profile", args.profile] if args.profile else []))
        print(json.dumps(res))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        old_code = _extract(args.old, Path(tmp))
        runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for label in ("old", "new", "new", "old"):
                res = _spawn(base + (["--code", old_code] if label == "old" else []))
                runs[label].append(res)
                load = os.getloadavg()[0]
                print(f"{label}: main thread {res['main_cpu']:.2f} CPU-s, process {res['process_cpu']:.2f} CPU-s, "
                      f"wall {res['wall']:.2f} s, flagged_pairs {res['flagged_pairs']}, load {load:.1f}", flush=True)
    for key in ("main_cpu", "process_cpu", "wall"):
        old, new = (sum(r[key] for r in runs[k]) for k in ("old", "new"))
        print(f"{key}: old {old / len(runs['old']):.2f}, new {new / len(runs['new']):.2f}, new/old {new / old:.3f}")
    same = {r["flagged_pairs"] for r in runs["old"] + runs["new"]}
    print(f"flagged_pairs identical in every run: {len(same) == 1} ({sorted(same)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
