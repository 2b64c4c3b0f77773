"""``stereoprobe plan`` dollars: every model the docs name is priced, partial sums, batch prices, stale dates,
output lengths per name; the calibration's progress callback."""

from __future__ import annotations

import argparse
import datetime as dt
import re
from pathlib import Path

import pytest

from stereoprobe.cli import plan as cli_plan
from stereoprobe.errors import InputError
from stereoprobe.plan import load_prices, plan_task
from stereoprobe.plan.prices import PriceTable, stale_prices

ROOT = Path(__file__).resolve().parents[2]
TODAY = dt.date(2026, 11, 26)


def _doc_models() -> set[str]:
    """Every model named by --model / --model-role in the README and docs (lists split)."""
    found: set[str] = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"--model(?:-role [a-z_]+=|[ =])([^\s'\"\\]+)", text):
            found.update(x for x in m.group(1).split(",") if "/" in x)
    return found


def test_every_api_model_the_docs_name_has_a_price() -> None:
    prices = load_prices()
    models = _doc_models()
    assert "google/gemini-3.1-flash-lite-preview" in models and "openai/gpt-4o-mini" in models  # the scan works
    unpriced = sorted(m for m in models if prices.price(m) is None)
    assert not unpriced, f"add these to datasets/prices.yaml (with their date and source): {unpriced}"


def test_readme_stereotales_ensemble_is_priced_in_full() -> None:
    from stereoprobe.tasks.stereotales import stereotales

    roles = {"extractor": ["openai/gpt-5-nano", "google/gemini-2.5-flash-lite", "google/gemini-3.1-flash-lite-preview"],
             "refusal": ["openai/gpt-5-nano"]}
    task = stereotales(languages="en", seeds="bundled", role_prompts="bundled", run_settings="none",
                       role_settings="none")
    p = plan_task(task, model="openai/gpt-4o-mini", roles=roles, count=lambda t: 1)
    assert p.usd is not None and p.unpriced == [] and p.usd == p.usd_priced


TABLE = PriceTable(as_of="2026-11-01", source="t.yaml", models=[("api/a", 1.0, 4.0), ("other/b", 2.0, 2.0)],
                   local_providers=frozenset({"transformers"}), batch_discounts={"api": 0.5})


def test_partial_sum_names_the_unpriced_model_and_batch_halves_the_batchable_part() -> None:
    from stereoprobe.tasks.globalbias import globalbias

    task = globalbias(source="bundled", groups=["ARAB"], templates=[1])  # 96 sentences, 10 tokens each (below)
    p = plan_task(task, model="api/a", prices=TABLE, count=lambda t: 10, today=TODAY)
    assert p.usd == p.usd_priced == round(960 * 1.0 / 1e6, 2)
    p = plan_task(task, model="acme/unknown", prices=TABLE, count=lambda t: 10, today=TODAY)
    assert p.usd is None and p.usd_priced == 0.0 and p.unpriced == ["acme/unknown (generator)"]
    assert p.usd_batch is None


def test_dollars_by_hand_with_an_unpriced_extractor() -> None:
    from stereoprobe.tasks.stereotales import stereotales

    # 1 token per prompt text; generator api/a; extractors api/a + acme/x (unpriced); refusal other/b
    task = stereotales(languages="en", attributes="gender", seeds="bundled", role_prompts="bundled", run_settings="none",
                       role_settings="none")
    p = plan_task(task, model="api/a", prices=TABLE,
                  roles={"extractor": ["api/a", "acme/x"], "refusal": ["other/b"]}, count=lambda t: 1, today=TODAY)
    t = p.tokens_by_role
    gen = (t["generator"]["input"] * 1.0 + t["generator"]["output"] * 4.0) / 1e6
    ext = 0.5 * (t["extractor"]["input"] * 1.0 + t["extractor"]["output"] * 4.0) / 1e6  # api/a's half
    ref = (t["refusal"]["input"] * 2.0 + t["refusal"]["output"] * 2.0) / 1e6
    assert p.usd is None and p.unpriced == ["acme/x (extractor)"]
    assert p.usd_priced == round(gen + ext + ref, 2)
    assert p.usd_batch_priced == round(0.5 * gen + 0.5 * ext + ref, 2)  # "other" has no batch API
    assert p.batch_models == ["api/a"]
    line = cli_plan.cost_line(p, TABLE)
    assert line.startswith(f"USD unknown: {p.usd_priced:,.2f} for the priced models (no price for acme/x (extractor))")
    assert f"{p.usd_batch_priced:,.2f} with inspect eval --batch (api 50% off)" in line


def test_stale_prices_warn_after_90_days() -> None:
    # by hand: 2026-08-28 -> 2026-11-26 is 3 + 30 + 31 + 26 = 90 days; one day earlier is 91
    fresh = PriceTable(as_of="2026-08-28", source="t.yaml", models=[("api/*", 1.0, 1.0)])
    assert stale_prices(fresh, ["api/x"], today=TODAY) is None
    old = PriceTable(as_of="2026-08-27", source="t.yaml", models=[("api/*", 1.0, 1.0)])
    assert stale_prices(old, ["api/x", "transformers/default", "acme/unpriced"], today=TODAY) == (
        "prices of api/x are from 2026-08-27, 91 days before 2026-11-26 (over 90): check them or pass --prices FILE")


def test_bundled_table_rows_carry_dates_and_batch_discounts() -> None:
    prices = load_prices()
    assert prices.batch_discount("openai/gpt-4o") == 0.5 and prices.batch_discount("transformers/default") == 0.0
    assert prices.as_of_for("google/gemini-3.1-flash-lite-preview") == "2026-11-26"
    assert prices.as_of_for("openai/gpt-4o") == prices.as_of


@pytest.mark.parametrize("body, match", [
    ("as_of: 'yesterday'\nmodels: []\n", "not a date"),
    ("as_of: '2030-01-01'\nbatch_discounts: {openai: 1.5}\nmodels: []\n", "must be below 1"),
    ("as_of: '2030-01-01'\nmodels:\n  - {model: 'a/*', input: 1, output: 1, as_of: 'soon'}\n", "models row 1"),
])
def test_bad_price_files(tmp_path, body, match) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(body)
    with pytest.raises(InputError, match=match):
        load_prices(f)


def test_cli_warns_on_stale_prices_on_stderr(tmp_path, capsys) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("as_of: '2000-01-01'\nbatch_discounts: {openai-api: 0.5}\nmodels:\n"
                 "  - {model: 'openai-api/*', input: 1, output: 1}\n")
    parser = argparse.ArgumentParser()
    cli_plan.register(parser.add_subparsers())
    args = parser.parse_args(["plan", "globalbias", "-T", "source=bundled", "--model", "openai-api/host/llama",
                              "--prices", str(f)])
    assert args.func(args) == 0
    out, err = capsys.readouterr()
    assert "stereoprobe plan: warning: prices of openai-api/host/llama are from 2000-01-01" in err
    assert "with inspect eval --batch (openai-api 50% off)" in out and "prices of" not in out


def test_profiles_output_grows_with_the_names_of_a_request() -> None:
    from stereoprobe.tasks.globalbias_profiles import globalbias_profiles

    task = globalbias_profiles(source="bundled", batch_size=4, prompt="stereoprobe")
    names = [len(s.metadata["names"]) for s in task.dataset]
    p = plan_task(task, model="openai/gpt-4o", count=lambda t: 1)
    assert p.output_tokens == 175 * sum(names)  # datasets/plan.yaml: 175 tokens per profile
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import GenerateConfig

    # a task whose generation config caps the answer: requests of 1, 2 and 4 names, max_tokens 300
    samples = [Sample(input="names", metadata={"names": ["n"] * k}) for k in (1, 2, 4)]
    capped = plan_task(Task(dataset=MemoryDataset(samples), config=GenerateConfig(max_tokens=300),
                            name="globalbias_profiles"), model="openai/gpt-4o", count=lambda t: 1)
    assert capped.output_tokens == 175 + 300 + 300


def test_calibration_progress_without_a_terminal_prints_lines_with_eta(capsys, monkeypatch) -> None:
    ticks = iter([0.0, 100.0, 110.0, 130.0])  # one clock reading per call
    monkeypatch.setattr(cli_plan.time, "perf_counter", lambda: next(ticks))
    bar = cli_plan.CalibrationProgress("transformers/default")
    bar.tty = False
    with bar:
        bar("loading", 0, 1)
        bar("samples", 0, 3)
        bar("samples", 1, 3)
        bar("samples", 3, 3)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["calibrating on transformers/default: loading the model(s) 0/1",
                     "calibrating on transformers/default: timed samples 0/3",
                     "calibrating on transformers/default: timed samples 1/3, 10 s elapsed, ETA 20 s",
                     "calibrating on transformers/default: timed samples 3/3, 30 s elapsed, ETA 0 s"]


@pytest.mark.slow
def test_calibration_reports_each_sample_through_the_callback(monkeypatch) -> None:
    import fake_model  # noqa: F401 - registers the stereoprobe-fake provider

    import stereoprobe.plan.calibrate as C
    from stereoprobe.tasks.globalbias import globalbias

    monkeypatch.setattr(C, "_warm_up", lambda models: None)  # the fake model answers prompt log-probs only
    seen: list[tuple[str, int, int]] = []
    spc = C.calibrate(lambda: globalbias(source="bundled", groups=["ARAB"], templates=[1]), "stereoprobe-fake/fake",
                      None, 2, on_progress=lambda *a: seen.append(a))
    assert spc > 0
    assert seen == [("loading", 0, 1), ("loading", 1, 1), ("samples", 0, 2), ("samples", 1, 2), ("samples", 2, 2)]
