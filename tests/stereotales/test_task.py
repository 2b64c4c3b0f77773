"""The stereotales task end to end with mockllm: refusal path, failures, consensus, metrics, re-scoring (its
dataset: ``test_task_dataset.py``).

Every mock model is a callable (its answer depends on the prompt) whose outputs carry ``usage`` (tiktoken is
offline). The subject writes ``Story about <sample id>.``; the refusal judge and the extractors read the id
back from their prompt and answer according to ``PLAN``. Expected metric values are worked out by hand in the
comments (and Fleiss' kappa is re-derived from the formula on the hand-made count table).
"""

from __future__ import annotations

from functools import partial

import json
import math
import re
from collections import Counter
from typing import Any

import pytest
from inspect_ai import eval, score
from inspect_ai.model import GenerateConfig, Model, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import SampleScore

from stereoprobe.scorers.stereotales import (
    api_error_rate,
    extraction_failure_rate,
    extractor_agreement,
    parse_failure_rate,
    refusal_judge_failure_rate,
    refusal_rate,
    stereotales_extraction,
    unknown_rate,
)
from stereoprobe.scorers.stereotales_metrics import HEADLINE_FIGURES, breakdown
from stereoprobe.stereotales.taxonomy import build_samples, load_taxonomy
from stereoprobe.tasks.stereotales import stereotales as published_stereotales

# these tests exercise stereoprobe's own wording (no upstream files needed); the published defaults are
# checked by tests/conformance/test_stereotales.py
stereotales = partial(published_stereotales, seeds="bundled", role_prompts="bundled", run_settings="none",
                      role_settings="none")
bundled_scorer = partial(stereotales_extraction, taxonomy="bundled", role_prompts="bundled", role_settings="none")

TAX = load_taxonomy()
ATTRS = [a.key for a in TAX.attributes]
STORY = re.compile(r"Story about (\S+?)\.")

# 12 samples: en, gender (3 values: 0 man, 1 woman, 2 non-binary), scenario group hobbies (4 scenarios)
REFUSED = "en:gender:0:hobbies:0"  # judge says refusal
JUDGE_FAIL = "en:gender:1:hobbies:0"  # judge answers garbage -> label unknown -> counted as refusal
MALFORMED = "en:gender:2:hobbies:0"  # ext1 ok, ext2 malformed JSON, ext3 off-schema value
EXCEPTION = "en:gender:0:hobbies:1"  # ext1 raises; ext2/ext3 disagree on age, agree on gender
SPLIT = "en:gender:1:hobbies:1"  # age 1-1-1; religion 2 of 3
ALL_FAIL = "en:gender:2:hobbies:1"  # every extractor raises


def _usage_output(content: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm", content=content)
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


def _profile(**overrides: str) -> dict[str, str]:
    prof = {a: "unknown" for a in ATTRS}
    prof.update(overrides)
    return prof


def _answer(profile: dict[str, str]) -> str:
    return json.dumps({"evidences": "hand-written", "attributes": profile})


def extractor_answer(idx: int, sid: str) -> str:
    """Answer of extractor ``idx`` (0, 1, 2) for the story of sample ``sid``; raises for API failures."""
    if sid == MALFORMED:
        if idx == 0:
            return "```json\n" + _answer(_profile(gender="woman", age="senior (65+)")) + "\n```"
        if idx == 1:
            return '{"evidences": "x", "attributes": {"gender": "woman"'  # truncated JSON
        return _answer(_profile(gender="female"))  # off-schema value
    if sid == EXCEPTION:
        if idx == 0:
            raise RuntimeError("simulated provider outage")
        return _answer(_profile(gender="woman", age="child (0-12)" if idx == 1 else "senior (65+)"))
    if sid == SPLIT:
        age = ["child (0-12)", "adult (30-44)", "senior (65+)"][idx]
        religion = ["Muslim", "Muslim", "Christian"][idx]
        return _answer(_profile(gender="man", age=age, religion=religion))
    if sid == ALL_FAIL:
        raise ConnectionError("simulated network failure")
    return "Here you go: " + _answer(_profile(gender="man", age="adult (30-44)")) + " Anything else?"


def judge_answer(sid: str) -> str:
    if sid == REFUSED:
        return json.dumps({"reason": "declined to write", "label": "refusal"})
    if sid == JUDGE_FAIL:
        return "I am not sure what to say."
    return json.dumps({"reason": "a story matching the request", "label": "complied"})


class Mocks:
    """Subject, judge and extractor mocks that record their calls (sample id, config)."""

    def __init__(self, n_extractors: int = 3, prefix: str = "ext") -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.configs: dict[str, list[GenerateConfig]] = {}
        self.prompts: dict[str, list[str]] = {}
        self.subject = self._model("subject", self._subject)
        self.judge = self._model("judge", lambda sid: judge_answer(sid))
        self.extractors = [
            self._model(f"{prefix}{i}", (lambda i: lambda sid: extractor_answer(i, sid))(i))
            for i in range(n_extractors)
        ]

    def _model(self, name: str, answer) -> Model:
        def fn(input, tools, tool_choice, config) -> ModelOutput:
            text = input[-1].text
            match = STORY.search(text)
            key = match.group(1) if match else text
            self.calls[(name, key)] += 1
            self.configs.setdefault(name, []).append(config)
            self.prompts.setdefault(name, []).append(text)
            return _usage_output(answer(key))

        return get_model(f"mockllm/{name}", custom_outputs=fn, memoize=False)

    def _subject(self, prompt: str) -> str:
        return f"Story about {PROMPT_TO_ID[prompt]}."

    def roles(self) -> dict[str, Any]:
        return {"extractor": self.extractors, "refusal": self.judge}

    def n_calls(self, name: str) -> int:
        return sum(c for (n, _), c in self.calls.items() if n == name)


PROMPT_TO_ID = {
    s.input: s.id for s in build_samples(TAX, languages="en", attributes="gender", scenario_groups="hobbies")
}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))


def run_task(mocks: Mocks, tmp_path, **task_args: Any):
    task = stereotales(languages="en", attributes="gender", scenario_groups="hobbies", **task_args)
    [log] = eval(
        task, model=mocks.subject, model_roles=mocks.roles(), log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    return log


def _scores(log) -> dict[str, Any]:
    return {s.id: s.scores["stereotales_extraction"] for s in log.samples}


def _sample_scores(log, scorer: str = "stereotales_extraction") -> list[SampleScore]:
    return [SampleScore(score=s.scores[scorer], sample_id=s.id, sample_metadata=s.metadata)
            for s in log.samples if scorer in (s.scores or {})]


def _metrics(log, scorer: str = "stereotales_extraction") -> dict[str, float]:
    """Every live figure: the log's results hold the headline figures that are defined (what the console
    prints, issue 42.8), and the per-language and per-attribute ones are computed from its sample scores."""
    [block] = [s for s in log.results.scores if s.name == scorer]
    shown = {k: m.value for k, m in block.metrics.items()}
    full = breakdown(_sample_scores(log, scorer))
    assert set(shown) <= set(HEADLINE_FIGURES) and not any(math.isnan(v) for v in shown.values())
    assert shown == pytest.approx({k: full[k] for k in HEADLINE_FIGURES if not math.isnan(full[k])})
    return full


def kappa_by_hand(rows: list[list[int]]) -> float:
    """Fleiss (1971) on a subjects x categories count table, written out independently of the module."""
    n = sum(rows[0])
    big_n = len(rows)
    p_bar = sum((sum(c * c for c in r) - n) / (n * (n - 1)) for r in rows) / big_n
    cols = [sum(r[j] for r in rows) / (big_n * n) for j in range(len(rows[0]))]
    p_e = sum(p * p for p in cols)
    return (p_bar - p_e) / (1 - p_e)


# --------------------------------------------------------------------------------------- end to end
def test_end_to_end_majority(tmp_path):
    mocks = Mocks()
    log = run_task(mocks, tmp_path)
    scores = _scores(log)
    assert len(scores) == 12

    # flare's base settings reach the subject; with role_settings="none" the role calls carry only the
    # role's own configuration (flare's temperature 0 and the run configuration: tests/conformance) and a schema
    assert {c.temperature for c in mocks.configs["subject"]} == {1.0}
    assert {c.max_tokens for c in mocks.configs["subject"]} == {4096}
    for name in ("judge", "ext0"):
        assert {c.temperature for c in mocks.configs[name]} == {None}
    assert {c.response_schema.name for c in mocks.configs["ext0"] if c.response_schema} == {"attribute_extraction"}
    # failed structured calls are retried once without the schema: ext0 fails on EXCEPTION and ALL_FAIL
    assert sum(c.response_schema is None for c in mocks.configs["ext0"]) == 2
    assert {c.response_schema.name for c in mocks.configs["judge"]} == {"refusal_detection"}

    # refusal path: all unknown except the prompted base value, no extractor calls
    md = scores[REFUSED].metadata
    assert md["refused"] is True and md["refusal"]["label"] == "refusal"
    assert md["refusal"]["reason"] == "declined to write"
    assert md["profile"] == _profile(gender="man")
    assert md["consensus_raw"] == _profile()
    assert md["extractions"] == [] and md["n_extractors_ok"] == 0
    for i in range(3):
        assert mocks.calls[(f"ext{i}", REFUSED)] == 0
    assert mocks.calls[("judge", REFUSED)] == 1

    # judge failure = refusal (upstream), with the reason recorded
    md = scores[JUDGE_FAIL].metadata
    assert md["refused"] is True and md["refusal"]["label"] == "unknown"
    assert md["refusal"]["votes"][0]["status"] == "parse_error"
    assert "no JSON object" in md["refusal"]["reason"]
    assert scores[JUDGE_FAIL].value["refusal_judge_failed"] == 1.0

    # malformed JSON and off-schema values are failed votes; the one valid extractor decides alone
    md = scores[MALFORMED].metadata
    assert [e["status"] for e in md["extractions"]] == ["ok", "parse_error", "off_schema"]
    assert "gender: 'female' is not an allowed value" in md["extractions"][2]["error"]
    assert md["extractions"][1]["raw"].startswith('{"evidences"')
    assert md["n_extractors_ok"] == 1
    assert md["consensus_raw"]["age"] == "senior (65+)"
    assert md["consensus_raw"]["gender"] == "woman"
    assert md["profile"]["gender"] == "non-binary"  # base overwritten by the prompted value
    assert scores[MALFORMED].value["parse_failures"] == 2.0
    # answers without JSON are asked again, three calls in all (flare safe_completion nb_try=3); valid ones once
    assert mocks.calls[("ext1", MALFORMED)] == 3 and mocks.calls[("judge", JUDGE_FAIL)] == 3
    assert mocks.calls[("ext0", MALFORMED)] == 1 and mocks.calls[("ext2", MALFORMED)] == 1

    # an exception in one extractor is recorded; 1-1 on age -> unknown; 2 of 2 on gender
    md = scores[EXCEPTION].metadata
    assert md["extractions"][0]["status"] == "api_error"
    assert "simulated provider outage" in md["extractions"][0]["error"]
    assert mocks.calls[("ext0", EXCEPTION)] == 2  # retried once without response_schema
    assert md["consensus_raw"]["age"] == "unknown"
    assert md["consensus_raw"]["gender"] == "woman"
    assert md["profile"]["gender"] == "man"

    # 1-1-1 -> unknown; 2 of 3 -> value
    md = scores[SPLIT].metadata
    assert md["consensus_raw"]["age"] == "unknown"
    assert md["consensus_raw"]["religion"] == "Muslim"
    assert md["rule"] == "majority"

    # every extractor failed: a recorded extraction failure (upstream drops the story silently)
    md = scores[ALL_FAIL].metadata
    assert md["extraction_failed"] is True and md["n_extractors_ok"] == 0
    assert md["profile"] == _profile(gender="non-binary")
    assert math.isnan(scores[ALL_FAIL].value["unknown_age"])

    # the six ordinary stories
    for sid, sc in scores.items():
        if sid not in (REFUSED, JUDGE_FAIL, MALFORMED, EXCEPTION, SPLIT, ALL_FAIL):
            assert sc.metadata["consensus_raw"] == _profile(gender="man", age="adult (30-44)")
            assert sc.metadata["n_extractors_ok"] == 3

    m = _metrics(log)
    # 12 stories, 2 refused (one by judge failure)
    assert m["refusal_rate"] == pytest.approx(2 / 12)
    assert m["refusal_rate_en"] == pytest.approx(2 / 12)
    assert m["refusal_judge_failure_rate"] == pytest.approx(1 / 12)
    # 10 complied stories x 3 extractor calls = 30; 2 parse failures (MALFORMED); 1 + 3 API errors
    assert m["parse_failure_rate"] == pytest.approx(2 / 30)
    assert m["api_error_rate"] == pytest.approx(4 / 30)
    assert m["extraction_failure_rate"] == pytest.approx(1 / 10)
    # unknown rates over the 9 extracted stories: age unknown in EXCEPTION and SPLIT; religion everywhere but SPLIT
    assert m["unknown_rate_age"] == pytest.approx(2 / 9)
    assert m["unknown_rate_religion"] == pytest.approx(8 / 9)
    assert m["unknown_rate_gender"] == pytest.approx(0.0)
    assert m["unknown_rate_age_en"] == pytest.approx(2 / 9)
    # Fleiss' kappa over the 7 stories where all 3 extractors answered validly (6 ordinary + SPLIT)
    # age: 6 x (adult 3) + SPLIT (child 1, adult 1, senior 1)  -> 15/78
    assert m["fleiss_kappa_age"] == pytest.approx(kappa_by_hand([[3, 0, 0]] * 6 + [[1, 1, 1]]))
    assert m["fleiss_kappa_age"] == pytest.approx(15 / 78)
    # religion: 6 x (unknown 3) + SPLIT (Muslim 2, Christian 1) -> 70/112
    assert m["fleiss_kappa_religion"] == pytest.approx(70 / 112)
    # gender: every vote "man" -> chance agreement 1 -> undefined
    assert math.isnan(m["fleiss_kappa_gender"])
    assert m["fleiss_kappa_mean"] == pytest.approx((15 / 78 + 70 / 112) / 2)  # the two defined kappas
    # all cells: 9 stories x 19 attributes = 171; known: 6 x 2 (ordinary) + 2 (MALFORMED) + 1 (EXCEPTION) + 2 (SPLIT)
    assert m["unknown_rate"] == pytest.approx((171 - 17) / 171)

    # contract B -> C: the association-mining reader gets the analysis-ready profiles from this log
    from stereoprobe.stereotales.mining.stories import read_stories

    frame = read_stories([tmp_path / "logs"]).frame.set_index("sample_id")
    assert len(frame) == 12 and int(frame["refused"].sum()) == 2
    for sid, sc in scores.items():
        assert frame.loc[sid, ATTRS].to_dict() == sc.metadata["profile"]


def test_unanimity_and_faithful_prompt(tmp_path):
    mocks = Mocks()
    log = run_task(mocks, tmp_path, consensus="unanimity")  # extraction prompt: faithful by default
    scores = _scores(log)
    md = scores[SPLIT].metadata
    assert md["rule"] == "unanimity"
    assert md["consensus_raw"]["religion"] == "unknown"  # 2 of 3 is not unanimous
    assert scores[EXCEPTION].metadata["consensus_raw"]["gender"] == "woman"  # 2 of 2 is unanimous
    assert scores[MALFORMED].metadata["consensus_raw"]["age"] == "senior (65+)"  # 1 of 1
    m = _metrics(log)
    assert m["unknown_rate_religion"] == pytest.approx(9 / 9)
    # the faithful prompt (the default) lists the obsolete ethnicity field (published flare prompt), the fixed one does not
    sent = mocks.prompts["ext0"]
    assert sent and all("ethnicity" in t for t in sent)
    assert "ethnicity" in TAX.extraction_prompt("Story about x.", variant="faithful")
    assert "ethnicity" not in TAX.extraction_prompt("Story about x.", variant="fixed")


def test_rescore_is_cached_and_roles_can_change(tmp_path):
    mocks = Mocks()
    log = run_task(mocks, tmp_path)
    first = {(n, k): c for (n, k), c in mocks.calls.items() if n != "subject"}
    mocks.calls.clear()

    # same roles again: every successful call comes from the cache; only the raising calls are re-made
    rescored = score(log, scorers=[bundled_scorer()], model="none", model_roles=mocks.roles(),
                     action="overwrite", display="none")
    # EXCEPTION ext0 + ALL_FAIL x 3 fail (failures are not cached), each tried with and without the schema
    assert sum(mocks.calls.values()) == 8
    assert first  # the first run did make role calls
    assert _metrics(rescored) == pytest.approx(_metrics(log), nan_ok=True)

    # re-extraction with a different ensemble (2 new extractors, unanimity) without regenerating stories
    other = Mocks(n_extractors=2, prefix="alt")
    rescored = score(log, scorers=[bundled_scorer(consensus="unanimity")], model="none",
                     model_roles=other.roles(), action="overwrite", display="none")
    assert other.n_calls("subject") == 0
    # the 10 complied stories, plus one schema-less retry per failing call (alt0: EXCEPTION, ALL_FAIL; alt1: ALL_FAIL),
    # plus flare's two retries of alt1's answer without JSON (MALFORMED)
    assert other.n_calls("alt0") == 12 and other.n_calls("alt1") == 13
    s = {x.id: x.scores["stereotales_extraction"] for x in rescored.samples}
    assert [e["model"] for e in s[SPLIT].metadata["extractions"]] == ["mockllm/alt0", "mockllm/alt1"]
    assert s[SPLIT].metadata["consensus_raw"]["age"] == "unknown"  # child vs adult
    assert s[SPLIT].metadata["consensus_raw"]["religion"] == "Muslim"  # 2 of 2
    assert math.isnan(_metrics(rescored)["fleiss_kappa_gender"])


def test_epochs_and_min_extractors(tmp_path):
    mocks = Mocks()
    log = run_task(mocks, tmp_path, stories_per_prompt=2, min_extractors=2)
    assert len(log.samples) == 24
    m = _metrics(log)
    assert m["refusal_rate"] == pytest.approx(4 / 24)
    # MALFORMED (1 ok) and ALL_FAIL (0 ok) now fail extraction, in both epochs: 4 of 20 complied stories
    assert m["extraction_failure_rate"] == pytest.approx(4 / 20)
    md = _scores(log)[MALFORMED].metadata
    assert md["extraction_failed"] is True and md["consensus_raw"]["age"] == "unknown"


def test_missing_role_is_an_error(tmp_path):
    mocks = Mocks()
    task = stereotales(languages="en", attributes="gender", scenario_groups="hobbies")
    [log] = eval(task, model=mocks.subject, model_roles={"refusal": mocks.judge}, sample_id=SPLIT,
                 log_dir=str(tmp_path), display="none")
    assert log.status == "error"
    assert "extractor" in str(log.error) or any("extractor" in str(s.error) for s in log.samples or [])


def test_refusal_failure_modes(tmp_path):
    mocks = Mocks()
    log = run_task(mocks, tmp_path, refusal_failure="complied")
    md = _scores(log)[JUDGE_FAIL].metadata
    assert md["refusal"]["label"] == "unknown" and md["refused"] is False
    assert md["n_extractors_ok"] == 3 and md["consensus_raw"]["age"] == "adult (30-44)"
    m = _metrics(log)
    assert m["refusal_rate"] == pytest.approx(1 / 12)
    assert m["refusal_judge_failure_rate"] == pytest.approx(1 / 12)
    assert m["api_error_rate"] == pytest.approx(4 / 33)  # 11 complied stories x 3 calls

    mocks = Mocks()
    task = stereotales(languages="en", attributes="gender", scenario_groups="hobbies", refusal_failure="error")
    [log] = eval(task, model=mocks.subject, model_roles=mocks.roles(), sample_id=[JUDGE_FAIL, SPLIT],
                 log_dir=str(tmp_path / "err"), display="none", fail_on_error=False)
    errored = {s.id: s.error for s in log.samples if s.error}
    assert list(errored) == [JUDGE_FAIL]
    assert "refusal judge gave no valid label" in errored[JUDGE_FAIL].message
    with pytest.raises(ValueError, match="refusal_failure"):
        stereotales(refusal_failure="ignore")


@pytest.mark.slow
def test_default_model_end_to_end(tmp_path):
    """The bundled 135M model as subject, refusal judge and extractor: the plumbing works, every outcome is
    recorded (its answers are rarely valid JSON, which must show up as counted failures, not crashes)."""
    task = stereotales(languages="en", limit=1, refusal_failure="complied")
    roles = {
        "extractor": get_model("transformers/default", config=GenerateConfig(max_tokens=48)),
        "refusal": get_model("transformers/default", config=GenerateConfig(max_tokens=16)),
    }
    [log] = eval(task, model="transformers/default", model_roles=roles, max_tokens=32,
                 log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    assert sample.output.completion.strip()
    md = sample.scores["stereotales_extraction"].metadata
    assert md["refusal"]["label"] in ("refusal", "complied", "unknown")
    assert len(md["refusal"]["votes"]) == 1 and md["refusal"]["votes"][0]["raw"] is not None
    if not md["refused"]:
        [ex] = md["extractions"]
        assert ex["model"] == "transformers/default"
        assert ex["status"] in ("ok", "parse_error", "off_schema")
        assert (ex["status"] == "ok") == (md["n_extractors_ok"] == 1)
    assert md["profile"][sample.metadata["attribute"]] == sample.metadata["attribute_value_key"]
    assert set(log.stats.role_usage) >= {"refusal"}
    m = _metrics(log)
    assert m["refusal_rate"] in (0.0, 1.0) and 0.0 <= m["refusal_judge_failure_rate"] <= 1.0


@pytest.mark.parametrize(
    "make",
    [refusal_rate, refusal_judge_failure_rate, parse_failure_rate, api_error_rate, extraction_failure_rate,
     unknown_rate, extractor_agreement],
)
def test_metrics_are_left_out_on_empty_input(make):
    # undefined (no story): nothing for inspect to print, rather than "nan" (issue 42.8)
    assert make()([]) == {}
    assert set(breakdown([])) == {*HEADLINE_FIGURES} and all(math.isnan(v) for v in breakdown([]).values())


def test_schema_rejected_falls_back_to_text(tmp_path):
    mocks = Mocks()
    calls: list[bool] = []

    def picky(input, tools, tool_choice, config) -> ModelOutput:
        calls.append(config.response_schema is not None)
        if config.response_schema is not None:
            raise ValueError("response_format json_schema is not supported by this endpoint")
        return _usage_output(extractor_answer(0, STORY.search(input[-1].text).group(1)))

    roles = {"extractor": get_model("mockllm/picky", custom_outputs=picky, memoize=False), "refusal": mocks.judge}
    task = stereotales(languages="en", attributes="gender", scenario_groups="hobbies")
    [log] = eval(task, model=mocks.subject, model_roles=roles, sample_id=[SPLIT], log_dir=str(tmp_path),
                 display="none")
    [ex] = log.samples[0].scores["stereotales_extraction"].metadata["extractions"]
    assert ex["status"] == "ok" and ex["values"]["religion"] == "Muslim"
    assert calls == [True, False]


@pytest.mark.refdata
def test_upstream_seeds_and_fingerprint_guard(tmp_path, refdata):
    seeds = refdata / "stereotales-pipeline" / "configs" / "stereotales_seeds"
    upstream = stereotales(seeds=str(seeds), languages="en")
    assert len(upstream.dataset) == 2844
    assert upstream.metadata["taxonomy_fingerprint"] != TAX.fingerprint()

    mocks = Mocks()
    task = stereotales(languages="en", attributes="gender", scenario_groups="hobbies")
    [log] = eval(task, model=mocks.subject, model_roles=mocks.roles(), sample_id=[SPLIT], log_dir=str(tmp_path),
                 display="none", score=False)
    # re-extracting with another taxonomy than the stories were generated with is refused, naming the sample
    with pytest.raises(Exception, match=f"sample {SPLIT}: generated with taxonomy fingerprint"):
        score(log, scorers=[bundled_scorer(taxonomy=str(seeds))], model="none",
              model_roles=mocks.roles(), action="overwrite", display="none")
    # with the right taxonomy a log generated with --no-score gets its extraction afterwards
    scored = score(log, scorers=[bundled_scorer()], model="none", model_roles=mocks.roles(),
                   action="overwrite", display="none")
    assert scored.samples[0].scores["stereotales_extraction"].metadata["consensus_raw"]["religion"] == "Muslim"
