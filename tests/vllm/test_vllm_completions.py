"""The vLLM route: inspect's ``vllm-completions`` provider against a fake vLLM server on 127.0.0.1 gives the
likelihood tasks (GlobalBias, DBB log-probability mode, DBB-SG) the same per-text numbers as stereoprobe's
``transformers`` provider on the same weights.

inspect's provider (``inspect_ai/model/_providers/openai_compatible_completions.py``) sends
``prompt_logprobs`` in the request body (``extra_body``), reads vLLM's per-choice ``prompt_logprobs`` list
(``parse_vllm_prompt_logprobs_raw``: the first entry of each position is the prompt token), tokenizes through
``/tokenize`` (``add_special_tokens=False``) and sends token ids verbatim when a message carries
``metadata["prompt_token_ids"]``. The fake server (``tests/vllm/fake_server.py``) computes its numbers with a
plain forward pass, independently of the provider's batched scorer.
"""

from __future__ import annotations

import asyncio
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai", reason="inspect's vllm-completions provider needs the openai client (pip install openai)")

from stereoprobe.likelihood import ANSWER_LOGPROBS, RESULTS_KEY  # noqa: E402
from stereoprobe.solvers.capability import PROBE_TEXT  # noqa: E402
from fake_server import FakeVLLM  # noqa: E402  (tests/vllm has no __init__.py: a package named vllm would shadow the real one)

# the transformers provider applies a chat template before generating; vllm-completions sends the raw text:
# an identity template makes both send the same tokens for DBB's multiple-choice prompt
IDENTITY_TEMPLATE = "{{ messages[-1]['content'] }}"


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama (2 layers, width 32) with the bundled model's tokenizer and chat template."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from stereoprobe.providers.default_model import default_model_dir

    folder = tmp_path_factory.mktemp("tiny_llama_vllm")
    src = default_model_dir()
    for f in src.iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "chat_template")):
            shutil.copy(f, folder / f.name)
    tok = AutoTokenizer.from_pretrained(str(folder))
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, intermediate_size=64, max_position_embeddings=2048,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def server(tiny_llama: Path):
    from transformers import AutoTokenizer, LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(str(tiny_llama))
    with FakeVLLM(model, AutoTokenizer.from_pretrained(str(tiny_llama)), str(tiny_llama), lifetime=600) as srv:
        yield srv


def _close(a: Any, b: Any, path: str, diffs: list[str]) -> None:
    """Record where two score structures differ (numbers: 1e-4 absolute or 1e-6 relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            diffs.append(f"{path}: keys {sorted(a)} != {sorted(b)}")
        for k in set(a) & set(b):
            _close(a[k], b[k], f"{path}.{k}", diffs)
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            diffs.append(f"{path}: lengths {len(a)} != {len(b)}")
        for k, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{k}]", diffs)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if not (math.isnan(a) and math.isnan(b)) and not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-4):
            diffs.append(f"{path}: {a} != {b}")
    elif a != b:
        diffs.append(f"{path}: {a!r} != {b!r}")


def _run(task: str, task_args: dict[str, Any], model: str, log_dir: Path, **kw: Any) -> dict[tuple[Any, int], Any]:
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(task, model=model, task_args=task_args, display="none", log_dir=str(log_dir),
                         log_realtime=False, **kw)
    assert log.status == "success", log.error
    assert log.samples
    return {(s.id, s.epoch): s for s in log.samples}


def _top_logprobs(sample: Any) -> dict[str, list[tuple[str, float]]]:
    """Per model call of the sample (keyed by the prompt text): the answer token's top log-probabilities, the
    numbers DBB's logprob mode reads (samples may hold many calls, e.g. one per question of a template)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for ev in sample.events or []:
        if getattr(ev, "event", None) != "model" or ev.output is None or not ev.output.choices:
            continue
        grouped = ((ev.output.metadata or {}).get(RESULTS_KEY) or {}).get(ANSWER_LOGPROBS)
        if grouped is not None:  # the transformers provider's one request per template (issue 36.2)
            out.update(zip(_grouped_prompts(sample), ([tuple(p) for p in pairs[1:]] for pairs in grouped)))
            continue
        lp = ev.output.choices[0].logprobs
        text = ev.input[-1].text
        if text.startswith("attachment://"):  # a long prompt is stored once in the log, under its hash
            text = sample.attachments[text.removeprefix("attachment://")]
        if lp is not None and lp.content and text != PROBE_TEXT:  # the run's capability probe: not a question
            out[text] = [(t.token, t.logprob) for t in (lp.content[0].top_logprobs or [])]
    return out


def _grouped_prompts(sample: Any) -> list[str]:
    """The question texts of a grouped DBB logprob request, in the solver's order (question, then epoch)."""
    from stereoprobe.dbb import contract as C
    from stereoprobe.dbb.scoring import mcq_prompt

    md = sample.metadata
    out = []
    for q in md[C.META_MCQ_QUESTIONS]:
        for a_first in md[C.META_MCQ_RESULTS][q["id"]]["a_first"]:
            first, second = (q["option_a"], q["option_b"]) if a_first else (q["option_b"], q["option_a"])
            out.append(mcq_prompt(q["context"], first, second, md[C.META_MCQ_TEMPLATE]))
    return out


def _compare(task: str, task_args: dict[str, Any], folder: Path, srv: FakeVLLM, tmp_path: Path,
             transformers_args: dict[str, Any] | None = None) -> tuple[dict[Any, Any], list[dict[str, Any]]]:
    srv.requests.clear()
    ours = _run(task, task_args, f"transformers/{folder}", tmp_path / "t",
                model_args={"device": "cpu", **(transformers_args or {})})
    theirs = _run(task, task_args, f"vllm-completions/{folder}", tmp_path / "v", model_base_url=srv.base_url)
    assert set(ours) == set(theirs)
    diffs: list[str] = []
    for key, s in ours.items():
        o = theirs[key]
        _close({k: (v.value, v.metadata) for k, v in s.scores.items()},
               {k: (v.value, v.metadata) for k, v in o.scores.items()}, f"{key}", diffs)
        _close(_top_logprobs(s), _top_logprobs(o), f"{key}.top_logprobs", diffs)
    assert not diffs, "\n".join(diffs[:20])
    from stereoprobe.solvers.likelihood import PROBE_TEXT

    probes = [r for r in srv.requests if r.get("prompt") == PROBE_TEXT]  # the run's capability check
    assert len(probes) <= 1
    return ours, [r for r in srv.requests if r.get("prompt") != PROBE_TEXT]


def test_prompt_logprobs_round_trip(server: FakeVLLM, tiny_llama: Path) -> None:
    """One request: inspect parses the fake server's vLLM-format prompt_logprobs into the transformers
    provider's numbers, token by token."""
    from inspect_ai.model import GenerateConfig, get_model

    config = GenerateConfig(max_tokens=1, prompt_logprobs=1, temperature=0.0)
    text = "My name is Amira, I am good at maths."

    async def both() -> tuple[Any, Any]:
        v = get_model(f"vllm-completions/{tiny_llama}", base_url=server.base_url)
        t = get_model(f"transformers/{tiny_llama}", device="cpu")
        return await v.generate(text, config=config), await t.generate(text, config=config)

    server.requests.clear()
    v, t = asyncio.run(both())
    assert server.requests[-1]["prompt_logprobs"] == 1 and server.requests[-1]["prompt"] == text
    lv, lt = v.choices[0].prompt_logprobs.content, t.choices[0].prompt_logprobs.content
    assert [x.token for x in lv] == [x.token for x in lt]
    assert max(abs(a.logprob - b.logprob) for a, b in zip(lv, lt)) <= 1e-5


@pytest.mark.slow
def test_globalbias_same_sums(server: FakeVLLM, tiny_llama: Path, tmp_path: Path) -> None:
    args = {"source": "bundled", "groups": "ARAB", "templates": 1, "descriptors": [0, 1]}
    ours, requests = _compare("stereoprobe/globalbias", args, tiny_llama, server, tmp_path)
    texts = sum(len(next(iter(s.scores.values())).metadata["ids"]) for s in ours.values())
    # one /v1/completions request per sample (a prompt list), not one per text
    assert sum(len(r["prompt"]) for r in requests) == texts and len(requests) == len(ours)
    assert all(r["prompt_logprobs"] == 0 for r in requests)  # prefill-only (test_prefill_only_request)


@pytest.mark.slow
def test_dbb_sg_same_scores(server: FakeVLLM, tiny_llama: Path, tmp_path: Path) -> None:
    args = {"source": "bundled", "prompt": "stereoprobe", "limit_templates": 1, "categories": "age"}
    _, requests = _compare("stereoprobe/dbb_sg", args, tiny_llama, server, tmp_path)
    assert requests and all(r["prompt_logprobs"] == 0 for r in requests)


@pytest.mark.slow
def test_dbb_logprob_same_answers(server: FakeVLLM, tiny_llama: Path, tmp_path: Path) -> None:
    # the completions endpoint takes one raw prompt: the question without the system message
    args = {"source": "bundled", "prompt": "stereoprobe", "mode": "logprob", "limit_templates": 1, "categories": "age", "system_message": False}
    ours, requests = _compare("stereoprobe/dbb", args, tiny_llama, server, tmp_path,
                           transformers_args={"chat_template": IDENTITY_TEMPLATE})
    assert requests and all(r["logprobs"] == 20 and r["max_tokens"] == 1 for r in requests)
    tops = [t for s in ours.values() for t in _top_logprobs(s).values()]
    assert tops and all(len(t) == 20 for t in tops)  # the compared numbers exist


def test_prompt_list_scores_a_group_in_one_request(server: FakeVLLM, tiny_llama: Path) -> None:
    """stereoprobe.providers.vllm_batch: a group of texts in one /v1/completions request (a prompt list through
    extra_body) gives the per-text results of the transformers provider's grouped path."""
    from inspect_ai.model import get_model

    from stereoprobe.providers.vllm_batch import score_prompt_list, supports_prompt_list
    from stereoprobe.solvers.likelihood import SCORING_CONFIG, score_items

    names = ["Amira", "Bob", "Wei", "Olga", "Kofi"]
    items: list[dict[str, Any]] = [{"id": f"t{k}", "text": f"My name is {n}, I am good at maths."}
                                   for k, n in enumerate(names)]
    prompt = "Read the scene. Context: Amira arrived early."
    items += [{"id": "c0", "text": prompt + " She asked many questions.", "context": prompt},
              {"id": "c1", "text": prompt + " She left early.", "context": prompt + " "}]  # BPE: space joins "She"

    async def run() -> tuple[list[Any], list[Any]]:
        v = get_model(f"vllm-completions/{tiny_llama}", base_url=server.base_url)
        t = get_model(f"transformers/{tiny_llama}", device="cpu")
        assert supports_prompt_list(v) and not supports_prompt_list(t)
        return await score_prompt_list(v, items, SCORING_CONFIG, chunk=4), await score_items(items, t)

    server.requests.clear()
    got, ref = asyncio.run(run())
    completions = [r for r in server.requests if isinstance(r["prompt"], list) and isinstance(r["prompt"][0], str)]
    # two chunks, not 7 requests; they are sent concurrently, so their arrival order is not asserted
    assert len(completions) == 2 and sorted(len(r["prompt"]) for r in completions) == [3, 4]
    assert sorted(p for r in completions for p in r["prompt"]) == sorted(i["text"] for i in items)
    assert all(r is not None for r in got)
    for a, b in zip(got, ref):
        assert a.id == b.id and a.n_tokens == b.n_tokens and a.n_bytes == b.n_bytes and (a.error is None) == (b.error is None)
        if a.error is None:
            assert math.isclose(a.sum_logprob, b.sum_logprob, abs_tol=1e-4)
    assert got[-1].error and "prefix" in got[-1].error


PREFILL_REQUEST = {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 0, "top_p": 1.0, "top_k": -1,
                   "min_p": 0.0, "repetition_penalty": 1.0}
"""The body of a likelihood request on vllm-completions besides model and prompt: prefill-only (one sampled
token, the prompt tokens' own log-probabilities, no alternatives, no completion logprobs) plus vLLM's neutral
sampling values (stereoprobe.providers.vllm_neutral)."""


def test_prefill_only_request(server: FakeVLLM, tiny_llama: Path, tmp_path: Path) -> None:
    """GlobalBias on vllm-completions, the default path: every scoring request the server received, and the one
    the eval log records for it, is exactly PREFILL_REQUEST; each prompt position came back with the prompt
    token alone."""
    from inspect_ai import eval as inspect_eval

    server.requests.clear()
    [log] = inspect_eval("stereoprobe/globalbias", model=f"vllm-completions/{tiny_llama}",
                         task_args={"source": "bundled", "groups": "ARAB", "templates": 1, "descriptors": [0]},
                         model_base_url=server.base_url, display="none", log_dir=str(tmp_path), log_realtime=False)
    assert log.status == "success", log.error
    from stereoprobe.solvers.likelihood import PROBE_TEXT

    sent = [r for r in server.requests if r.get("prompt") != PROBE_TEXT]
    assert sent and all(isinstance(r["prompt"], list) for r in sent)
    for r in sent:
        assert {k: v for k, v in r.items() if k not in ("model", "prompt")} == PREFILL_REQUEST, r
    calls = [ev.call.request for s in log.samples for ev in s.events or []
             if getattr(ev, "event", None) == "model" and ev.call is not None
             and ev.call.request.get("prompt") != PROBE_TEXT]  # the capability probe, when this test runs first
    assert len(calls) == len(sent)
    for c in calls:  # what the log records as sent (the OpenAI client's kwargs; extra_body merged by the client)
        body = {**{k: v for k, v in c.items() if k not in ("model", "prompt", "extra_body", "extra_headers")},
                **c["extra_body"]}
        assert {k: v for k, v in body.items() if k != "prompt"} == PREFILL_REQUEST, c
    from stereoprobe.likelihood import read_results

    assert all(r.ok for s in log.samples for sc in s.scores.values() for r in read_results(sc))


def test_prefill_only_keeps_what_a_request_asks_for() -> None:
    """Only a request for the prompt tokens' own log-probabilities becomes prefill-only; top alternatives,
    completion log-probabilities, a request's own extra_body value and its max_tokens are kept."""
    from inspect_ai.model import GenerateConfig

    from stereoprobe.providers.vllm_batch import prefill_only
    from stereoprobe.solvers.likelihood import SCORING_CONFIG

    got = prefill_only(SCORING_CONFIG)
    assert (got.prompt_logprobs, got.extra_body, got.max_tokens, got.temperature) == (None, {"prompt_logprobs": 0},
                                                                                      1, 0.0)
    assert SCORING_CONFIG.prompt_logprobs == 1 and SCORING_CONFIG.extra_body is None  # not changed in place
    for kept in (GenerateConfig(prompt_logprobs=5), GenerateConfig(prompt_logprobs=1, logprobs=True),
                 GenerateConfig(prompt_logprobs=1, top_logprobs=3),
                 GenerateConfig(prompt_logprobs=1, extra_body={"prompt_logprobs": 2}), GenerateConfig()):
        assert prefill_only(kept) == kept
    assert prefill_only(GenerateConfig(prompt_logprobs=1, max_tokens=4)).max_tokens == 4
