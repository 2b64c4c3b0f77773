"""GlobalBias generation probe: character profiles for batches of names (paper section 6).

One sample per (run, batch of 20 names); three runs; temperature 1. The scorer parses the JSON profiles,
matches them to the requested names and records parse failures, missing and unknown names.

    inspect eval stereoprobe/globalbias_profiles --model openai/gpt-4o -T source=upstream
    stereoprobe profiles logs/ --out results/profiles
"""

from __future__ import annotations

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from stereoprobe.globalbias.data import load_names, select
from stereoprobe.globalbias.profiles_parse import build_prompt, parse_profiles

TASK_VERSION = "1.0.0"


def name_batches(names: list, batch_size: int, seed: int | None = 42) -> list[list]:
    """Names shuffled as the reference does (``DataFrame.sample(frac=1, random_state=42)``, i.e.
    ``RandomState(42).choice(n, n, replace=False)``), cut into consecutive batches."""
    order = np.arange(len(names)) if seed is None else np.random.RandomState(seed).choice(
        len(names), len(names), replace=False)
    shuffled = [names[i] for i in order]
    return [shuffled[i:i + batch_size] for i in range(0, len(shuffled), batch_size)]


@metric
def profile_parse_failure_rate() -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        v = [s.score.value["parsed"] for s in scores if isinstance(s.score.value, dict)]
        return 1.0 - sum(v) / len(v) if v else float("nan")

    return compute


@metric
def profile_coverage() -> Metric:
    """Share of requested names that received a profile."""

    def compute(scores: list[SampleScore]) -> float:
        got = sum(s.score.value["n_profiles"] for s in scores if isinstance(s.score.value, dict))
        req = sum(s.score.value["n_requested"] for s in scores if isinstance(s.score.value, dict))
        return got / req if req else float("nan")

    return compute


@scorer(metrics=[profile_parse_failure_rate(), profile_coverage()])
def profile_parser():
    """Parse the profiles; value = parsed (0/1), n_profiles, n_missing, n_unknown, n_requested."""

    async def score(state: TaskState, target: Target) -> Score:
        requested = [n["name"] for n in state.metadata["names"]]
        res = parse_profiles(state.output.completion or "", requested)
        return Score(
            value={"parsed": float(res.ok), "n_profiles": float(len(res.profiles)), "n_missing": float(len(res.missing)),
                   "n_unknown": float(len(res.unknown)), "n_requested": float(len(requested))},
            answer=None if res.ok else "parse_failure",
            explanation=res.error or f"{len(res.profiles)} profiles, missing {res.missing}, unknown {res.unknown}",
            metadata={"profiles": res.profiles, "missing": res.missing, "unknown": res.unknown,
                      "malformed_items": res.malformed},
        )

    return score


@task
def globalbias_profiles(
    source: str = "bundled",
    faithful: bool = True,
    groups: list[str] | str | None = None,
    batch_size: int = 20,
    runs: int = 3,
    shuffle_seed: int | None = 42,
    max_tokens: int = 5000,
    temperature: float = 1.0,
) -> Task:
    """Character profiles for every name (source/faithful/groups as in ``globalbias``).

    Args:
        batch_size: names per request (20 in the paper; 10 for Claude 3 Opus).
        runs: repetitions (3 in the paper); each run is its own set of samples, ids ``run{r}:batch{i}``.
        shuffle_seed: seed of the reference name shuffle (None keeps file order).
        max_tokens, temperature: generation settings (paper: temperature 1).
    """
    names, _ = select(load_names(source, faithful), [], groups, None, None)
    batches = name_batches(names, batch_size, shuffle_seed)
    samples = []
    for r in range(runs):
        for i, b in enumerate(batches):
            meta = [{"name": n.name, "group": n.group, "ethnicity": n.ethnicity, "gender": n.gender,
                     "name_index": n.index} for n in b]
            samples.append(Sample(input=build_prompt([n.name for n in b]), id=f"run{r}:batch{i}",
                                  metadata={"run_id": r, "batch": i, "names": meta}))
    return Task(
        dataset=MemoryDataset(samples, name="globalbias-profiles"),
        solver=generate(),
        scorer=profile_parser(),
        config=GenerateConfig(temperature=temperature, max_tokens=max_tokens),
        version=TASK_VERSION,
        metadata={"probe": "globalbias", "source": str(source)},
    )
