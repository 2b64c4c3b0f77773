"""``stereoprobe plan --calibrate`` runs what the plan prices, for every task on the bundled default model
(issue 35.3): the task's own epochs (DBB's sampled mode refuses fewer than ten), every role bound as the price
estimate binds it (StereoTales' refusal detector and extractors, the paper's roles, on the model itself), and
everything that can be refused is refused before the model loads."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.plan.core import plan_unit

MODEL = "transformers/default"
ASSOCIATIONS = ("model,slice,base_attribute,base_value,compared_attribute,compared_value,n,fraction,lift\n"
                "mockllm/model,all,income_level,low,education,basic,100,0.5,2.6\n")

# every task that runs offline on the default model, with a selection of one or two samples; the DBB builders
# read Hugging Face datasets and models (online) and are planned, not calibrated, here
TASKS: dict[str, list[str]] = {
    "dbb": ["-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "limit_templates=1", "-T", "max_tokens=4"],
    "dbb_sg": ["-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "limit_templates=1"],
    "dbb_baselines": ["-T", "benchmark=crows_pairs", "-T", "prompt=stereoprobe", "-T", "max_tokens=4"],  # + source
    "globalbias": ["-T", "source=bundled", "-T", "groups=ARAB_F", "-T", "templates=1"],
    "globalbias_profiles": ["-T", "source=bundled", "-T", "groups=ARAB_F", "-T", "prompt=stereoprobe",
                            "-T", "max_tokens=8"],
    "stereotales": ["-T", "seeds=bundled", "-T", "role_prompts=bundled", "-T", "run_settings=none",
                    "-T", "role_settings=none", "-T", "languages=en", "-T", "limit=1"],
    "stereotales_judge": ["-T", "run_settings=none", "-T", "prompt=bundled", "-T", "epochs=1",
                          "-T", "max_tokens=8"],
}


def _plan(task: str, tmp_path: Path, *extra: str) -> dict:
    args = list(TASKS[task])
    if task == "dbb_baselines":  # no bundled set: upstream's CrowS-Pairs copy
        from tests.conftest import REFDATA

        if not (REFDATA / "Hidden-Bias-Benchmark").is_dir():
            pytest.skip("no upstream copies (../shared/refdata)")
        args += ["-T", f"source={REFDATA / 'Hidden-Bias-Benchmark'}"]
    if task == "stereotales_judge":
        path = tmp_path / "associations.csv"
        path.write_text(ASSOCIATIONS)
        args += ["-T", f"associations={path}"]
    out = tmp_path / f"{task}.json"
    assert main(["--quiet", "plan", task, *args, "--model", MODEL, "--json", str(out), *extra]) == 0
    return json.loads(out.read_text())


@pytest.fixture
def short_outputs(monkeypatch):
    """Generations cut to 8 tokens (stories of 4,096 tokens on a CPU would take minutes): what is tested is that
    the calibration runs the task as priced, not how long its outputs are."""
    import inspect_ai

    real = inspect_ai.eval
    monkeypatch.setattr(inspect_ai, "eval", lambda *a, **k: real(*a, **{**k, "max_tokens": 8}))


@pytest.mark.slow  # loads the default model and runs one sample (its epochs) of each task
@pytest.mark.parametrize("task", sorted(TASKS))
def test_calibrate_runs_every_task_on_the_default_model(task: str, tmp_path: Path, short_outputs) -> None:
    priced = _plan(task, tmp_path)
    timed = _plan(task, tmp_path, "--calibrate", "1")
    assert priced["seconds"] is None and timed["seconds"] > 0
    assert timed["epochs"] == priced["epochs"] and timed["model_calls"] == priced["model_calls"]
    assert any("--calibrate" in n for n in timed["notes"])


def test_every_task_but_the_online_builders_has_a_case() -> None:
    import stereoprobe._registry  # noqa: F401
    from stereoprobe.preflight import task_names

    assert set(task_names()) - set(TASKS) == {"dbb_build_concepts", "dbb_build_questions", "dbb_build_variations"}
    assert all(plan_unit(t) is not None for t in TASKS)


@pytest.mark.parametrize("argv, fragment", [
    (["dbb", *TASKS["dbb"], "--epochs", "3"], "at least 10"),                        # DBB sampled: 10 answers
    (["globalbias", "-T", "source=bundled", "-T", "templates=1", "-T", "groups=ARABB"], "did you mean ARAB"),  # groups once
    (["globalbias", *TASKS["globalbias"], "--model-role", "x=opnai/y"], "did you mean openai/y"),
])
def test_refusals_come_before_the_model_loads(argv: list[str], fragment: str, monkeypatch) -> None:
    from stereoprobe.plan import calibrate as C

    loaded: list[str] = []
    monkeypatch.setattr(C, "_warm_up", lambda models: loaded.extend(models))
    from stereoprobe.cli import plan as cli_plan

    args = cli_plan_args(argv + ["--model", MODEL, "--calibrate", "1"])
    started = time.perf_counter()
    with pytest.raises(InputError, match=fragment.replace("(", r"\(")):
        cli_plan.run(args)
    assert loaded == [] and time.perf_counter() - started < 120


def cli_plan_args(argv: list[str]):
    import argparse

    from stereoprobe.cli import plan as cli_plan

    parser = argparse.ArgumentParser()
    cli_plan.register(parser.add_subparsers())
    return parser.parse_args(["plan", *argv])
