"""The rendering helper of the conformance tests records what the model receives, per sample and epoch."""

from __future__ import annotations

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from tests.conformance._render import Request, fidelity_rows, render


@solver
def _prefilled() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.append(ChatMessageAssistant(content="{"))
        return await generate(state, max_tokens=7, seed=3)

    return solve


def test_render_records_messages_prefill_settings_and_epochs() -> None:
    samples = [Sample(input=[ChatMessageSystem(content="sys"), ChatMessageUser(content=f"q{i}")], id=f"s{i}")
               for i in range(2)]
    task = Task(dataset=samples, solver=[_prefilled()], config=GenerateConfig(temperature=0.5), epochs=2)
    got = render(task)
    want = [Request(f"s{i}", e, None, (("system", "sys"), ("user", f"q{i}")), "{",
                    {"temperature": 0.5, "max_tokens": 7, "seed": 3}) for i in range(2) for e in (1, 2)]
    assert got == want


def test_render_sees_a_plain_generate() -> None:
    got = render(Task(dataset=[Sample(input="hi", id=1)], solver=[generate()]))
    assert [(r.messages, r.prefill, r.config) for r in got] == [((("user", "hi"),), None, {})]


def test_fidelity_rows_are_read_from_the_docs() -> None:
    rows = fidelity_rows()
    assert {"D1", "G1"} <= rows and "X0" not in rows


def test_render_can_name_the_model_after_a_provider() -> None:
    from tests.conformance._render import capture_model

    received: list = []
    model = capture_model("gpt-4o", received=received, provider="openai")
    assert str(model) == "openai/gpt-4o"
    got = render(Task(dataset=[Sample(input="hi", id=1)], solver=[generate()]), model=model)
    assert len(got) == 1 == len(received)
