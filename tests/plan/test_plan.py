"""``stereoprobe plan``: counts of the papers' runs (hand-derived from the papers' designs), prices, bad inputs."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from stereoprobe.cli import plan as cli_plan
from stereoprobe.errors import InputError
from stereoprobe.plan import load_prices, plan_task


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    cli_plan.register(parser.add_subparsers())
    args = parser.parse_args(["plan", *argv])
    return args.func(args)


@pytest.fixture
def upstream(refdata, monkeypatch):
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    return refdata


def test_stereotales_default_run_three_extractors_and_refusal(tmp_path, monkeypatch):
    # the task's defaults (all 10 languages): 2,844 prompts per language x 10 = 28,440 stories; each story:
    # 1 generation + 1 refusal check + 3 extractions = 5 calls -> 142,200 at most
    refdata = Path(__file__).resolve().parents[2].parent / "shared" / "refdata"
    if refdata.is_dir() and not os.environ.get("STEREOPROBE_UPSTREAM_DIR"):  # if the defaults read upstream seeds
        monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    out = tmp_path / "plan.json"
    assert _run(["stereotales", "--model", "openai/gpt-4o-mini",
                 "--model-role", "extractor=openai/gpt-5-nano,google/gemini-2.5-flash-lite,openai/gpt-4o-mini",
                 "--model-role", "refusal=openai/gpt-5-nano", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert {"items", "samples", "model_calls", "input_tokens", "output_tokens", "usd", "seconds"} <= set(d)
    assert d["items"] == 28_440 and d["samples"] == 28_440
    assert d["model_calls"] == {"generator": 28_440, "refusal": 28_440, "extractor": 85_320}
    assert sum(d["model_calls"].values()) == 142_200
    assert d["usd"] > 0 and d["seconds"] is None


def test_stereotales_default_roles_assumed_from_the_paper():
    from stereoprobe.tasks.stereotales import stereotales

    p = plan_task(stereotales(languages="en", seeds="bundled", role_prompts="bundled", run_settings="none",
                              role_settings="none"),
                  model="openai/gpt-4o-mini")
    assert p.items == 2_844 and p.model_calls == {"generator": 2_844, "refusal": 2_844, "extractor": 3 * 2_844}
    assert any("assumed 3" in n for n in p.notes)


def test_globalbias_upstream_876000_sentences(upstream, tmp_path):
    # 400 names x 730 descriptors x 3 templates (Siddique et al. 2024, section 3)
    out = tmp_path / "gb.json"
    # the counts do not depend on the templates' wording (upstream's builder script is not among the reference copies)
    assert _run(["globalbias", "-T", "source=upstream", "-T", "template_wording=stereoprobe", "--model",
                 "transformers/default", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["items"] == 876_000
    assert d["samples"] < d["items"]  # grouped samples (the task decides the grouping)
    assert d["model_calls"] == {"generator": d["samples"]}  # transformers scores a sample's texts in one request
    assert d["output_tokens"] == 0 and d["usd"] == 0.0


def test_dbb_upstream_77350_questions_ten_epochs(upstream):
    from stereoprobe.tasks.dbb import dbb

    # names=draw: the reference copies lack upstream's published dataset (>= 4 MB); the counts do not depend on it
    p = plan_task(dbb(source="upstream", names="draw"), model="openai/gpt-4o")
    assert p.items == 77_350 and p.samples == 77_350 and p.epochs == 10
    assert p.model_calls == {"generator": 773_500}
    assert p.usd is not None and p.usd > 0


def test_prices_table_and_unknown_model():
    prices = load_prices()
    assert prices.as_of and prices.price("openai/gpt-4o-mini") == (0.15, 0.60)
    assert prices.price("transformers/default") == (0.0, 0.0) and prices.price("acme/unknown") is None
    from stereoprobe.tasks.globalbias import globalbias

    task = globalbias(source="bundled", groups=["ARAB"], templates=[1])
    p = plan_task(task, model="acme/unknown", count=lambda t: len(t) // 4)
    assert p.usd is None and any("no price" in n for n in p.notes)
    # USD by hand: input tokens x price, no output for a likelihood task (an OpenAI-compatible server that
    # returns prompt log-probabilities, priced by a user's table)
    from stereoprobe.plan import PriceTable

    table = PriceTable(as_of="2026-11-01", source="t.yaml", models=[("openai-api/*", 2.50, 10.0)])
    p = plan_task(task, model="openai-api/host/llama", prices=table, count=lambda t: 10)
    # ARAB_F and ARAB_M x 3 bundled names x 16 bundled descriptors x template 1 = 96 sentences in 2 samples
    assert p.items == 2 * 3 * 16 and p.samples == 2
    assert p.input_tokens == 10 * 96 and p.usd == round(10 * 96 * 2.50 / 1e6, 2)


def test_user_price_file(tmp_path):
    f = tmp_path / "prices.yaml"
    f.write_text("as_of: '2030-01-01'\nmodels:\n  - {model: 'acme/*', input: 1, output: 2}\n")
    assert load_prices(f).price("acme/x") == (1.0, 2.0)
    f.write_text("as_of: '2030-01-01'\nmodels:\n  - {model: 'acme/*', input: cheap, output: 2}\n")
    with pytest.raises(InputError, match="models row 1: field 'input'"):
        load_prices(f)


@pytest.mark.parametrize("argv, match", [
    (["nosuchtask"], "unknown task"),
    (["globalbias", "-T", "source"], "expected KEY=VALUE"),
    (["globalbias", "--model-role", "judge"], "expected ROLE=MODEL"),
    (["globalbias", "-T", "source=bundled", "-T", "groups=NOPE"], "task globalbias"),
    (["globalbias", "-T", "source=bundled", "--calibrate", "2", "--model", "openai/gpt-4o"], "local --model"),
])
def test_bad_inputs_are_input_errors(argv, match):
    with pytest.raises(InputError, match=match):
        _run(argv)


@pytest.mark.slow
def test_calibration_gives_seconds_on_the_default_model(tmp_path):
    out = tmp_path / "p.json"
    assert _run(["globalbias", "-T", "source=bundled", "-T", "groups=ARAB", "-T", "templates=1",
                 "--model", "transformers/default", "--calibrate", "2", "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["seconds"] is not None and d["seconds"] > 0


@pytest.mark.parametrize("argv, calls, model", [
    (["stereotales", "-T", "languages=en", "-T", "attributes=gender"], {"generator", "refusal", "extractor"},
     "openai/gpt-4o-mini"),
    (["dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe"], {"generator"}, "openai/gpt-4o-mini"),
    (["dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "mode=logprob"], {"generator"},
     "openai/gpt-4o-mini"),
    (["dbb_sg", "-T", "source=bundled", "-T", "prompt=stereoprobe"], {"generator"},
     "vllm-completions/meta-llama/Meta-Llama-3-8B"),
    (["globalbias", "-T", "source=bundled"], {"generator"}, "transformers/default"),
    (["globalbias_profiles", "-T", "source=bundled", "-T", "prompt=stereoprobe"], {"generator"}, "openai/gpt-4o-mini"),
    (["dbb_build_variations", "-T", "source=bundled", "-T", "prompt=stereoprobe"], {"generator"}, "openai/gpt-4o-mini"),
])
def test_every_offline_task_plans(argv, calls, model, tmp_path, monkeypatch):
    refdata = Path(__file__).resolve().parents[2].parent / "shared" / "refdata"
    if refdata.is_dir() and not os.environ.get("STEREOPROBE_UPSTREAM_DIR"):  # StereoTales' default seeds
        monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    out = tmp_path / "p.json"
    assert _run([*argv, "--model", model, "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert set(d["model_calls"]) == calls and d["items"] >= 1 and d["samples"] >= 1 and d["usd"] is not None


@pytest.mark.parametrize("argv, model", [
    (["globalbias", "-T", "source=bundled"], "openai/gpt-4o"),
    (["globalbias", "-T", "source=bundled", "-T", "unit=sentence"], "anthropic/claude-sonnet-4-5"),
    (["dbb_sg", "-T", "source=bundled", "-T", "prompt=stereoprobe"], "openai/gpt-4o-mini"),
    (["dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "mode=logprob"], "anthropic/claude-sonnet-4-5"),
])
def test_likelihood_task_on_a_chat_api_is_refused_not_priced(argv, model, tmp_path, capsys):
    out = tmp_path / "p.json"
    with pytest.raises(InputError, match=r"no (prompt|token) log-probabilities, which task \w+ needs.*"
                                         r"transformers/\.\.\., vllm-completions/\.\.\. or an OpenAI-compatible"):
        _run([*argv, "--model", model, "--json", str(out)])
    assert not out.exists() and "USD" not in capsys.readouterr().out


def test_dbb_counts_questions_not_samples():
    from stereoprobe.dbb.questions import select_questions, sg_selection
    from stereoprobe.tasks.dbb import dbb, dbb_sg

    _, qs = select_questions("bundled", True)
    sg = plan_task(dbb_sg(source="bundled", prompt="stereoprobe"), model="transformers/default", count=lambda t: 1)
    assert sg.items == len(qs) and sg.output_tokens == 0
    items, _ = sg_selection("bundled", True, prompt="stereoprobe")
    assert sg.input_tokens == sum(2 * len(it.options) for it in items)  # one token per scored option sentence
    lp = plan_task(dbb(source="bundled", prompt="stereoprobe", mode="logprob"), model="openai/gpt-4o",
                   count=lambda t: 1)
    # logprob mode: both option orders of every question, one answer token each
    assert lp.items == len(qs) and lp.input_tokens == 2 * len(qs) and lp.output_tokens == 2 * len(qs)
    assert lp.model_calls["generator"] == 2 * len(qs)  # an API model: one request per prompt
    local = plan_task(dbb(source="bundled", prompt="stereoprobe", mode="logprob"), model="transformers/default",
                      count=lambda t: 1)
    assert local.model_calls["generator"] == local.samples * local.epochs  # one batched request per template


def test_stereotales_judge_main_model_is_the_judge(upstream):
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    p = plan_task(stereotales_judge(run_settings="none", prompt="bundled"), model="openai/gpt-4o-mini")
    assert set(p.model_calls) == {"judge"} and p.epochs == 3
    assert p.model_calls["judge"] == 3 * p.samples and p.items == p.samples


def test_model_role_yaml_form():
    assert cli_plan.parse_roles(["judge={model: openai/gpt-4o, temperature: 0}", "extractor=a/b,c/d"]) == {
        "judge": ["openai/gpt-4o"], "extractor": ["a/b", "c/d"]}
    with pytest.raises(InputError, match="not valid YAML"):
        cli_plan.parse_roles(["judge={model: [}"])


def test_json_written_atomically_a_failed_write_leaves_the_earlier_plan(tmp_path, monkeypatch):
    import errno

    out = tmp_path / "p.json"
    out.write_text('{"earlier": "plan"}\n', encoding="utf-8")
    real_write_text = Path.write_text

    def half_then_disk_full(self, data, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        if self.name.startswith(f".{out.name}."):  # the temporary file beside the plan: half written, then full
            real_write_text(self, data[: len(data) // 2], *args, **kwargs)
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write_text(self, data, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", half_then_disk_full)
    with pytest.raises(InputError, match="p.json: cannot write.*unchanged"):
        _run(["dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "--model", "openai/gpt-4o-mini", "--json",
              str(out)])
    assert out.read_text(encoding="utf-8") == '{"earlier": "plan"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]  # no temporary file left beside it
    monkeypatch.undo()
    assert _run(["dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "--model", "openai/gpt-4o-mini",
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["items"] >= 1
