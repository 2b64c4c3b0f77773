"""bench/gpu_throughput.py runs end to end on CPU with a tiny Llama (the GPU script is known to work before a
GPU machine runs it): its provider route agrees per token with the plain forward loop, and its end-to-end,
batch-stability and generation routes run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gpu_throughput", ROOT / "bench" / "gpu_throughput.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_synthetic_workloads_have_the_published_shapes(bench) -> None:
    groups = bench.globalbias_texts(90)
    assert sum(map(len, groups)) >= 90 and len({len(g) for g in groups}) == 1  # every name in every group
    assert groups[0][0].startswith("My name is ") and len({g[0] for g in groups}) == len(groups)
    assert bench.FULL_GLOBALBIAS == 876_000 and bench.FULL_DBB_REQUESTS == 154_700


@pytest.mark.slow
@pytest.mark.refdata
def test_tiny_run_agrees_and_writes_json(bench, tmp_path: Path, refdata: Path, monkeypatch) -> None:
    from stereoprobe.providers.default_model import default_model_dir

    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))  # DBB's default prompts are upstream's files
    out = tmp_path / "gpu.json"
    res = bench.main(["--tokenizer", str(default_model_dir()), "--tiny", "--gb-sentences", "20",
                      "--dbb-requests", "2", "--dbb-epochs", "1", "--device", "cpu", "--json", str(out),
                      "--skip", "vllm"])  # the vLLM contender has its own test: tests/vllm/test_bench_vllm.py
    assert res["agree"] and json.loads(out.read_text())["rows"] == res["rows"]
    assert res["errors"] == {} and res["skipped"] == []
    # the DBB routes: the real tasks through inspect, and the same requests replayed without inspect
    for label, units in (("dbb_logprob_e2e", 50), ("dbb_sg_e2e", 300)):  # one bundled template: 50 questions
        e2e = {r["route"]: r for r in res["rows"] if r["workload"] == label}
        assert set(e2e) == {"inspect_eval", "provider_direct"} and {r["texts"] for r in e2e.values()} == {units}
    goals = bench.gpu_e2e.goal_lines(res)  # one line per goal, each with a verdict or "not measured"
    assert [g[0][0] for g in goals] == ["1", "2", "2", "3", "4", "5"]
    routes = {(r["workload"], r["route"]) for r in res["rows"]}
    assert {("globalbias", "plain"), ("globalbias", "provider"), ("dbb_logprob", "provider")} <= routes
    for r in res["rows"]:
        if r["route"] == "provider":
            assert r["max_abs_diff_per_token"] <= 1e-4
        if r["route"] == "inspect":  # same sums through inspect's model API and the grouped-text protocol
            assert r["max_abs_diff_per_text_sum"] <= 1e-3
    # the end-to-end route: the real task through inspect_ai.eval and stereoprobe globalbias, beside the
    # provider-direct and plain-loop routes on the same sentences (bundled data, template 1: 24 names x 16)
    # and again with -M scorer_process=true (bench/gpu_contenders.py: the scorer in a process of its own)
    e2e = {r["route"]: r for r in res["rows"] if r["workload"] == "globalbias_e2e"}
    assert set(e2e) == {"inspect_eval", "provider_direct", "plain_loop", "inspect_eval_scorer_process"}
    assert {r["texts"] for r in e2e.values()} == {24 * 16} and e2e["inspect_eval"]["post_processing_seconds"] > 0
    assert 0 < e2e["inspect_eval"]["gpu_busy_share"] <= 1 and e2e["inspect_eval"]["projected_full_minutes"] > 0
    # float32 on CPU: the same sums at batch 64, 512 and auto, with fixed shapes (CPU default: off) or not
    assert res["batch_stability"]["identical"] == {"64": True, "512": True, "auto": True}
    assert res["batch_stability_unfixed"]["identical"] == {"64": True, "512": True, "auto": True}
    # the prefix-sharing forwards through the fixed-shape cache (eager on CPU): the dynamic cache's sums, bit for bit
    cached = res["cached_graphs"]
    assert cached["identical"] and cached["fixed_cached_graphs"] == "off: not a CUDA device (fixed-shape cache, eager)"
    assert e2e["inspect_eval"]["cached_graphs"] == "off: not a CUDA device"  # CPU default: the dynamic cache
    gen = {g["route"]: g for g in res["generation"]}
    assert set(gen) == {"provider", "plain_generate"} and all(g["generated_tokens"] > 0 for g in gen.values())
