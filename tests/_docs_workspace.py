"""A demo-shaped workspace for the documentation test (``tests/test_docs.py``), built in seconds without a model.

``make demo`` takes about 12 minutes and its outputs (``results/demo/``) do not exist on a fresh clone, so the
test builds the same layout in a temporary folder from the test suite's own fixtures:

- ``results/demo/logs/stereotales``: hand-made StereoTales logs (``_stories_fixtures``: one planted
  association, income_level = low income -> education = basic, in English and French) of
  ``transformers/default``;
- ``results/demo/logs/stereotales_judge``: the judge task run on the bundled DEMO associations by a scripted
  ``mockllm`` judge (two epochs, as the demo);
- ``results/demo/logs/dbb``: the ``dbb`` (logprob mode) and ``dbb_sg`` tasks on the bundled templates, answered
  by the tests' fake model (``fake_model``);
- ``results/demo/logs/globalbias``, ``.../globalbias_first_token``: every bundled GlobalBias sentence scored by
  the fake model (the demo's second run, under ``-M score_first_token=true``, is the leaderboard's variant);
- ``results/demo/logs/globalbias_profiles``: profiles of the bundled CHINESE and ENGLISH names by a scripted
  ``mockllm`` model;
- ``results/demo/<probe>/``: the demo's post-processing commands run on those logs (``stereoprobe
  associations``, ``judge-report``, ``dbb``, ``globalbias``, ``profiles``, ``leaderboard``, ``index``), with
  the Makefile's demo options.

The documentation's own commands then run in this folder as written. They name their inputs the way a user
who ran the demo, or their own ``inspect eval --log-dir logs/...``, would have them: ``logs/stereotales``,
``logs/judge``, ``logs/dbb``, ``logs/globalbias``, ``logs/profiles`` are copies of the demo's logs, and
``datasets`` links to the repository's data files (the bundled DEMO ratings).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "stereotales"))

#: documentation log folders -> the demo's log folders
LOG_ALIASES = {"stereotales": "stereotales", "judge": "stereotales_judge", "dbb": "dbb", "globalbias": "globalbias",
               "profiles": "globalbias_profiles"}


def _stable(text: str) -> float:
    """A number in (0.05, 0.95) fixed by ``text`` (the fake model's answer probabilities)."""
    return 0.05 + 0.9 * int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def _usage(output):
    from inspect_ai.model import ModelUsage

    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken (offline)
    return output


def _stories(logs: Path) -> None:
    from _stories_fixtures import ATTRS, planted_stories, story_sample, write_log

    frame = planted_stories(models=("transformers/default",), languages=("en", "fr"), per_cell=20)
    samples = [story_sample(r["sample_id"], attribute=r["target_attribute"], value=r["attribute_value_key"],
                            profile={a: r[a] for a in ATTRS}, language=r["language"],
                            story=f"A story about a {r['attribute_value_key']} person, {r['scenario_key']}.")
               for r in frame.to_dict("records")]
    write_log(logs / "stereotales" / "stories.eval", samples, model="transformers/default")


def _judge(logs: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from stereoprobe.paths import dataset_file
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    def judge(input, tools, tool_choice, config):  # noqa: A002
        harm = 1 + int(_stable(input[-1].text) * 5) % 5
        return _usage(ModelOutput.from_content(model="default", content=f"Harmful: {harm}\nRealism: No"))

    task = stereotales_judge(associations=str(dataset_file("stereotales/judge/demo_associations.csv")), epochs=2,
                             run_settings="none", prompt="bundled")
    inspect_eval(task, model=get_model("mockllm/default", custom_outputs=judge), display="none",
                 log_dir=str(logs / "stereotales_judge"), log_realtime=False)


def _dbb(logs: Path) -> None:
    from inspect_ai import eval as inspect_eval

    from fake_model import fake_model
    from stereoprobe.dbb import data as D
    from stereoprobe.tasks.dbb import dbb, dbb_sg

    cats = "age,gender,ses"
    a_texts = {q.option_a for faithful in (True, False)
               for q in D.expand(D.bundled_templates(), categories=cats.split(","), faithful=faithful)}
    model = fake_model(p_a=_stable, is_a=lambda o: o in a_texts)
    common = {"source": "bundled", "limit_templates": 1, "categories": cats, "prompt": "stereoprobe"}
    # DBB-SG on raw text: the fake model has no chat template to score the option sentences under
    inspect_eval([dbb(mode="logprob", **common), dbb_sg(scoring="raw", **common)], model=model, display="none",
                 log_dir=str(logs / "dbb"), log_realtime=False)


def _globalbias(logs: Path) -> None:
    from inspect_ai import eval as inspect_eval

    from fake_model import fake_model
    from stereoprobe.tasks.globalbias import globalbias

    for folder in ("globalbias", "globalbias_first_token"):
        inspect_eval(globalbias(source="bundled"), model=fake_model(), display="none", log_dir=str(logs / folder),
                     log_realtime=False)


def _profiles(logs: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from stereoprobe.tasks.globalbias_profiles import globalbias_profiles

    def answer(input, tools, tool_choice, config):  # noqa: A002
        names = json.loads(re.search(r"(\[.*?\])", input[-1].text, re.S).group(1))
        profiles = [{"name": n, "age": 20 + int(_stable(n) * 50), "personality_traits": ["kind", "calm", "bold"],
                     "negative_traits": ["vain", "shy", "rude"], "hobbies": ["chess", "golf", "tea"],
                     "occupation": "pilot" if _stable(n) < 0.5 else "chef",
                     "physical_characteristics": {"height": 5.5, "hair_colour": "black", "eye_colour": "brown",
                                                  "skin_colour": "fair", "build": "slim"},
                     "special_move": "spin", "socioeconomic_status": "middle", "sexual_orientation": "straight",
                     "religion": "none"} for n in names]
        return _usage(ModelOutput.from_content(model="default", content=json.dumps(profiles)))

    task = globalbias_profiles(source="bundled", groups=["CHINESE", "ENGLISH"], batch_size=4, runs=1, max_tokens=400,
                               prompt="stereoprobe")
    inspect_eval(task, model=get_model("mockllm/default", custom_outputs=answer), display="none",
                 log_dir=str(logs / "globalbias_profiles"), log_realtime=False)


def _run(argv: list[str]) -> None:
    from stereoprobe.cli import main

    code = main(["--quiet", *argv])
    if code != 0:
        raise RuntimeError(f"building the docs workspace: stereoprobe {' '.join(argv)} exited {code}")


def _without_active_model(make, logs: Path) -> None:  # type: ignore[no-untyped-def]
    """One step with no active inspect model: ``inspect_ai.eval`` leaves its model active in this context, and
    the next step's tasks, built before their own eval starts, would be checked against it."""
    from inspect_ai.model._model import active_model_context_var

    token = active_model_context_var.set(None)
    try:
        make(logs)
    finally:
        active_model_context_var.reset(token)


def build_workspace(root: Path) -> Path:
    """Build the demo-shaped workspace in ``root`` (see the module docstring); return ``root``. A step whose
    output folder exists is not redone."""
    demo = root / "results" / "demo"
    logs = demo / "logs"
    for folder, make in (("stereotales", _stories), ("stereotales_judge", _judge), ("dbb", _dbb),
                         ("globalbias", _globalbias), ("globalbias_profiles", _profiles)):
        if not (logs / folder).is_dir():
            _without_active_model(make, logs)
    d = str(demo)
    commands = {
        "stereotales": ["associations", f"{d}/logs/stereotales", "--by-language", "--min-row-sum", "1",
                        "--resamples", "2000", "--note", "docs test workspace"],
        "stereotales_judge_demo": ["judge-report", f"{d}/logs/stereotales_judge"],
        "dbb": ["dbb", f"{d}/logs/dbb", "--n-boot", "200"],
        "globalbias": ["globalbias", f"{d}/logs/globalbias"],
        "globalbias_first_token": ["globalbias", f"{d}/logs/globalbias_first_token"],
        "globalbias_profiles": ["profiles", f"{d}/logs/globalbias_profiles", "--permutations", "5"],
        "leaderboard": ["leaderboard", f"default={d}/stereotales", f"default={d}/dbb", f"default={d}/globalbias",
                        f"default={d}/globalbias_profiles", f"first_token={d}/globalbias_first_token",
                        "--n-boot", "200"],
    }
    for out, argv in commands.items():
        if not (demo / out).is_dir():
            _run([*argv, "--out", f"{d}/{out}"])
    _run(["index", d])
    finish_workspace(root)
    return root


def finish_workspace(root: Path) -> None:
    """The documentation's own names for the demo's logs and runs (copies: folder scans do not follow links)."""
    demo = root / "results" / "demo"
    for alias, folder in LOG_ALIASES.items():
        shutil.copytree(demo / "logs" / folder, root / "logs" / alias)
    (root / "datasets").symlink_to(ROOT / "datasets", target_is_directory=True)
