"""The regression guard of ``bench/globalbias.py`` trips when the task path regresses (a mutation check).

The guard is the bench's exit status: 1 when the ``inspect eval`` call takes more than ``--max-ratio`` times
the provider direct (the task's own requests replayed to the same provider, in the same process). The mutation
makes the task path do its provider work ``REPEAT`` times (the worker's scoring of every request repeated while
the eval runs, never during the replay), as a second scoring pass or a duplicated request would. Its cost is
CPU work, so it scales with the machine's load as the direct scoring does: the ratio grows by about the repeat
whatever the load, where an injected sleep would shrink against a loaded direct run. Runs in one process on the
first two grouped samples (96 sentences) of the bundled set: a warm-up (inspect imports modules at its first eval
in a process: seconds that no later run pays), then unmutated, then mutated.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPEAT = 4  # the mutation: the task path's provider work, four times
STATED = 1.3  # the bench's default --max-ratio


def _bench():
    spec = importlib.util.spec_from_file_location("bench_globalbias", ROOT / "bench" / "globalbias.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(bench, capsys, extra: list[str]) -> tuple[int, float]:
    args = bench.parser().parse_args(["--limit", "2", "--lm-eval-batch-sizes", "", *extra])
    rc = bench.run(args)
    out = capsys.readouterr().out
    ratio = float(re.search(r"task/direct = ([0-9.]+) wall", out).group(1))
    return rc, ratio


@pytest.mark.slow
def test_the_guard_fails_when_the_task_path_scores_four_times(capsys, monkeypatch) -> None:
    import inspect_ai

    from stereoprobe.providers.transformers_api import TransformersAPI

    bench = _bench()
    _run(bench, capsys, ["--max-ratio", "1000"])  # warm-up: inspect's imports at its first eval in a process
    rc0, plain = _run(bench, capsys, ["--max-ratio", "1000"])
    assert rc0 == 0 and plain > 0

    mutated = {"on": False}
    real_run_scores, real_eval = TransformersAPI._run_scores, inspect_ai.eval

    def run_scores(self, reqs):
        for _ in range(REPEAT - 1 if mutated["on"] else 0):
            real_run_scores(self, reqs)
        return real_run_scores(self, reqs)

    def eval_mutated(*a, **kw):
        mutated["on"] = True
        try:
            return real_eval(*a, **kw)
        finally:
            mutated["on"] = False

    monkeypatch.setattr(TransformersAPI, "_run_scores", run_scores)
    monkeypatch.setattr(inspect_ai, "eval", eval_mutated)
    rc, ratio = _run(bench, capsys, ["--max-ratio", str(STATED)])
    print(f"task/direct unmutated {plain:.2f}, scoring x{REPEAT} {ratio:.2f}", file=sys.stderr)
    assert rc == 1, f"the guard passed a task path that scores {REPEAT} times: task/direct {ratio:.2f}"
    assert ratio > 1.5 * plain, (plain, ratio)  # the ratio sees the regression, not only the fixed costs
