"""``-M scorer_process=true`` (stereoprobe.providers.scorer_process): the causal scorer in a spawned process of its
own gives the in-process scorer's numbers (float32, CPU), through its own API and through ``inspect eval`` of
the GlobalBias task (the user's path), errors come back as raised, and a model kind it cannot serve is refused
in one line."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from stereoprobe.providers.planning import BatchPolicy
from stereoprobe.providers.scorer_process import LoadSpec, ScorerProcess, scorer_process
from stereoprobe.providers.validation import ModelArgError

TOL = 1e-5  # nats per token: the same code on the same float32 weights, in another process


def _spec(folder: Path, kind: str = "causal") -> LoadSpec:
    return LoadSpec(str(folder), "cpu", "float32", kind, None, (), 0, (False, "off: not a CUDA device"))


@pytest.mark.slow  # each test that spawns the process imports torch and transformers there
def test_same_scores_as_in_process_and_errors_come_back(tiny_models) -> None:
    from stereoprobe.providers.loading import load
    from stereoprobe.providers.scoring import CausalScorer

    model, _, _ = load(str(tiny_models["llama"]), "cpu", __import__("torch").float32, "causal")
    seqs = [[2, 5, 6, 7, 8], [2, 5, 6, 9], [2, 11, 12, 13, 14, 15, 16]]
    groups = [0, 0, 1]
    ref = CausalScorer(model, pad_id=0).score(seqs, BatchPolicy(4), True, 2, groups)
    proc = ScorerProcess(_spec(tiny_models["llama"]))
    try:
        got = proc.score(seqs, BatchPolicy(4), True, 2, groups)
        assert [g.targets for g in got] == [r.targets for r in ref]
        assert max(abs(a - b) for g, r in zip(got, ref) for a, b in zip(g.logprobs, r.logprobs)) <= TOL
        assert [[t for t, _ in row] for g in got for row in g.top] == [[t for t, _ in row] for r in ref for row in r.top]
        with pytest.raises(IndexError):  # a token id beyond the vocabulary: the child's error, as raised there
            proc.score([[2, 10**6, 3]], BatchPolicy(4))
        assert proc.score(seqs[:1], BatchPolicy(4))[0].targets == ref[0].targets  # still serving
    finally:
        proc.close()


def test_refused_for_a_masked_model_and_a_word_not_boolean(tiny_models) -> None:
    """Through the provider, as ``-M`` options: one-line refusals naming the setting; off by default."""
    from inspect_ai.model import get_model

    assert scorer_process(False, _spec(tiny_models["bert"], "masked")) is None
    with pytest.raises(ModelArgError, match="scorer_process=true needs a causal model") as masked:
        get_model(f"transformers/{tiny_models['bert']}", device="cpu", memoize=False, scorer_process="true")
    with pytest.raises(ModelArgError, match="scorer_process") as word:
        get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False, scorer_process="yes")
    assert "\n" not in str(masked.value).strip() and "\n" not in str(word.value).strip()
    default = get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False)
    assert default.api.scorer_process is None  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_model_it_cannot_load_is_one_error(tmp_path: Path) -> None:
    proc = ScorerProcess(_spec(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="scorer process .* could not load"):
        proc.score([[1, 2]], BatchPolicy(4))


@pytest.mark.slow
def test_globalbias_through_inspect_same_numbers(tmp_path: Path) -> None:
    """The default model, the GlobalBias task through ``inspect eval`` as a user runs it, once in process and
    once with ``-M scorer_process=true``: the same per-text sums and token counts; the scorer process ran."""
    from inspect_ai import eval as inspect_eval

    from stereoprobe.likelihood import read_results

    args = {"source": "bundled", "groups": "ARAB", "templates": 1, "descriptors": [0, 1]}

    def run(log_dir: Path, **model_args: object) -> dict[str, tuple[float, int]]:
        [log] = inspect_eval("stereoprobe/globalbias", model="transformers/default", task_args=args,
                             model_args={"device": "cpu", **model_args}, display="none", log_dir=str(log_dir))
        assert log.status == "success", log.error
        return {f"{s.id}/{r.id}": (r.sum_logprob, r.n_tokens) for s in log.samples for sc in s.scores.values()
                for r in read_results(sc)}

    ours = run(tmp_path / "in_process")
    before = {p.pid for p in mp.active_children()}
    theirs = run(tmp_path / "scorer_process", scorer_process=True)
    assert any(p.name == "stereoprobe-scorer" and p.pid not in before for p in mp.active_children())
    assert ours and set(ours) == set(theirs)
    assert all(ours[k][1] == theirs[k][1] for k in ours)
    assert max(abs(ours[k][0] - theirs[k][0]) for k in ours) <= TOL * max(n for _, n in ours.values())


def test_the_process_gets_the_providers_cached_forward_choice(tiny_models) -> None:
    """``-M static_cache`` travels to the scorer process with the graph choice (it was dropped there: the
    process scored through transformers' dynamic cache whatever the provider was asked)."""
    from inspect_ai.model import get_model

    asked = get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False, scorer_process="true",
                      static_cache="true")
    spec = asked.api.scorer_process.spec  # type: ignore[attr-defined]
    assert spec.cached[0] is True and asked.api.scorer.cached is not None  # type: ignore[attr-defined]
    default = get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False, scorer_process="true")
    assert default.api.scorer_process.spec.cached[0] is False  # type: ignore[attr-defined]  (auto: no graphs on CPU)
