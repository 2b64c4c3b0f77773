"""DBB inspect tasks on a fake model with a known answer distribution."""

from __future__ import annotations

import math

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from fake_model import fake_model, word_logprob
from stereoprobe.dbb import data as D
from stereoprobe.tasks.dbb import dbb, dbb_sg
from stereoprobe.solvers.capability import PROBE_TEXT

# the bundled demo templates with the fixed expansion (the defaults run the upstream benchmark)
BUNDLED = {"source": "bundled", "faithful": False, "prompt": "stereoprobe"}

P_GROUP = {"female": 0.8, "male": 0.3}


def _gender_maps():
    qs = D.expand(D.bundled_templates(), categories=["gender"])
    ctx_p = {q.context: P_GROUP[q.group] for q in qs}
    a_texts = {q.option_a for q in qs}
    return ctx_p, a_texts


def _run(task, model, **kw):
    [log] = inspect_eval(task, model=model, display="none", log_dir=kw.pop("log_dir"), log_realtime=False,
                         max_connections=64, **kw)
    assert log.status == "success", log.error
    return log


def _per_question(log):
    """P(A) per question from the log's per-epoch scores, computed here independently of stereoprobe.stats."""
    acc: dict[str, list[float]] = {}
    for s in log.samples:
        v = s.scores["dbb_mcq_scorer"].value
        a, valid = acc.setdefault(s.id, [0.0, 0.0]), v["valid"]
        a[0] += v["a"] * valid
        a[1] += valid
    return {k: 100 * a / n for k, (a, n) in acc.items() if n > 0}


def test_logprob_mode_exact_and_sampled_agree(tmp_path):
    ctx_p, a_texts = _gender_maps()
    m = lambda: fake_model(p_a=lambda c: ctx_p[c], is_a=lambda o: o in a_texts, seed=1)  # noqa: E731
    lp = _run(dbb(**BUNDLED, categories="gender", mode="logprob", epochs=1, option_order="random", unit="question"),
              m(),
              log_dir=str(tmp_path / "lp"))
    p_lp = _per_question(lp)
    assert len(p_lp) == 8 * 8
    for qid, p in p_lp.items():  # exact: the fake's probability, whatever order was shown
        assert p == pytest.approx(100 * P_GROUP[qid.split(":")[-1]], abs=1e-6)
    metrics = lp.results.scores[0].metrics
    assert metrics["count_s_ge_20"].value == 32  # S = 50 for all 8 templates x 4 types
    assert metrics["mean_s_biased"].value == pytest.approx(50.0)
    assert metrics["dbb_refusal_rate"].value == pytest.approx(0.0)

    sp = _run(dbb(**BUNDLED, categories="gender", mode="sampled", epochs=20, limit_templates=4), m(),
              log_dir=str(tmp_path / "sp"))
    p_sp = _per_question(sp)
    for g, p in P_GROUP.items():
        est = np.mean([v for k, v in p_sp.items() if k.endswith(":" + g)])
        # 16 questions x 20 draws: sd of the mean = 100*sqrt(p(1-p)/320) <= 2.8 points; allow ~3.5 sd
        assert est == pytest.approx(100 * p, abs=10.0)
    s_sp = [abs(p_sp[f"{t}:gender:{k}:female"] - p_sp[f"{t}:gender:{k}:male"])
            for t in [x.template_id for x in D.bundled_templates()[:4]] for k in range(1, 5)]
    assert np.mean(s_sp) == pytest.approx(50.0, abs=10.0)


def test_sampled_metrics_with_invalid_answers_match_per_epoch_computation(tmp_path):
    ctx_p, a_texts = _gender_maps()
    model = fake_model(p_a=lambda c: ctx_p[c], is_a=lambda o: o in a_texts, seed=3, invalid_rate=0.3)
    log = _run(dbb(**BUNDLED, categories="gender", mode="sampled", epochs=10, limit_templates=2), model,
               log_dir=str(tmp_path))
    p = _per_question(log)  # from the per-epoch scores, independently of the epoch-reduced metric path
    s = [abs(p[f"{t}:gender:{k}:female"] - p[f"{t}:gender:{k}:male"]) for t in ("sp01", "sp02") for k in range(1, 5)]
    biased = [x for x in s if x >= 20 - 1e-9]
    m = log.results.scores[0].metrics
    assert m["count_s_ge_20"].value == len(biased)
    assert m["mean_s_biased"].value == pytest.approx(np.mean(biased))
    n_invalid = sum(1 - smp.scores["dbb_mcq_scorer"].value["valid"] for smp in log.samples)
    assert m["dbb_refusal_rate"].value == pytest.approx(n_invalid / len(log.samples))
    assert 0.15 < m["dbb_refusal_rate"].value < 0.45


def test_option_order_randomisation_removes_position_bias(tmp_path):
    always_a = lambda: fake_model(always_first=True, seed=2)  # noqa: E731
    fixed = _run(dbb(**BUNDLED, categories="gender", mode="sampled", epochs=10, option_order="fixed",
                     limit_templates=2),
                 always_a(),
                 log_dir=str(tmp_path / "f"))
    assert set(_per_question(fixed).values()) == {100.0}  # without shuffling: pure position bias
    rnd = _run(dbb(**BUNDLED, categories="gender", mode="sampled", epochs=10, limit_templates=4,
                   option_order="random"), always_a(), log_dir=str(tmp_path / "r"))
    vals = list(_per_question(rnd).values())
    # 32 questions x 10 epochs of fair coins: overall share of A = 50 +- 2.8 (1 sd)
    assert np.mean(vals) == pytest.approx(50.0, abs=10.0)
    # counterbalanced order in logprob mode: exactly one half per question, so S = 0 everywhere
    bal = _run(dbb(**BUNDLED, categories="gender", mode="logprob", limit_templates=4, unit="question"),  # balanced
               always_a(),
               log_dir=str(tmp_path / "b"))
    assert all(v == pytest.approx(50.0) for v in _per_question(bal).values())
    assert bal.results.scores[0].metrics["count_s_ge_20"].value == 0


def test_sampled_mode_counts_invalid_answers(tmp_path):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def out(*_):
        o = ModelOutput.from_content("mockllm/model", "I would rather not choose.")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    model = get_model("mockllm/model", custom_outputs=out)
    log = _run(dbb(**BUNDLED, categories="ses", mode="sampled", epochs=10, limit_templates=1), model,
               log_dir=str(tmp_path))
    m = log.results.scores[0].metrics
    assert m["dbb_refusal_rate"].value == pytest.approx(1.0)
    assert m["n_instances"].value == 0 and m["count_s_ge_20"].value == 0  # no defined S
    # no biased instance: the mean S is undefined, left out of the results (and the console) instead of nan
    assert "mean_s_biased" not in m and not any(math.isnan(x.value) for x in m.values())


def test_logprob_mode_clear_error_without_logprobs(tmp_path):
    [log] = inspect_eval(dbb(**BUNDLED, categories="ses", limit_templates=1, mode="logprob"),
                         model=fake_model(always_first=True, no_logprobs=True), display="none", log_dir=str(tmp_path))
    assert log.status == "error"
    assert "returns no token log-probabilities" in str(log.error)


def test_sampled_mode_needs_ten_epochs():
    with pytest.raises(ValueError, match="at least 10"):
        dbb(**BUNDLED, mode="sampled", epochs=3)


def test_sg_eq2_against_hand_computation(tmp_path):
    log = _run(dbb_sg(**BUNDLED, scoring="raw", unit="question", categories="ses", templates="sp01"), fake_model(),
               log_dir=str(tmp_path))
    assert len(log.samples) == 4
    for s in log.samples:
        md = s.metadata
        ratios = []
        for a, b in md["sg_options"]:
            nll_a = np.mean([-word_logprob(w) for w in a.split()])
            nll_b = np.mean([-word_logprob(w) for w in b.split()])
            r_a, r_b = 1 / math.exp(nll_a), 1 / math.exp(nll_b)  # 1/PPL
            ratios.append(r_a / (r_a + r_b))
        assert len(ratios) == 3
        assert s.scores["dbb_sg_scorer"].value["a"] == pytest.approx(np.mean(ratios), rel=1e-9)


def test_defaults_are_the_papers_sampled_protocol():
    """Faithful defaults (paper §3.3, §5, Appendix A): sampled answers, 10 epochs, temperature 0.8, top_p 1,
    frequency penalty 0.6, 2,048 tokens, no top-k, option A (the first concept) always shown first."""
    task = dbb(**BUNDLED, categories="ses", limit_templates=1)
    assert task.epochs == 10
    c = task.config
    assert (c.temperature, c.top_p, c.frequency_penalty, c.max_tokens, c.top_k) == (0.8, 1.0, 0.6, 2048, None)
    assert c.logprobs is None and task.metadata["mode"] == "sampled" and task.metadata["option_order"] == "fixed"
    assert dbb(**BUNDLED, categories="ses", limit_templates=1, top_k=50).config.top_k == 50


# upstream getOutput's system message; the instruction here is our own wording (-T prompt=stereoprobe: these tests
# need no upstream file); the default's upstream instruction is checked in tests/conformance/test_dbb.py
UPSTREAM_SYSTEM = "You are a useful assistant."


def _own_instruction() -> str:
    from stereoprobe.dbb.scoring import prompts

    return prompts("stereoprobe")["mcq"]["instruction"]


@pytest.mark.parametrize(("mode", "unit"), [("sampled", "question"), ("logprob", "question"),
                                          ("logprob", "template")])
def test_mcq_conversation_is_upstreams_with_option_a_first(tmp_path, mode, unit):
    """Every request: upstream's system message, then the instruction (-T prompt) with the scene and the two
    options, option A as "a)" (sampled default order, paper §3.3; logprob mode with option_order=fixed)."""
    from inspect_ai.model import Logprob, Logprobs, ModelOutput, ModelUsage, TopLogprob, get_model

    seen: list[list] = []

    def answer(messages, *_):
        if messages[-1].text != PROBE_TEXT:  # the run's capability probe (one request) is not a question
            seen.append(list(messages))
        o = ModelOutput.from_content("mockllm/model", "a) yes")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        top = [TopLogprob(token="a", logprob=-0.1), TopLogprob(token="b", logprob=-2.3)]
        o.choices[0].logprobs = Logprobs(content=[Logprob(token="a", logprob=-0.1, top_logprobs=top)])
        return o

    qs = D.expand(D.bundled_templates(), categories=["ses"])[:4]
    epochs = 10 if mode == "sampled" else 2
    kw = {} if mode == "sampled" else {"option_order": "fixed", "epochs": epochs}
    _run(dbb(**BUNDLED, categories="ses", limit_templates=1, mode=mode, unit=unit, **kw),
         get_model("mockllm/model", custom_outputs=answer), log_dir=str(tmp_path))
    assert len(seen) == 4 * epochs
    for messages in seen:
        assert [m.role for m in messages] == ["system", "user"]
        assert messages[0].text == UPSTREAM_SYSTEM
        user = messages[1].text
        assert user.startswith(_own_instruction() + "\n\nContext: ")
        [q] = [q for q in qs if f"Context: {q.context}\n" in user]
        assert user.endswith(f"a) {q.option_a}\nb) {q.option_b}")


@pytest.mark.parametrize("unit", ["question", "template"])
def test_system_message_false_sends_the_question_alone(tmp_path, unit):
    """-T system_message=false (completion-only endpoints): one user message, the same question."""
    from inspect_ai.model import Logprob, Logprobs, ModelOutput, ModelUsage, TopLogprob, get_model

    seen: list[list] = []

    def answer(messages, *_):
        if messages[-1].text != PROBE_TEXT:  # the run's capability probe (one request) is not a question
            seen.append(list(messages))
        o = ModelOutput.from_content("mockllm/model", "a")
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting (offline)
        top = [TopLogprob(token="a", logprob=-0.1), TopLogprob(token="b", logprob=-2.3)]
        o.choices[0].logprobs = Logprobs(content=[Logprob(token="a", logprob=-0.1, top_logprobs=top)])
        return o

    task = dbb(**BUNDLED, categories="ses", limit_templates=1, mode="logprob", unit=unit, system_message=False)
    assert task.metadata["system_message"] is False
    _run(task, get_model("mockllm/model", custom_outputs=answer), log_dir=str(tmp_path))
    assert seen and all([m.role for m in messages] == ["user"] for messages in seen)
    assert all(messages[0].text.startswith(_own_instruction()) for messages in seen)


@pytest.mark.refdata
def test_defaults_run_the_upstream_benchmark(refdata, monkeypatch):
    """Defaults (issue: the paper's benchmark by default): source=upstream, faithful expansion, 77,350
    questions (paper Table 5: 1,547 templates x 50 questions); DBB-SG on the same upstream templates."""
    from stereoprobe.dbb.published import UPSTREAM_DATASET
    from stereoprobe.upstream import UpstreamDataError

    monkeypatch.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
    names = variations = None
    if not (refdata / "Hidden-Bias-Benchmark" / UPSTREAM_DATASET).is_file():
        # the reference copies lack upstream's published dataset (>= 4 MB): the default says so and how to go on
        with pytest.raises(UpstreamDataError, match="names=draw"):
            dbb()
        names = "draw"
    if not (refdata / "Hidden-Bias-Benchmark" / D.UPSTREAM_VARIATIONS).is_file():
        with pytest.raises(UpstreamDataError, match="variations=own"):
            dbb_sg(limit_templates=2, names="draw")
        variations = "own"
    task = dbb(names=names)
    assert len(task.dataset) == 77_350
    assert task.metadata["source"] == "upstream" and task.metadata["faithful"] is True
    assert task.metadata["names"] == (names or "published")
    sg = dbb_sg(limit_templates=2, names=names, variations=variations)
    assert len(sg.dataset) == 2 and sg.metadata["scoring"] == "chat"  # one sample per template (unit=template)
    assert sum(len(s.metadata["sg_questions"]) for s in sg.dataset) == 100
    n_var = {len(q["options"]) for s in sg.dataset for q in s.metadata["sg_questions"]}
    assert n_var == ({1} if variations else {10})  # paper Eq. 2: n = 10


def test_upstream_offline_error_names_the_ways_out(tmp_path, monkeypatch):
    from stereoprobe.upstream import UpstreamDataError

    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    with pytest.raises(UpstreamDataError, match="STEREOPROBE_UPSTREAM_DIR") as e:
        dbb()
    assert "-T source=" in str(e.value) and "\n" not in str(e.value)


def test_default_prompt_offline_names_the_own_wording_option(tmp_path, monkeypatch):
    """The default instruction is upstream's file (issue 27 §3): without it offline, one line naming
    -T prompt=stereoprobe; with that option no upstream file is read."""
    from stereoprobe.upstream import UpstreamDataError

    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    for build in (dbb, dbb_sg):
        with pytest.raises(UpstreamDataError) as e:
            build(source="bundled", categories="ses", limit_templates=1)
        msg = str(e.value)
        assert "-T prompt=stereoprobe" in msg and "src/prompt_instructions/" in msg and "\n" not in msg
        assert build(**BUNDLED, categories="ses", limit_templates=1).metadata["prompt"] == "stereoprobe"
    with pytest.raises(D.DBBDataError, match="prompt"):
        dbb(source="bundled", prompt="paper")


@pytest.mark.refdata
def test_prompt_file_holds_no_upstream_wording(refdata):
    """datasets/dbb/prompts.yaml holds our wording only: no line of upstream's instruction files is in it, and
    our own instructions share no sentence with them."""
    from stereoprobe.paths import dataset_file

    ours = dataset_file("dbb", "prompts.yaml").read_text(encoding="utf-8")
    for name in ("evaluate_probs.txt", "evaluate_perplexity.txt"):
        path = refdata / "Hidden-Bias-Benchmark" / "src" / "prompt_instructions" / name
        if not path.is_file():
            pytest.skip(f"no upstream copy of {name}")
        for line in path.read_text(encoding="utf-8").splitlines():
            for sentence in filter(None, (s.strip() for s in line.split(". "))):
                assert len(sentence) < 25 or sentence not in ours, (name, sentence)
