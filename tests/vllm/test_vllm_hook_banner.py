"""The neutral vLLM sampling hook is silent unless a vLLM model runs (issue 42.8): inspect lists every
registered hook in a banner at the start of each ``inspect eval``; the hook is registered only when the
command line names a vLLM route (then listed once), or when a stereoprobe task is built with a vLLM model
active (a script calling ``inspect_ai.eval``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stereoprobe.providers import vllm_neutral

INSPECT = str(Path(sys.executable).with_name("inspect"))
BANNER = "stereoprobe_vllm_neutral_sampling"


def _inspect(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([INSPECT, "eval", "stereoprobe/globalbias", "-T", "source=bundled", "-T", "templates=[1]",
                           "--limit", "1", "--display", "none", *args], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.parametrize("specs, named", [
    (["transformers/default"], False), (["openai/gpt-4o", "grader=anthropic/claude"], False),
    (["vllm/Qwen/Qwen2.5-7B-Instruct"], True), (["transformers/default", "judge=vllm-completions/m"], True),
    (["{judge: vllm/m}"], True), (["openai/vllm/x"], False),
])
def test_which_specs_name_a_vllm_route(specs: list[str], named: bool) -> None:
    assert vllm_neutral.names_vllm(specs) is named


@pytest.mark.slow  # loads the bundled default model
@pytest.mark.skipif(not Path(INSPECT).exists(), reason="inspect's command line is not installed beside python")
def test_no_banner_on_the_transformers_provider() -> None:
    done = _inspect("--model", "transformers/default")
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert BANNER not in output and "top-k, min-p" not in output
    assert "hooks enabled" not in output


pytest.importorskip("openai", reason="inspect's vllm-completions provider needs the openai client (pip install openai)")

from fake_server import FakeVLLM  # noqa: E402
from test_vllm_completions import server, tiny_llama  # noqa: E402,F401  (the module's fixtures)


@pytest.mark.slow  # an inspect eval in a subprocess against the fake vLLM server
@pytest.mark.skipif(not Path(INSPECT).exists(), reason="inspect's command line is not installed beside python")
def test_the_banner_once_on_a_vllm_model(server: FakeVLLM, tiny_llama: Path) -> None:  # noqa: F811
    server.requests.clear()
    done = _inspect("--model", f"vllm-completions/{tiny_llama}", "--model-base-url", server.base_url)
    assert done.returncode == 0, done.stderr
    assert (done.stdout + done.stderr).count(BANNER) == 1
    assert server.requests and all(body["min_p"] == 0.0 for body in server.requests)  # and the hook ran
