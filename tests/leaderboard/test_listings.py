"""inspect listings: task attributes (description, tags, paper), the per-probe eval.yaml listings, and bare
``inspect score LOG`` re-scoring our logs through the registered scorer names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stereoprobe.leaderboard.report import MAIN_METRICS
from stereoprobe.leaderboard.summary import load_listing
from stereoprobe.listings import listing_path

ROOT = Path(__file__).resolve().parents[2]
PROBES = ("stereotales", "dbb", "globalbias")


def _task_infos():
    from inspect_ai._eval.list import list_tasks

    return list_tasks(globs=["tasks"], root_dir=ROOT)


def test_every_task_carries_description_tags_and_paper():
    infos = _task_infos()
    assert len(infos) >= 8
    for t in infos:
        a = t.attribs
        assert isinstance(a.get("description"), str) and len(a["description"]) > 30, t.name
        assert isinstance(a.get("tags"), list) and a["tags"], t.name
        assert isinstance(a.get("paper"), str) and a["paper"], t.name
        if not t.name.startswith("dbb_build"):
            assert "social_bias" in a["tags"], t.name


@pytest.mark.parametrize("probe", PROBES)
def test_listing_fields_tasks_and_hub_metrics(probe):
    listing = load_listing(probe)
    for key in ("title", "description", "paper", "group", "version", "tasks", "data", "metrics", "parameters",
                "reproduce", "hub"):
        assert listing.get(key), (probe, key)
    registered = {t.name for t in _task_infos()}
    for t in listing["tasks"]:
        assert t["name"] in registered and t["task_path"] == f"stereoprobe/{t['name']}"
    hub = listing["hub"]
    assert "/" in hub["dataset_id"]
    for t in hub["tasks"]:
        assert t["metric"] in MAIN_METRICS[t["probe"]], t  # a figure the leaderboard computes
    assert listing_path(probe).is_file()


def test_registry_names_are_namespaced_and_bare_scorers_resolve():
    import stereoprobe._registry as reg
    from inspect_ai._util.registry import registry_lookup

    for task in ("stereotales", "stereotales_judge", "dbb", "dbb_sg", "globalbias", "globalbias_profiles"):
        assert registry_lookup("task", f"stereoprobe/{task}") is not None, task
    for scorer in ("dbb_mcq_scorer", "dbb_sg_scorer", "profile_parser", "stereotales_extraction",
                   "stereotales_harm"):
        assert registry_lookup("scorer", f"stereoprobe/{scorer}") is not None, scorer
        assert registry_lookup("scorer", scorer) is not None, scorer  # the name inspect writes into logs
    assert reg.register_bare_scorer_names() == []  # idempotent


@pytest.mark.slow  # an inspect eval plus an `inspect score` subprocess (~15 s)
def test_bare_inspect_score_rescoring_a_mockllm_log(tmp_path):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    usage = ModelUsage(input_tokens=3, output_tokens=3, total_tokens=6)  # no tiktoken download (offline)
    outputs = []
    for _ in range(3):
        out = ModelOutput.from_content("mockllm/model", "not a JSON list of profiles")
        out.usage = usage
        outputs.append(out)
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval("stereoprobe/globalbias_profiles", model=model, log_dir=str(tmp_path), display="none",
                         task_args={"source": "bundled", "groups": ["CHINESE", "ENGLISH"], "runs": 1,
                                    "batch_size": 4, "prompt": "stereoprobe"})
    assert log.status == "success"
    assert log.eval.scorers[0].name == "profile_parser"  # bare in the log
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "INSPECT_LOG_LEVEL": "warning"}
    inspect_cli = Path(sys.executable).with_name("inspect")
    res = subprocess.run([str(inspect_cli), "score", log.location, "--overwrite", "--action", "overwrite", "--display", "none"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    again = read_eval_log(log.location)
    assert again.status == "success" and again.results.scores[0].name == "profile_parser"
    assert again.samples[0].scores["profile_parser"].answer == "parse_failure"
    assert yaml.safe_load(listing_path("globalbias").read_text())["tasks"]
