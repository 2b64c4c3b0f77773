"""Conformance of ``stereotales``' default response formats with flare's, as LiteLLM sends them (row S20).

Expected side, rendered here from the pinned upstream copy only (``../shared/refdata/``), never with the
project's code: flare passes its pydantic models ``RefusalDetectionResponse`` and ``AttributeExtractionResponse``
(``src/flare/scorer/attribute_extraction/schema.py``) to LiteLLM, whose ``type_to_response_format_param`` sends
``{"type": "json_schema", "json_schema": {"schema": to_strict_json_schema(Model), "name": Model.__name__,
"strict": True}}`` (``to_strict_json_schema``: the OpenAI SDK's strict transform of ``model_json_schema()``).
This test runs exactly that in a throwaway subprocess: the pinned module imported from its file (pydantic comes
with inspect), its models' ``model_json_schema()`` passed through ``openai.lib._pydantic.to_strict_json_schema``.
The product never imports the module.

Rendered side: what the refusal detector and the extractors of the default run receive (inspect's
``ResponseSchema``: name, strict, description, and the schema as every inspect provider dumps it), and what an
OpenAI-compatible endpoint receives through inspect's ``openai-api`` provider. Schemas are compared with the
order of ``properties``, ``$defs`` and every list kept (the keys of one schema object are a set in JSON Schema;
inspect dumps them in its own field order).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.util._json import json_schema_dump

from tests.chat_server import chat_server
from tests.conformance._render import capture_model, refdata_file
from tests.conformance.test_stereotales import EXTRACTORS, SUBJECT, upstream_env  # noqa: F401 (a fixture)

pytestmark = pytest.mark.refdata

SCHEMA = "flare/src/flare/scorer/attribute_extraction/schema.py"
MODELS = ("RefusalDetectionResponse", "AttributeExtractionResponse")
#: LiteLLM's type_to_response_format_param on each model, run on the pinned file in a fresh interpreter
RENDER = """
import importlib.util, json, sys
from openai.lib._pydantic import to_strict_json_schema
spec = importlib.util.spec_from_file_location("flare_schema", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
out = {}
for name in sys.argv[2:]:
    model = getattr(module, name)
    out[name] = {"type": "json_schema",
                 "json_schema": {"schema": to_strict_json_schema(model), "name": model.__name__, "strict": True}}
print(json.dumps(out))
"""


def litellm_formats(refdata: Path) -> dict[str, dict[str, Any]]:
    """flare's two formats as LiteLLM builds them, from the pinned file (see the module docstring)."""
    done = subprocess.run([sys.executable, "-c", RENDER, str(refdata_file(refdata, SCHEMA)), *MODELS],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "No module named 'openai'" in done.stderr:
        pytest.skip("the OpenAI SDK (its strict transform) is not installed")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def canonical(node: Any) -> Any:
    """A JSON Schema value with the keys of each schema object sorted, and the order of ``properties``,
    ``$defs`` and lists kept: two schemas are the same value iff their canonical forms are equal."""
    if isinstance(node, list):
        return [canonical(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = []
    for key in sorted(node):
        value = node[key]
        if key in ("properties", "$defs") and isinstance(value, dict):
            value = [[name, canonical(sub)] for name, sub in value.items()]
        else:
            value = canonical(value)
        out.append([key, value])
    return out


def _reply(kind: str, seen: list[tuple[str, dict[str, Any]]]):
    """A capturing model's answers; a role model records the response format it received, as providers read it."""

    def reply(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        rs = config.response_schema
        if kind == "subject":
            digest = hashlib.sha256(messages[-1].text.encode()).hexdigest()[:8]
            text = f"  Story {digest}.\nThe end.\n"  # one story per prompt: no role call answered from the cache
        else:
            assert rs is not None, "a role request without a response format"
            schema = json_schema_dump(rs.json_schema)
            seen.append((kind, {"name": rs.name, "schema": schema, "strict": rs.strict,
                                "description": rs.description}))
            if rs.name == MODELS[0]:
                text = '{"reason": "a story", "label": "complied"}'
            else:
                names = list(schema["properties"]["attributes"]["properties"])
                text = json.dumps({"evidences": "none", "attributes": {n: "unknown" for n in names}})
        out = ModelOutput.from_content("capture", text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return reply


@pytest.fixture(scope="module")
def sent_formats(refdata: Path, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any]]]:
    """(role, format) of every role request of a short default run (the published ensemble, capturing)."""
    from inspect_ai import eval as inspect_eval

    from stereoprobe.stereotales.extraction.response_formats import flare_formats
    from stereoprobe.tasks.stereotales import stereotales

    tmp = tmp_path_factory.mktemp("formats")
    seen: list[tuple[str, dict[str, Any]]] = []
    subject = capture_model(SUBJECT[1], reply=_reply("subject", seen), received=[], provider=SUBJECT[0])
    extractors = [capture_model(n, reply=_reply("extractor", seen), received=[], provider=p) for p, n in EXTRACTORS]
    refusal = capture_model(EXTRACTORS[0][1], reply=_reply("refusal", seen), received=[], provider=EXTRACTORS[0][0])
    with pytest.MonkeyPatch.context() as env:
        env.setenv("STEREOPROBE_UPSTREAM_DIR", str(refdata))
        env.setenv("INSPECT_CACHE_DIR", str(tmp / "cache"))
        flare_formats.cache_clear()
        [log] = inspect_eval(stereotales(languages="en", limit=2), model=subject, display="none",
                             log_dir=str(tmp), model_roles={"extractor": extractors, "refusal": refusal})
        flare_formats.cache_clear()
    assert log.status == "success", log.error
    return seen


def test_default_formats_are_flares_as_litellm_sends_them(upstream_env: Path,  # noqa: F811
                                                          sent_formats: list[tuple[str, dict[str, Any]]]) -> None:
    expected = {name: f["json_schema"] for name, f in litellm_formats(upstream_env).items()}
    want = {"refusal": MODELS[0], "extractor": MODELS[1]}
    assert sorted(role for role, _ in sent_formats) == ["extractor"] * 6 + ["refusal"] * 2
    for role, got in sent_formats:
        flare = expected[want[role]]
        assert got["name"] == flare["name"] and got["strict"] is flare["strict"] is True
        assert got["description"] is None  # LiteLLM sends none
        assert canonical(got["schema"]) == canonical(flare["schema"]), role


def test_geographic_origin_enum_is_flares(upstream_env: Path,  # noqa: F811
                                          sent_formats: list[tuple[str, dict[str, Any]]]) -> None:
    """The extraction format's ``geographic_origin`` values: flare's eleven regions, other and unknown, in its order
    and byte for byte (checked on their own as well as within the whole format)."""
    flare = litellm_formats(upstream_env)[MODELS[1]]["json_schema"]["schema"]
    regions = flare["$defs"]["DemographicAttributes"]["properties"]["geographic_origin"]["enum"]
    assert len(regions) == 13 and regions[-2:] == ["other", "unknown"]
    for role, got in sent_formats:
        if role == "extractor":
            props = got["schema"]["properties"]["attributes"]["properties"]
            assert props["geographic_origin"]["enum"] == regions
            assert got["schema"]["$defs"]["DemographicAttributes"]["properties"]["geographic_origin"]["enum"] == regions


def test_openai_route_receives_flares_format(upstream_env: Path) -> None:  # noqa: F811
    """inspect's ``openai-api`` provider sends the default formats to an OpenAI-compatible endpoint as LiteLLM
    sends flare's (``description: null`` besides, as inspect writes an unset description)."""
    from stereoprobe.stereotales.extraction.response_formats import flare_formats

    flare_formats.cache_clear()
    ours = flare_formats()
    expected = litellm_formats(upstream_env)
    with chat_server() as server:
        model = get_model("openai-api/local/m", base_url=server.base_url, api_key="unused")
        for fmt in (ours.refusal, ours.extraction):
            asyncio.run(model.generate("x", config=GenerateConfig(response_schema=fmt.response_schema())))
        bodies = list(server.bodies)
    assert len(bodies) == 2
    for body, name in zip(bodies, MODELS):
        sent, flare = body["response_format"], expected[name]
        assert sent["type"] == flare["type"] == "json_schema"
        assert sent["json_schema"].pop("description", None) is None
        assert canonical(sent["json_schema"]) == canonical(flare["json_schema"]), name
