"""Benchmark: CPU time of ``stereoprobe --help``, the listing and every kind of one-line error (issue 35.10).

Each command runs in a fresh subprocess (``python -m stereoprobe ...``, offline); its CPU time (user + system)
is read with ``resource.getrusage(RUSAGE_CHILDREN)`` before and after, so the figure does not depend on how
loaded the machine is (wall time is printed beside it). The goal is at most 1 s of CPU for ``--help`` and for
every one-line error: the command line imports its heavy libraries (inspect_ai, pandas, torch) only when a
command needs them. Each command runs ``--repeat`` times; the median is reported, with met / not met.

Usage: ``python bench/startup.py [--repeat 3] [--goal 1.0]``; exit code 1 when a goal is not met.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: (what, arguments of ``stereoprobe``, expected exit code)
COMMANDS: list[tuple[str, list[str], int]] = [
    ("help", ["--help"], 0),
    ("a command's help", ["plan", "--help"], 0),
    ("the task listing", ["tasks"], 0),
    ("misspelt command", ["plna"], 2),
    ("misspelt option", ["dbb", "--ot", "x"], 2),
    ("missing arguments", ["dbb"], 2),
    ("missing input", ["dbb", "/nonexistent/logs", "--out", "{tmp}/out"], 2),
    ("misspelt task (listing)", ["tasks", "globalbais"], 2),
    ("misspelt provider (plan)", ["plan", "globalbias", "--model", "opnai/gpt-4o"], 2),
    ("bad -T item (plan)", ["plan", "globalbias", "-T", "groups="], 2),
    ("calibrate on an API model (plan)", ["plan", "globalbias", "--model", "openai/gpt-4o", "--calibrate", "1"], 2),
]


def cpu_of(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit code) of one ``python -m stereoprobe`` subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stereoprobe", *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--goal", type=float, default=1.0, help="CPU seconds allowed per command")
    args = ap.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                      env.get("PYTHONPATH")]))
    failed = 0
    print(f"{'command':<34} {'CPU s':>6} {'wall s':>7}  exit  goal <= {args.goal:g} s CPU")
    with tempfile.TemporaryDirectory() as tmp:
        for what, argv, expected in COMMANDS:
            argv = [a.replace("{tmp}", tmp) for a in argv]
            runs = [cpu_of(argv, env) for _ in range(args.repeat)]
            cpu = statistics.median(r[0] for r in runs)
            wall = statistics.median(r[1] for r in runs)
            codes = {r[2] for r in runs}
            ok = cpu <= args.goal and codes == {expected}
            failed += not ok
            print(f"{what:<34} {cpu:6.2f} {wall:7.2f}  {','.join(map(str, sorted(codes))):>4}  "
                  f"{'met' if ok else 'NOT MET'}{'' if codes == {expected} else f' (expected exit {expected})'}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
