"""Benchmark: the start-up a run saves because the check before the run builds each task once (issue 40.1).

The check before the run (:mod:`stereoprobe.preflight`) builds every task of the command line before any model
loads; inspect then builds the task again with its model active. Since the check's task is handed to inspect
(:mod:`stereoprobe.preflight.built`), a task is built once. This script runs the full upstream GlobalBias
(876,000 sentences, ``$STEREOPROBE_UPSTREAM_DIR`` or the download cache) twice, each in a fresh process, in
the same command: as the run does now, and as a peer run in which the check's task is dropped (inspect builds
again, the behaviour before). Each prints the seconds from the start of the check to the first request of the
first sample (the fake model of the tests, no network), and the ratio.

Usage: ``STEREOPROBE_UPSTREAM_DIR=../shared/refdata python bench/preflight_build_once.py``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
import stereoprobe._registry  # noqa: F401
from stereoprobe import preflight
from tests import fake_model as F

peer = {peer!r}
if peer:  # the behaviour before: the check's task is dropped, inspect builds the task again
    preflight.built.take = lambda *a, **k: None
first = []
real = F.FakeModel.generate

async def timed(self, *args, **kwargs):
    if not first:
        first.append(time.perf_counter())
    return await real(self, *args, **kwargs)

F.FakeModel.generate = timed
import inspect_ai

t0 = time.perf_counter()
preflight.check("eval", {{"tasks": ("stereoprobe/globalbias",), "t": (), "task_config": None, "epochs": None,
                          "run_config": None, "model": "stereoprobe-fake/model"}})
checked = time.perf_counter()
inspect_ai.eval("stereoprobe/globalbias", model=F.fake_model(), limit=1, display="none", log_dir={logs!r})
print(json.dumps({{"check": checked - t0, "first_request": first[0] - t0}}))
"""


def run(peer: bool, logs: str) -> dict[str, float]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    code = CHILD.format(root=str(ROOT), peer=peer, logs=logs)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"the {'peer ' if peer else ''}run failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    if not os.environ.get("STEREOPROBE_UPSTREAM_DIR"):
        print("set STEREOPROBE_UPSTREAM_DIR to the upstream files (e.g. ../shared/refdata)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as logs:
        once = run(False, logs)
        twice = run(True, logs)
    print(f"built once (now):            check {once['check']:.1f} s, first request after {once['first_request']:.1f} s")
    print(f"built twice (peer, before):  check {twice['check']:.1f} s, first request after {twice['first_request']:.1f} s")
    saved = twice["first_request"] - once["first_request"]
    print(f"saved {saved:.1f} s to the first request (ratio before/now {twice['first_request'] / once['first_request']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
