"""Hand-made StereoTales inputs for the reader, CLI and report tests (eval logs and release tables).

Eval logs are written with inspect's own ``write_eval_log``, so the readers are exercised on the real file
format without running a task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score

ATTRS = ["gender", "income_level", "education"]


def story_sample(
    sid: str,
    *,
    attribute: str,
    value: str,
    profile: dict[str, str],
    language: str = "en",
    epoch: int = 1,
    refused: bool = False,
    extraction_failed: bool = False,
    error: str | None = None,
    fingerprint: str = "fp-1",
    scenario_key: str | None = "walking to work",
    story: str = "Once upon a time.",
) -> EvalSample:
    """One sample as the stereotales task writes it (contract B)."""
    md = {
        "language": language,
        "attribute": attribute,
        "attribute_value": value,
        "attribute_value_key": value,
        "scenario_key": scenario_key,
        "scenario_group": "daily",
        "character": f"a {value}",
        "prompt_template": "t",
        "taxonomy_fingerprint": fingerprint,
    }
    scores = None
    if error is None:
        label = "refusal" if refused else "complied"
        prof = {a: "unknown" for a in profile} if refused or extraction_failed else dict(profile)
        prof[attribute] = value
        scores = {
            "stereotales_extraction": Score(
                value={"refused": float(refused)},
                metadata={
                    "refusal": {"label": label, "reason": "", "votes": [label]},
                    "refused": refused,
                    "profile": prof,
                    "consensus_raw": dict(profile),
                    "extractions": [],
                    "n_extractors_ok": 0 if refused or extraction_failed else 3,
                    "extraction_failed": extraction_failed,
                    "rule": "majority",
                },
            )
        }
    return EvalSample(
        id=sid,
        epoch=epoch,
        input="Write a story.",
        target="",
        metadata=md,
        output=ModelOutput.from_content("mockllm/model", story),
        scores=scores,
        error=EvalError(message=error, traceback="", traceback_ansi="") if error else None,
    )


def write_log(
    path: Path,
    samples: list[EvalSample],
    *,
    model: str = "mockllm/a",
    version: Any = 1,
    created: str = "2026-01-01T10:00:00+00:00",
    status: str = "success",
    task: str = "stereotales",
) -> Path:
    spec = EvalSpec(
        created=created,
        task=task,
        task_version=version,
        dataset=EvalDataset(
            name=task, samples=len(samples), sample_ids=list(dict.fromkeys(s.id for s in samples))
        ),
        model=model,
        config=EvalConfig(epochs=max((s.epoch for s in samples), default=1)),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(EvalLog(eval=spec, status=status, samples=samples), str(path))
    return path


def release_rows(frame: pd.DataFrame, attributes: list[str], with_story: bool = True) -> pd.DataFrame:
    """Turn a stories-like frame (model, language, sample_id, target_attribute, attribute_value_key, attrs)
    into the public release layout (one row per story, profile as JSON)."""
    import json

    rows = []
    for i, r in enumerate(frame.to_dict("records")):
        rows.append(
            {
                "sample_id": r["sample_id"],
                "output_id": f"o{i}",
                "generator_model": r["model"],
                "language": r["language"],
                "target_attribute": r["target_attribute"],
                "target_attribute_value": "localised " + r["attribute_value_key"],
                "attribute_value_key": r["attribute_value_key"],
                "scenario": "scène",
                "scenario_key": r.get("scenario_key", "walking to work"),
                "scenario_group": "daily",
                "story": r.get("story", f"Story {r['sample_id']} about {r['attribute_value_key']}."),
                "extraction_score": 1.0,
                "extracted_attributes_json": json.dumps({a: r[a] for a in attributes}),
            }
        )
    out = pd.DataFrame(rows)
    if not with_story:
        out = out.drop(columns=["story"])
    return out


def planted_stories(
    models: tuple[str, ...] = ("prov1/m1", "prov2/m2"),
    languages: tuple[str, ...] = ("en", "fr"),
    per_cell: int = 20,
    seed: int = 0,
) -> pd.DataFrame:
    """Stories with ONE planted association: income_level = low income -> education = basic.

    For stories prompted with income_level, low income gets education "basic" 80% of the time and the other
    levels get it 10% of the time (lift = 0.8 / mean(0.8, 0.1, 0.1) = 2.4); every other attribute is drawn
    independently of the prompt.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    basic = "basic (e.g. less than high school, or high school)"
    grad = "graduate (e.g. master's degree, doctoral degree)"
    undergrad = "undergraduate (e.g. bachelor's degree, some college)"
    prompts = {
        "income_level": ["low income", "middle income", "high income"],
        "gender": ["man", "woman", "non-binary"],
        "education": [basic, undergrad, grad],
    }
    draw = {
        "income_level": ["low income", "middle income", "high income", "unknown"],
        "gender": ["man", "woman", "non-binary", "unknown"],
        "education": [basic, undergrad, grad, "unknown"],
    }
    rows = []
    for model in models:
        for lang in languages:
            for attr, values in prompts.items():
                for vi, v in enumerate(values):
                    for k in range(per_cell):
                        prof = {a: str(rng.choice(draw[a], p=[0.3, 0.3, 0.3, 0.1])) for a in ATTRS}
                        if attr == "income_level":
                            p_basic = 0.8 if v == "low income" else 0.1
                            prof["education"] = basic if rng.random() < p_basic else str(rng.choice([undergrad, grad]))
                        prof[attr] = v
                        rows.append(
                            {
                                "model": model,
                                "language": lang,
                                "sample_id": f"{lang}:{attr}:{vi}:daily:{k}",
                                "epoch": 1,
                                "target_attribute": attr,
                                "attribute_value_key": v,
                                "scenario_key": f"scenario {k % 4}",
                                "scenario_group": "daily",
                                "refused": False,
                                **prof,
                            }
                        )
    return pd.DataFrame(rows)
