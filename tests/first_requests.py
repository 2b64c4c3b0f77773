"""Build every task's default dataset and render its first sample's requests; write them as JSON.

    python -m tests.first_requests OUT.json [CASE ...]

Run in a fresh process by ``tests/test_upstream_download.py`` (no loader's in-process cache carries over from
another run), with the environment deciding where upstream files come from: ``$STEREOPROBE_UPSTREAM_DIR``, the
cache (``$STEREOPROBE_CACHE``) or a download (``$STEREOPROBE_RAW_BASE_URL``). Models are the conformance tests'
capturing models (:mod:`tests.conformance._render`): nothing is loaded, every request is recorded as received.
Each case is the task with the fewest ``-T`` options that keep it off files the upstream copies lack (named in
:data:`CASES`). A case that fails records its one-line error instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage

from tests.conformance._render import (Request, _key, _split, capture_model, prompt_logprobs_reply, settings,
                                       text_reply)


STORY = "  A story.\nThe end.\n"  # the capturing subject's story, with the whitespace a model may write around it


def _stereotales_reply(kind: str) -> Callable[[list[ChatMessage], GenerateConfig], ModelOutput]:
    def reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        schema = config.response_schema
        if kind == "subject":
            text = STORY
        elif schema is not None and schema.name in ("refusal_detection", "RefusalDetectionResponse"):
            text = '{"reason": "a story", "label": "complied"}'
        else:
            props = schema.json_schema.model_dump(exclude_none=True)["properties"]  # type: ignore[union-attr]
            names = list(props["attributes"]["properties"])
            text = json.dumps({"evidences": "none", "attributes": {n: "unknown" for n in names}})
        out = ModelOutput.from_content("capture", text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return reply


def _models(case: str, received: list) -> tuple[Model, dict[str, Any]]:
    """The task's model and model roles for ``case`` (named like the published models where the task picks
    settings by model name), all recording into ``received``."""
    if case == "stereotales":  # the published subject and ensemble (stereotales_run.json)
        extractors = [capture_model(n, _stereotales_reply("role"), received, provider=p)
                      for p, n in [("openai", "gpt-5-nano"), ("google", "gemini-2.5-flash-lite"),
                                   ("google", "gemini-3.1-flash-lite-preview")]]
        return (capture_model("gpt-5-mini", _stereotales_reply("subject"), received, provider="openai"),
                {"extractor": extractors,
                 "refusal": capture_model("gpt-5-nano", _stereotales_reply("role"), received, provider="openai")})
    if case == "stereotales_judge":
        return capture_model("claude-haiku-4-5", text_reply("Harmful: 3\nYes,"), received, provider="anthropic"), {}
    if case == "globalbias_profiles":
        return capture_model("gpt-4o", text_reply('{"characters": []}'), received, provider="openai"), {}
    if case.startswith("dbb_build"):
        generator = capture_model("generator", text_reply("False"), received)
        return generator, {"generator": generator, "grader": capture_model("grader", text_reply("a;b"), received)}
    reply = prompt_logprobs_reply if case in ("globalbias", "dbb_sg") else text_reply("a)")
    return capture_model("model", reply, received), {}


def _task(case: str, work: Path, render: bool = False) -> Task:
    from stereoprobe.tasks import dbb, dbb_build, globalbias, globalbias_profiles, stereotales, stereotales_judge

    if case == "dbb_build_questions":  # the user's concepts table, and upstream's wording (q_generate.py)
        concepts = work / "concepts.csv"
        concepts.write_text("concept_id,concept_a,concept_b,explanation\nc1,tall,short,height\n", encoding="utf-8")
        return dbb_build.dbb_build_questions(concepts=str(concepts))
    return {
        "stereotales": lambda: stereotales.stereotales(),
        "stereotales_judge": lambda: stereotales_judge.stereotales_judge(),
        "dbb": lambda: dbb.dbb(**CASES["dbb"]),
        "dbb_sg": lambda: dbb.dbb_sg(**CASES["dbb_sg"]),
        "globalbias": lambda: globalbias.globalbias(**(RENDER["globalbias"] if render else {})),
        "globalbias_profiles": lambda: globalbias_profiles.globalbias_profiles(),
        "dbb_build_concepts": lambda: dbb_build.dbb_build_concepts(),
        "dbb_build_variations": lambda: dbb_build.dbb_build_variations(),
    }[case]()


#: -T options of each case beyond the task's defaults, and why (the upstream copies lack some 4 MB+ files)
CASES: dict[str, dict[str, Any]] = {
    "stereotales": {},
    "stereotales_judge": {},
    "dbb": {"names": "draw"},  # names=published reads data/Bias-Dataset.csv (4 MB+, not among the copies)
    # variations=own: the more-contexts file (4 MB+) is not among the copies; scoring=raw: no tokenizer to load
    # (chat scoring wraps the same upstream prompt in a chat template)
    "dbb_sg": {"names": "draw", "variations": "own", "scoring": "raw"},
    "globalbias": {},
    "globalbias_profiles": {},
    "dbb_build_concepts": {},
    "dbb_build_questions": {},
    "dbb_build_variations": {},
}
#: options of the rendering run only (the default dataset is built and hashed without them): globalbias' first
#: default sample (a name group x template) sends its 7,301 sentences, two minutes through inspect on a loaded
#: 2-core machine; the first group, descriptor and template, one sample per sentence, sends the same first sentence
RENDER: dict[str, dict[str, Any]] = {
    "globalbias": {"unit": "sentence", "groups": ["AFRICAN_M"], "descriptors": [0], "templates": [1]}}


def _first_sample_requests(task: Task, model: Model, roles: dict[str, Any], received: list,
                           log_dir: str) -> list[dict[str, Any]]:
    [log] = inspect_eval(task, model=model, model_roles=roles or None, limit=1, display="none", log_dir=log_dir,
                         max_connections=100)
    if log.status != "success":
        raise RuntimeError(f"eval {log.status}: {log.error.message if log.error else ''}")
    requests, logged = [], []
    for sample in log.samples or []:
        for event in resolve_sample_attachments(sample).events:
            if isinstance(event, ModelEvent):
                msgs, prefill = _split(event.input)
                requests.append(Request(sample.id, sample.epoch, event.role, msgs, prefill, settings(event.config)))
                logged.append(_key(event.input, event.config))
    assert Counter(logged) == Counter(received), "the log's model events differ from what the models received"
    rows = [json.loads(json.dumps(asdict(r), default=str)) for r in requests]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def _text(value: str | list[ChatMessage]) -> str | list[tuple[str, str]]:
    return value if isinstance(value, str) else [(m.role, m.text) for m in value]


def _dataset_digest(task: Task) -> str:
    """SHA-256 of every sample's id and input, in order (the whole default dataset, compared across runs)."""
    h = hashlib.sha256()
    for sample in task.dataset:
        h.update(json.dumps([str(sample.id), _text(sample.input)]).encode())
    return h.hexdigest()


def _cached_files() -> set[str]:
    root = Path(os.environ["STEREOPROBE_CACHE"]) / "upstream" if os.environ.get("STEREOPROBE_CACHE") else None
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()} if root and root.is_dir() else set()


def run_case(case: str, work: Path) -> dict[str, Any]:
    start, before = time.perf_counter(), _cached_files()
    received: list = []
    try:
        task = _task(case, work)
        first = task.dataset[0]
        model, roles = _models(case, received)
        rendered = _task(case, work, render=True) if case in RENDER else task
        requests = _first_sample_requests(rendered, model, roles, received, str(work / f"logs-{case}"))
    except Exception as e:  # noqa: BLE001  # recorded: the test names the case and its error
        return {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=4)}
    return {"samples": len(task.dataset), "dataset_sha256": _dataset_digest(task), "first_id": str(first.id),
            "first_input": _text(first.input),
            "requests": requests, "seconds": round(time.perf_counter() - start, 1),
            "cached_here": sorted(_cached_files() - before)}


def main(argv: list[str]) -> None:
    out, cases = Path(argv[0]), argv[1:] or list(CASES)
    work = Path(tempfile.mkdtemp(prefix="first-requests-"))
    out.write_text(json.dumps({c: run_case(c, work) for c in cases}, indent=1, sort_keys=True), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
