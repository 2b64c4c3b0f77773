"""CUDA graphs per plan key (stereoprobe.providers.graphs): the selection, the capture-once/replay logic and the
fallback with its recorded reason, on CPU (graphs themselves need a card: bench/gpu_throughput.py measures)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import torch
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe.likelihood import RESULTS_KEY, TEXTS_KEY
from stereoprobe.providers.graphs import CUDA_GRAPHS_KEY, GraphedForward, graph_choice
from stereoprobe.providers.microbatch import MicroBatchShape
from stereoprobe.providers.sampling import EFFECTIVE_SETTINGS_KEY
from tests.fake_graph import FakeGraph as _Graph


def test_graph_choice():
    shape = MicroBatchShape()
    assert graph_choice(None, "cuda", shape) == (True, "") and graph_choice("auto", "cuda", shape) == (True, "")
    assert graph_choice(None, "cpu", shape) == (False, "off: not a CUDA device")
    assert graph_choice(None, "cuda", None) == (False, "off: shapes are not fixed (-M batch_invariant=false)")
    assert graph_choice("false", "cuda", shape) == (False, "off: -M cuda_graphs=false")
    with pytest.raises(ValueError, match="cuda_graphs=true needs a CUDA device"):
        graph_choice("true", "cpu", shape)
    with pytest.raises(ValueError, match="cuda_graphs must be true, false or auto"):
        graph_choice("sometimes", "cuda", shape)


def _forward(ids: torch.Tensor) -> torch.Tensor:
    return ids.float() * 2 + 1


def test_capture_once_per_shape_then_replay(monkeypatch):
    runner = GraphedForward(_forward, True)
    graphs: list[_Graph] = []

    def capture(ids: torch.Tensor) -> tuple[Any, tuple[torch.Tensor], torch.Tensor]:
        static_in, static_out = ids.clone(), _forward(ids)
        graphs.append(_Graph(lambda: static_out.copy_(_forward(static_in))))
        return graphs[-1], (static_in,), static_out

    monkeypatch.setattr(runner, "_capture", capture)
    a, b = torch.arange(6).reshape(2, 3), torch.arange(6, 12).reshape(2, 3)
    assert torch.equal(runner(a), _forward(a)) and len(graphs) == 1  # captured, checked against the eager run
    assert torch.equal(runner(b), _forward(b)) and len(graphs) == 1 and graphs[0].replays == 2  # replayed
    assert torch.equal(runner(torch.ones(4, 3)), _forward(torch.ones(4, 3))) and len(graphs) == 2  # new shape
    assert runner.status == "on (2 shapes captured)"


def test_shapes_beyond_the_limit_run_eagerly(monkeypatch):
    runner = GraphedForward(_forward, True, max_graphs=1)
    captured: list[tuple[int, ...]] = []

    def capture(ids: torch.Tensor) -> tuple[Any, tuple[torch.Tensor], torch.Tensor]:
        captured.append(tuple(ids.shape))
        static_in, static_out = ids.clone(), _forward(ids)
        return _Graph(lambda: static_out.copy_(_forward(static_in))), (static_in,), static_out

    monkeypatch.setattr(runner, "_capture", capture)
    for ids in (torch.ones(2, 3), torch.ones(4, 3), torch.ones(2, 3), torch.ones(5, 3), torch.ones(4, 3)):
        assert torch.equal(runner(ids), _forward(ids))
    assert captured == [(2, 3)] and runner.on
    assert runner.status == "on (1 shapes captured, 2 more eager beyond the limit of 1)"


def test_a_replay_that_differs_falls_back_with_the_reason(monkeypatch):
    runner = GraphedForward(_forward, True)
    monkeypatch.setattr(runner, "_capture", lambda ids: (_Graph(lambda: None), (ids.clone(),), torch.zeros(ids.shape)))
    ids = torch.arange(6).reshape(2, 3)
    assert torch.equal(runner(ids), _forward(ids)) and not runner.on
    assert runner.status == "fell back: RuntimeError: the replayed graph differs from the eager forward"
    assert torch.equal(runner(ids), _forward(ids))  # eager from now on


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_a_failed_capture_falls_back_to_eager():
    runner = GraphedForward(_forward, True)  # forced on: capturing without CUDA fails
    ids = torch.arange(6).reshape(2, 3)
    assert torch.equal(runner(ids), _forward(ids)) and not runner.on and runner.status.startswith("fell back: ")


def test_provider_records_the_choice(tiny_models):
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False)
    assert model.api.scorer.graphs.status == "off: not a CUDA device"
    message = ChatMessageUser(content="2 texts", metadata={TEXTS_KEY: [{"text": "a b c d"}, {"text": "a b e"}]})
    out = asyncio.run(model.generate([message], config=GenerateConfig(prompt_logprobs=1, max_tokens=1)))
    assert out.metadata[RESULTS_KEY]["error"] == [None, None]
    assert out.metadata[EFFECTIVE_SETTINGS_KEY] == {CUDA_GRAPHS_KEY: "off: not a CUDA device"}
    with pytest.raises(Exception, match="cuda_graphs=true needs a CUDA device"):
        get_model(f"transformers/{tiny_models['llama']}", device="cpu", cuda_graphs="true", memoize=False)
