"""``stereoprobe plan --json`` writes model names only through the allow-list writer (stereoprobe.harmless):
planted tokens of shapes no deny-list names never reach the plan file (issue 41.1)."""

from __future__ import annotations

import json

import pytest
from planted_secrets import BASIC, HEXISH, JWT_HEAD, PEM_BODY

from stereoprobe.cli import main
from stereoprobe.redact import REDACTED


@pytest.mark.parametrize("model, secret", [(f"openai-api/x/{HEXISH}", HEXISH), (f"openai-api/{JWT_HEAD}/m", JWT_HEAD),
                                           (f"openai-api/x/{BASIC}", BASIC), (f"vllm/org/{PEM_BODY}", PEM_BODY)])
def test_plan_json_writes_only_what_is_known_harmless(model: str, secret: str, tmp_path, capsys) -> None:
    """``plan --json`` goes through the allow-list writer (issue 41.1): a model name holding a token of a shape
    no deny-list names is written as ``***``, in the plan's models and in every note quoting it; the plan is
    still written (exit 0)."""
    out = tmp_path / "plan.json"
    code = main(["plan", "dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "categories=ses",
                 "--model", model, "--json", str(out)])
    capsys.readouterr()
    assert code == 0
    text = out.read_text()
    assert secret not in text
    written = json.loads(text)
    assert written["models"] and all(ms == [REDACTED] for ms in written["models"].values())
    assert written["samples"] > 0 and written["task"] == "dbb"
