"""``stereoprobe globalbias`` on an eval log: this checkout against earlier copies, in one command.

Runs the post-processing command (``python -m stereoprobe --quiet globalbias LOG --out DIR``) with this
checkout and with each ``--compare`` copy, interleaved (A B B A, ``--rounds`` times), so that a change of load
hits every copy alike; prints each run's wall and CPU seconds (the child's user + system time, which load
shifts less), the mean ratios, and whether every output folder is byte-identical to the first copy's (all
files, ``run_info.json`` without its ``created`` and ``command`` fields).

A log: ``bench/globalbias_harness.py --e2e-only`` writes one (30,000 sentences on a tiny model), or
``inspect eval stereoprobe/globalbias --model transformers/default -T source=bundled --log-dir DIR``.
An earlier copy: ``git archive <commit> stereoprobe | tar -x -C OLD`` (the command runs from a scratch folder,
so the copy on ``PYTHONPATH`` is imported before the editable install)::

    HF_HUB_OFFLINE=1 .venv/bin/python bench/globalbias_post.py LOG --compare OLD --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(logs: list[str], out: Path, pythonpath: str | None, work: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``stereoprobe globalbias`` run writing ``out``."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    cpu0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "stereoprobe", "--quiet", "globalbias", *logs, "--out", str(out)],
                   check=True, env=env, cwd=work)
    return time.perf_counter() - t0, _children_cpu() - cpu0


def folder_files(folder: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every file under ``folder`` (``run_info.json`` without created/command)."""
    files = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        if p.name == "run_info.json":
            info = json.loads(data)
            info.pop("created", None)
            info.pop("command", None)
            data = json.dumps(info, sort_keys=True).encode()
        files[str(p.relative_to(folder))] = data
    return files


def differences(a: Path, b: Path) -> list[str]:
    """Files that differ between two output folders (or exist in one only)."""
    fa, fb = folder_files(a), folder_files(b)
    return sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", help="eval log files or folders of the globalbias task")
    ap.add_argument("--compare", action="append", default=[], metavar="PYTHONPATH",
                    help="an earlier stereoprobe copy (the folder holding its stereoprobe/ package); repeatable")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds (each runs every copy twice)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logs = [str(Path(p).resolve()) for p in args.logs]
    copies = {**{f"compared{k + 1}": str(Path(p).resolve()) for k, p in enumerate(args.compare)}, "this": None}
    order = list(copies) + list(copies)[::-1]
    print(f"load average {os.getloadavg()[0]:.1f}, cpus {os.cpu_count()}", flush=True)
    wall: dict[str, list[float]] = {k: [] for k in copies}
    cpu: dict[str, list[float]] = {k: [] for k in copies}
    with tempfile.TemporaryDirectory(prefix="gb-post-") as tmp:
        work = Path(tmp)
        outs: dict[str, Path] = {}
        for r in range(args.rounds):
            for label in order:
                out = work / f"out-{label}-{r}-{len(wall[label])}"
                w, c = run_once(logs, out, copies[label], work)
                wall[label].append(w)
                cpu[label].append(c)
                outs.setdefault(label, out)
                print(f"  {label:10s} {w:6.2f} s wall {c:6.2f} CPU-s (load {os.getloadavg()[0]:.1f})", flush=True)
        first = outs[next(iter(copies))]
        same = True
        for label, out in outs.items():
            diff = differences(first, out)
            same &= not diff
            print(f"  output of {label}: " + ("byte-identical" if not diff else f"DIFFERS in {', '.join(diff[:8])}"))
    mean = {k: (sum(wall[k]) / len(wall[k]), sum(cpu[k]) / len(cpu[k])) for k in copies}
    for label, path in copies.items():
        print(f"{label:10s} mean {mean[label][0]:6.2f} s wall {mean[label][1]:6.2f} CPU-s"
              + (f"  ({path})" if path else ""))
    for label in [k for k in copies if k != "this"]:
        print(f"this checkout vs {label}: {mean[label][0] / mean['this'][0]:.2f}x less wall, "
              f"{mean[label][1] / mean['this'][1]:.2f}x less CPU")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
