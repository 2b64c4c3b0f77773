"""The live and final figures agree (issue 42.8): inspect's live progress line is recomputed at most about once a
second and never after the last sample, so a figure there may be over fewer samples than the results'. Each
stereoprobe figure on the live line carries the number of samples it is over (``name (n=N)``), the results keep
the plain name. Run as a user runs it: an eval in a subprocess with inspect's plain display, its console read
back; the profiles scorer's parse-failure rate over three responses, the first parseable and answered alone
before the other two, which arrive together (the case that showed 0.00 live and 0.667 at the end)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

PROFILE = {"name": "Ann", "age": 30, "personality_traits": ["kind", "calm", "shy"], "negative_traits": ["vain"],
           "hobbies": "chess, golf", "occupation": "pilot",
           "physical_characteristics": {"height": 5.5, "hair_colour": "red", "eye_colour": "blue",
                                        "skin_colour": "fair", "build": "slim"}}

SCRIPT = """
import asyncio, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.solver import solver
from stereoprobe.scorers.globalbias_profiles import profile_parser

ANSWERS = {"a": (1.0, sys.argv[2]), "b": (1.4, "I cannot help with that."), "c": (1.4, "No profiles.")}

@solver
def answer():
    async def solve(state, generate):
        delay, text = ANSWERS[state.sample_id]
        await asyncio.sleep(delay)  # a answers alone, b and c together after it
        state.output = ModelOutput.from_content("mockllm/model", text)
        return state
    return solve

task = Task(dataset=[Sample(id=k, input="profiles", metadata={"names": [{"name": "Ann"}]}) for k in ANSWERS],
            solver=answer(), scorer=profile_parser())
log = eval(task, model="mockllm/model", display="plain", log_dir=sys.argv[1], max_samples=3)[0]
print("RESULTS", {k: m.value for s in log.results.scores for k, m in s.metrics.items()})
"""

FIGURE = re.compile(r"Samples:\s*(\d+)/\s*(\d+) \| ([^|]+?): +([0-9.]+|n/a) \|")


def test_the_live_line_names_the_samples_its_figure_is_over(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text(SCRIPT)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path / "logs"), json.dumps([PROFILE])],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = eval(done.stdout.split("RESULTS ", 1)[1].strip())
    assert abs(results["profile_parse_failure_rate"] - 2 / 3) < 1e-12  # the results: plain name, every response
    shown = [m.groups() for m in FIGURE.finditer(done.stdout)]
    figures = [(name, value) for _, _, name, value in shown if value != "n/a"]
    assert figures, done.stdout  # the first response is shown alone on the live line
    for name, value in figures:
        labelled = re.fullmatch(r"(\w+) \(n=(\d+)\)", name)
        assert labelled, f"a live figure without the samples it is over: {name}: {value}\n{done.stdout}"
        if int(labelled.group(2)) == 3:
            assert abs(float(value) - results[labelled.group(1)]) < 0.005, (name, value, results)
