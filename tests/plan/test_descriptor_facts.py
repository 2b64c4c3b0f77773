"""The planner reads each probe's plan facts from its descriptor (no probe named in stereoprobe/plan/), counts
DBB without its published names file, and refuses malformed models, roles and prices in one line."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig

from stereoprobe.cli import plan as cli_plan
from stereoprobe.errors import InputError
from stereoprobe.plan import PriceTable, load_prices, plan_task
from stereoprobe.probes import PlanTask, ProbeDescriptor, register, unregister

TABLE = PriceTable(as_of="2026-11-01", source="t.yaml", models=[("api/*", 1.0, 4.0)])


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    cli_plan.register(parser.add_subparsers())
    args = parser.parse_args(["plan", *argv])
    return args.func(args)


def test_the_planner_imports_no_probe_package():
    plan_dir = Path(__file__).resolve().parents[2] / "stereoprobe" / "plan"
    probes = {"dbb", "globalbias", "stereotales"}
    for path in plan_dir.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not set(name.split(".")[1:2]) & probes, f"{path.name} imports {name}"


def _toy_texts(sample: Sample) -> list[str]:
    return [f"{sample.input} {w}" for w in sample.metadata["words"]]


def _toy_items(sample: Sample) -> int:
    return len(sample.metadata["words"]) // 2


@pytest.fixture
def toy():
    register(ProbeDescriptor(name="toyplan", title="Toy", tasks={
        "toy_scored": PlanTask("pairs", counts="questions", texts=f"{__name__}:_toy_texts", items=f"{__name__}:_toy_items"),
        "toy_written": PlanTask("stories", reader_roles=("checker",), default_roles={"checker": 2},
                                output_tokens={"generator": 40, "checker": 5}, role_prompt_tokens={"checker": 7}),
    }))
    yield
    unregister("toyplan")


def test_a_new_probe_plans_from_its_descriptor_alone(toy):
    # scored: 2 samples x 4 words -> 8 texts (one request each, one token each), 2 pairs per sample
    scored = Task(dataset=MemoryDataset([Sample(input=f"s{k}", metadata={"words": list("abcd")}) for k in (1, 2)]),
                  config=GenerateConfig(prompt_logprobs=1), name="toy_scored")
    p = plan_task(scored, model="api/x", prices=TABLE, count=lambda t: 1)
    assert (p.items, p.unit, p.model_calls, p.input_tokens, p.output_tokens) == (4, "pairs", {"generator": 8}, 8, 0)
    # written: 3 samples, 1 token each; checker x 2 models (default roles) reads 7 + 40 tokens, writes 5
    written = Task(dataset=MemoryDataset([Sample(input="w") for _ in range(3)]), name="toy_written")
    p = plan_task(written, model="api/x", prices=TABLE, count=lambda t: 1)
    assert p.model_calls == {"generator": 3, "checker": 6}
    assert p.tokens_by_role == {"generator": {"input": 3, "output": 120}, "checker": {"input": 6 * 47, "output": 30}}
    assert p.usd == round((3 + 120 * 4 + 6 * 47 + 30 * 4) / 1e6, 2)
    assert any("role 'checker' not given: assumed 2" in n for n in p.notes)


def test_dbb_is_counted_without_the_published_names_file(upstream_dir, monkeypatch, capsys):
    import stereoprobe.dbb.published as published

    def refuse(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("the published names file was read")

    monkeypatch.setattr(published, "load_published_names", refuse)
    monkeypatch.setattr("stereoprobe.dbb.questions.load_published_names", refuse)
    assert _run(["dbb", "--model", "openai/gpt-4o"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dbb: 77,350 questions") and "counted with -T names=draw" in out


@pytest.fixture
def upstream_dir(refdata, monkeypatch):
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    return refdata


@pytest.mark.parametrize("argv, message", [
    (["--model", "[openai/gpt-4o, openai/gpt-4o-mini]"], "--model: expected a model name PROVIDER/NAME"),
    (["--model", "gpt-4o"], "--model: expected a model name"),
    (["--model-role", "judge={model: }"], "a role entry without a model"),
    (["--model-role", "judge={}"], "a role entry without a model"),
    (["--model-role", "judge={model: [a/b, c/d]}"], "--model-role judge: expected a model name"),
    (["--model-role", "judge=null"], "--model-role judge: expected a model name"),
])
def test_malformed_models_and_roles_are_one_line(argv, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[")):
        _run(["dbb", "-T", "source=bundled", *argv])


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", "1e400"])
def test_infinite_prices_are_refused_naming_the_row(value, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text(f"as_of: '2030-01-01'\nmodels:\n  - {{model: 'acme/*', input: {value}, output: 2}}\n")
    with pytest.raises(InputError, match=r"models row 1: field 'input': must be a finite number >= 0"):
        load_prices(f)
