"""The transformers provider bounds an output by max_new_tokens alone: generate() no longer prints "Both
`max_new_tokens` and `max_length`(=20) seem to have been set" on every call (issue 35.7; the global default
max_length that preparing the GenerationConfig merged in is switched off)."""

from __future__ import annotations

import asyncio
import logging

from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from test_effective_settings import folders  # noqa: F401  (the tiny Llama fixture)


def test_generation_prints_no_max_length_warning(folders, capfd, caplog) -> None:  # noqa: F811
    model = get_model(f"transformers/{folders['plain']}", device="cpu", memoize=False, gen_batch_size=1)
    with caplog.at_level(logging.WARNING):
        out = asyncio.run(model.generate([ChatMessageUser(content="Tell me a story.")],
                                         config=GenerateConfig(max_tokens=3, temperature=0)))
    assert out.usage is not None and 0 < out.usage.output_tokens <= 3
    captured = capfd.readouterr()
    text = captured.out + captured.err + caplog.text
    assert "max_length" not in text and "seem to have been set" not in text, text[-500:]
