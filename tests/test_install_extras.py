"""``pip install stereoprobe`` serves API models: the core dependencies hold no torch, transformers or lm-eval
(extras ``local`` and ``lm-eval`` do), and the tasks, ``plan`` and a post-processing command run without them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCAL_ONLY = ("torch", "transformers", "lm_eval", "datasets", "gguf", "accelerate", "xgrammar")


def _name(requirement: str) -> str:
    return requirement.split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower().replace("-", "_")


def test_core_dependencies_leave_local_models_to_extras():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    assert not core & set(LOCAL_ONLY), f"core dependencies hold {sorted(core & set(LOCAL_ONLY))}"
    assert {"torch", "transformers"} <= {_name(r) for r in extras["local"]}
    assert "lm_eval" in {_name(r) for r in extras["lm-eval"]}
    assert "stereoprobe[local,lm-eval]" in extras["test"]  # the test suite installs everything


@pytest.mark.slow
def test_api_models_work_without_the_local_extras(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        class Absent:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {LOCAL_ONLY!r}:
                    raise ModuleNotFoundError(name)
        sys.meta_path.insert(0, Absent())
        from inspect_ai import eval as inspect_eval
        from inspect_ai.model import ModelOutput, ModelUsage, get_model
        from stereoprobe.cli import main
        from stereoprobe.tasks.dbb import dbb
        from stereoprobe.tasks.globalbias import globalbias
        from stereoprobe.tasks.globalbias_profiles import globalbias_profiles
        from stereoprobe.tasks.stereotales import stereotales
        from stereoprobe.tasks.stereotales_judge import stereotales_judge

        assert main(["plan", "dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "--model", "openai/gpt-4o"]) == 0
        def answer(input, tools, tool_choice, config):
            out = ModelOutput.from_content(model="m", content="a) yes")
            out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return out
        model = get_model("mockllm/model", custom_outputs=answer)
        [log] = inspect_eval(dbb(source="bundled", prompt="stereoprobe", limit_templates=1), model=model, display="none",
                             log_dir=r"{tmp_path / 'logs'}")
        assert log.status == "success", log.error
        assert main(["dbb", r"{tmp_path / 'logs'}", "--out", r"{tmp_path / 'out'}"]) == 0
        assert not any(m.split(".")[0] in {LOCAL_ONLY!r} for m in sys.modules)
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "STEREOPROBE_NO_PROGRESS": "1", "INSPECT_LOG_LEVEL": "warning"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
