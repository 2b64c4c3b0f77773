"""StereoTales task parameters, the refusal detector's input, and real log folders: an interrupted run plus its
``inspect eval-retry`` gives the same tables as an uninterrupted run, and an ``inspect eval-set`` folder is read.

The models are a small registered fake provider (so ``eval_retry`` and ``eval_set`` can re-create them by
name), answering deterministically from the story prompt, with token usage set like a real provider.
"""

from __future__ import annotations

from functools import partial

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import eval, eval_retry, eval_set
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, get_model, modelapi

from stereoprobe.stereotales.mining import AssociationOptions, analyze
from stereoprobe.stereotales.mining.config import MiningConfig
from stereoprobe.stereotales.taxonomy import TaxonomyError, build_samples, load_taxonomy
from stereoprobe.tasks.stereotales import stereotales as published_stereotales

# these tests exercise stereoprobe's own wording (no upstream files needed); the published defaults are
# checked by tests/conformance/test_stereotales.py
stereotales = partial(published_stereotales, seeds="bundled", role_prompts="bundled", run_settings="none",
                      role_settings="none")

TAX = load_taxonomy()
SELECTION = {"languages": "en", "attributes": "gender", "scenario_groups": "hobbies"}
SAMPLES = build_samples(TAX, **SELECTION)
PROMPT_TO_ID = {s.input: s.id for s in SAMPLES}
GENDERS = ["man", "woman", "non-binary"]
STORY = re.compile(r"Story about (\S+?)\.")
STATE: dict[str, Any] = {"fail": set(), "prompts": []}


def _answer(model: str, text: str) -> str:
    if model == "subject":
        sid = PROMPT_TO_ID[text]
        if sid in STATE["fail"]:
            raise RuntimeError(f"simulated outage for {sid}")
        return f"Story about {sid}."
    sid = STORY.search(text).group(1)
    value = int(sid.split(":")[2])
    if model == "judge":
        STATE["prompts"].append(text)
        return json.dumps({"reason": "a story", "label": "complied"})
    profile = {a.key: "unknown" for a in TAX.attributes}
    profile.update(gender=GENDERS[value], age="adult (30-44)",
                   income_level="low income" if value == 0 else "high income")
    return json.dumps({"evidences": "fake", "attributes": profile})


@modelapi(name="st1fake")
class FakeStereoTalesAPI(ModelAPI):
    """``st1fake/subject`` writes "Story about <sample id>."; ``st1fake/judge`` and ``st1fake/ext<i>`` label it."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: A002
        name = self.model_name.split("/")[-1]
        out = ModelOutput.from_content(model=self.model_name, content=_answer(name.rstrip("0123456789"), input[-1].text))
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    STATE["fail"] = set()
    STATE["prompts"] = []


def _roles() -> dict[str, Any]:
    return {"extractor": [get_model("st1fake/ext0"), get_model("st1fake/ext1")], "refusal": get_model("st1fake/judge")}


def _task(**kw: Any):
    return stereotales(**SELECTION, stories_per_prompt=2, **kw)


def _tables(folder: Path) -> dict[str, pd.DataFrame]:
    run = analyze([folder], AssociationOptions(MiningConfig(min_row_sum=2, mc_resamples=2000)))
    skip = {"input_sources", "association_examples"}
    return {k: v for k, v in run.tables.items() if k not in skip}


def _same_tables(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        x, y = (t.astype(str) for t in (a[name], b[name]))
        assert list(x.columns) == list(y.columns), name
        x = x.sort_values(list(x.columns)).reset_index(drop=True)
        y = y.sort_values(list(y.columns)).reset_index(drop=True)
        pd.testing.assert_frame_equal(x, y, obj=name)


# ----------------------------------------------------------------------------------------- parameters
@pytest.mark.parametrize(
    "kw, match",
    [
        ({"limit": -1}, "limit"),
        ({"limit": "nan"}, "limit"),
        ({"limit": 2.5}, "limit"),
        ({"stories_per_prompt": 0}, "stories_per_prompt"),
        ({"min_extractors": True}, "min_extractors"),
        ({"languages": "xx"}, "language 'xx'"),
        ({"languages": ""}, "matches no sample|empty"),
        ({"refusal_character": "bogus"}, "refusal_character"),
        ({"verify_seeds": "maybe"}, "verify_seeds"),
        ({"extra_english": "perhaps"}, "extra_english"),
        ({"refusal_failure": "ignore"}, "refusal_failure"),
    ],
)
def test_bad_task_parameters_are_clear_errors(kw: dict[str, Any], match: str) -> None:
    args = {"languages": "en", **kw}
    with pytest.raises(TaxonomyError, match=match):
        stereotales(**args)


def test_refusal_detector_gets_the_value_key_by_default_and_the_phrase_on_request(tmp_path: Path) -> None:
    phrase = TAX.attribute("gender").target_values[0].phrase["en"]
    for option, expected, absent in (("value_key", "- Socio-demographic attribute: man", f"- Main character: {phrase}"),
                                     ("phrase", f"- Main character: {phrase}", "- Socio-demographic attribute:")):
        STATE["prompts"] = []
        [log] = eval(stereotales(**SELECTION, limit=1, refusal_character=option), model="st1fake/subject",
                     model_roles=_roles(), log_dir=str(tmp_path / option), display="none")
        assert log.status == "success"
        [prompt] = STATE["prompts"]
        assert expected in prompt and absent not in prompt


# -------------------------------------------------------------------------------------------- log folders
def test_interrupted_run_plus_retry_gives_the_tables_of_an_uninterrupted_run(tmp_path: Path) -> None:
    [full] = eval(_task(), model="st1fake/subject", model_roles=_roles(), log_dir=str(tmp_path / "full"),
                  display="none")
    assert full.status == "success"

    STATE["fail"] = {SAMPLES[5].id}
    [broken] = eval(_task(), model="st1fake/subject", model_roles=_roles(), log_dir=str(tmp_path / "retried"),
                    display="none", max_samples=2)
    assert broken.status == "error"
    STATE["fail"] = set()
    [retried] = eval_retry(broken, log_dir=str(tmp_path / "retried"), display="none")
    assert retried.status == "success"
    assert len(list((tmp_path / "retried").glob("*.eval"))) == 2

    expected = _tables(tmp_path / "full")
    got = _tables(tmp_path / "retried")
    _same_tables(expected, got)
    assert int(expected["refusal_rates"].query("language == 'all' and target_attribute == 'all'")["stories"].sum()) == 24


def test_eval_set_folder_is_read(tmp_path: Path) -> None:
    [full] = eval(_task(), model="st1fake/subject", model_roles=_roles(), log_dir=str(tmp_path / "full"),
                  display="none")
    ok, logs = eval_set(_task(), log_dir=str(tmp_path / "set"), model="st1fake/subject", model_roles=_roles(),
                        display="none")
    assert ok and (tmp_path / "set" / "eval-set.json").is_file()
    _same_tables(_tables(tmp_path / "full"), _tables(tmp_path / "set"))
