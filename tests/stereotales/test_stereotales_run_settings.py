"""The published run configuration's per-model settings (``stereoprobe.stereotales.run_settings``): model
matching, the translation of LiteLLM keyword arguments into inspect settings (hand-written expectations),
command-line precedence, and the table of docs/stereotales.md against the pinned file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from inspect_ai.model import GenerateConfig

from stereoprobe.stereotales import run_settings as R
from stereoprobe.upstream import UpstreamDataError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("model, entry, hit", [
    ("openai/gpt-5-mini", "azure_ai/gpt-5-mini", True),
    ("openai/azure/gpt-5-mini", "azure_ai/gpt-5-mini", True),
    ("anthropic/claude-haiku-4-5-20251001", "anthropic/claude-haiku-4-5", True),  # a dated model id
    ("hf/Qwen/Qwen3.5-27B", "dashscope/qwen3.5-27b", True),  # case ignored
    ("openai/gpt-5-mini-pro", "azure_ai/gpt-5-mini", False),  # another model, not a date
    ("openai/gpt-5", "azure_ai/gpt-5-mini", False),
    ("openai/gpt-4o-mini", "azure_ai/gpt-4o", False),
])
def test_model_matching(model: str, entry: str, hit: bool) -> None:
    assert R.matches(model, entry) is hit


def test_translation_of_each_kind_of_setting() -> None:
    assert R.translate({"name": "x", "litellm_model": "a/b", "max_tokens": 8192,
                        "extra_body": {"reasoning_effort": "low"}}, "t") == {"max_tokens": 8192,
                                                                            "reasoning_effort": "low"}
    assert R.translate({"thinking": {"type": "enabled", "budget_tokens": 1024}, "temperature": 1}, "t") == {
        "reasoning_tokens": 1024, "temperature": 1}
    assert R.translate({"extra_body": {"enable_thinking": True, "thinking_budget": 1024}, "usage": {"include": True}},
                       "t") == {"reasoning_tokens": 1024, "extra_body": {"enable_thinking": True}}
    assert R.translate({"generation_kwargs": {"max_tokens": 8192, "thinking": {"budget_tokens": 1024}}}, "t") == {
        "max_tokens": 8192, "reasoning_tokens": 1024}
    with pytest.raises(UpstreamDataError, match="'top_k'"):
        R.translate({"top_k": 40}, "configs/x.json: models[3]")


@pytest.fixture
def run_file(refdata: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    path = refdata / "stereotales-pipeline" / "configs" / "stereotales_run.json"
    if not path.is_file():
        pytest.skip("no upstream copy of stereotales_run.json")
    return path


@pytest.mark.refdata
def test_command_line_values_win_over_the_entry(run_file: Path) -> None:
    """The entry fills only what the user left unset, even where the user typed the paper's default value
    (the command line's settings stand in the active config; end to end: tests/test_user_settings.py)."""
    from inspect_ai.model._generate_config import active_generate_config_context_var

    defaults = R.STORY_DEFAULTS
    untouched = R.request_settings("openai/gpt-5-mini", defaults)
    assert untouched.config == {"temperature": 1.0, "max_tokens": 8192, "reasoning_effort": "low"}
    assert R.request_settings("openai/gpt-5-mini", defaults, "none").config == {"temperature": 1.0, "max_tokens": 4096}
    token = active_generate_config_context_var.set(GenerateConfig(max_tokens=4096, reasoning_effort="high"))
    try:
        given = R.request_settings("openai/gpt-5-mini", defaults)
        assert given.config == {"temperature": 1.0, "max_tokens": 4096, "reasoning_effort": "high"}
        assert R.request_settings("openai/gpt-4o-mini", defaults).config == {"temperature": 1.0, "max_tokens": 4096,
                                                                              "reasoning_effort": "high"}
    finally:
        active_generate_config_context_var.reset(token)
    assert R.request_settings("openai/gpt-4o-mini", defaults).entry is None


@pytest.mark.refdata
def test_docs_table_lists_every_entry_as_sent(run_file: Path) -> None:
    """Every entry of the pinned file with settings is a row of docs/stereotales.md's table whose 'sent' cell
    names each translated setting and value; the entries without settings are named as such."""
    doc = (ROOT / "docs" / "stereotales.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if line.startswith("| ") and "`" in line]
    for entry in json.loads(run_file.read_text(encoding="utf-8"))["models"]:
        sent = R.translate(entry, "test")
        if not sent:
            assert entry["name"] in doc.split("entries not listed keep", 1)[1].split("\n\n", 1)[0]
            continue
        [row] = [r for r in rows if re.search(rf"\b{re.escape(entry['name'])}\b", r)]
        cell = row.rstrip(" |").rsplit("|", 1)[1]
        for key, value in sent.items():
            shown = json.dumps(value) if isinstance(value, dict) else str(value).lower()
            assert key in cell and shown in cell.lower(), (entry["name"], key, cell)
