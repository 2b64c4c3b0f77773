"""DBB-SG prefix sharing (issue 36.3) on the bundled default model, CPU, float32, chat scoring (the default):
in a template's grouped request each question's prompt runs once, in one prefix pass, and its variations x two
options continue from its key/value cache. The numbers equal those computed without sharing within float32
noise, not bit for bit: the continuation attends to a cached prefix, so the attention and the matrix products
reduce in other shapes than over the whole text (the per-token difference is ~1e-6 nats; 1e-5 is asserted,
the bound tests/dbb/test_sg_grouped.py uses for batching noise)."""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from stereoprobe.tasks.dbb import dbb_sg

SEL = {"source": "bundled", "faithful": False, "prompt": "stereoprobe", "categories": "ses", "templates": "sp01"}


def _run(tmp_path: Any, name: str, sharing: bool) -> tuple[Any, list[tuple[bool, list[tuple[int, ...]]]]]:
    model = get_model("transformers/default", device="cpu", dtype="float32", prefix_sharing=str(sharing).lower())
    passes: list[tuple[bool, list[tuple[int, ...]]]] = []  # (prefix pass?, its rows)

    def hook(module: Any, args: Any, kw: dict[str, Any], out: Any) -> None:
        prefix = bool(kw.get("use_cache")) and kw.get("past_key_values") is None and kw.get("cache") is None
        passes.append((prefix, [tuple(r) for r in kw["input_ids"].tolist()]))

    handle = model.api.scorer.body.register_forward_hook(hook, with_kwargs=True)
    try:
        [log] = inspect_eval(dbb_sg(**SEL), model=model, display="none", log_dir=str(tmp_path / name))
    finally:
        handle.remove()
    assert log.status == "success", log.error
    return log, passes


@pytest.mark.slow
def test_each_question_prompt_runs_once_and_numbers_agree(tmp_path):
    shared, passes = _run(tmp_path, "shared", True)
    plain, plain_passes = _run(tmp_path, "plain", False)
    [sample] = shared.samples
    questions = sample.metadata["sg_questions"]
    assert len(questions) > 2 and all(len(q["options"]) >= 1 for q in questions)
    prefix_rows = [rows for is_prefix, rows in passes if is_prefix]
    distinct = {r for rows in prefix_rows for r in rows}
    # one prefix per question (its chat prompt and what its options share), each in exactly one prefix pass
    assert len(distinct) == len(questions)
    assert all(sum(r in rows for rows in prefix_rows) == 1 for r in distinct)
    assert not any(is_prefix for is_prefix, _ in plain_passes)
    tokens = sum(len(rows) * len(rows[0]) for _, rows in passes)
    plain_tokens = sum(len(rows) * len(rows[0]) for _, rows in plain_passes)
    assert tokens < plain_tokens / 2  # padded tokens through the model: the prompts no longer repeat
    got, ref = sample.metadata["sg_results"], plain.samples[0].metadata["sg_results"]
    for q in questions:
        assert got[q["id"]]["error"] is None and got[q["id"]]["tokens"] == ref[q["id"]]["tokens"]
        mine = [x for pair in got[q["id"]]["nll"] for x in pair]
        want = [x for pair in ref[q["id"]]["nll"] for x in pair]
        assert mine == pytest.approx(want, abs=1e-5)
