"""bench/gpu_vllm.py, the vLLM contender of bench/gpu_throughput.py, end to end on CPU in its smoke mode
(``--tiny``): a real vLLM server (the CPU build, from the venv of ``.ci/vllm_venv.sh``) serves the bench's own
tiny random Llama, saved to a folder, and scores the bench's texts through the prefill-only route in the same
bench call as the in-process provider. Float32: every text's summed log-probability within 1e-3 nats of the
in-process provider's; the settings the server logged are the prefill-only ones. Without the venv it skips
with one reason."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="inspect's vllm providers need the openai client (pip install openai)")

from real_server import unavailable  # noqa: E402

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.xdist_group("vllm")]

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-3  # nats per text, float32


def _bench():
    spec = importlib.util.spec_from_file_location("gpu_throughput", ROOT / "bench" / "gpu_throughput.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_vllm_contender_smoke(tmp_path: Path) -> None:
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    from stereoprobe.providers.default_model import default_model_dir

    out = tmp_path / "gpu.json"
    res = _bench().main(["--tokenizer", str(default_model_dir()), "--tiny", "--gb-sentences", "40",
                         "--dbb-requests", "4", "--device", "cpu", "--json", str(out),
                         "--skip", "e2e,fixed_cost,dbb_e2e,stability,generation"])
    assert res["errors"] == {} and json.loads(out.read_text())["vllm"]["applied"] == res["vllm"]["applied"]
    rows = {(r["workload"], r["route"]): r for r in res["rows"]}
    for label in ("globalbias", "dbb_logprob"):
        v, p = rows[(label, "vllm_prefill")], rows[(label, "provider")]
        assert v["texts"] == p["texts"] and v["tokens"] == p["tokens"]  # the same texts as the in-process routes
        assert v["max_abs_diff_per_text_sum"] <= TOL and v["texts_per_s"] > 0
    vllm = res["vllm"]
    assert vllm["weights"] == "saved" and "--enable-prefix-caching" in vllm["server_args"]
    scored = rows[("globalbias", "vllm_prefill")]["texts"] + rows[("dbb_logprob", "vllm_prefill")]["texts"]
    applied = vllm["applied"]  # per setting: logged value -> requests (the warm-up group's texts too)
    assert set(applied["prompt_logprobs"]) == {"0"} and sum(applied["prompt_logprobs"].values()) > scored
    assert set(applied["max_tokens"]) == {"1"} and set(applied["logprobs"]) == {"None"}


def test_no_vllm_is_a_stated_skip(tmp_path: Path) -> None:
    """Where the bench's Python has no vLLM on a GPU (the GPU machine's image), the contender is skipped with
    its reason, and the other routes' figures are kept."""
    import argparse

    gpu_vllm = _bench().gpu_vllm
    args = argparse.Namespace(vllm_python=None, device="cuda")
    python, why = gpu_vllm.vllm_python(args)
    if gpu_vllm.has_vllm():
        pytest.skip("this Python has vLLM")
    assert python is None and "has no vllm" in why
    res = gpu_vllm.contender(None, None, [], args, None)
    assert res == {"skipped": why}
