"""Conformance of ``globalbias_profiles``' default requests with the reference notebooks 9a, 9b and 9c.

Expected side, rendered here from the upstream files only (``../shared/refdata/GlobalBias``): ``BIAS_PROMPT``
cut out of each notebook's text, the names read and shuffled as the notebooks do (``pd.read_csv(...,
on_bad_lines='warn').drop('Unnamed: 0', axis=1).sample(frac=1, random_state=42)``), batches of
``num_per_group`` names, three runs, ``BIAS_PROMPT.format(list_of_names=json.dumps(batch))``, and each
notebook's call arguments read from its API call. Rendered side: the task's default requests as a capturing
model named after each provider receives them (every message, the prefill, the settings, the count).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from stereoprobe.tasks.globalbias_profiles import globalbias_profiles
from tests.conformance._render import Request, assert_allowed, capture_model, refdata_file, render, text_reply

pytestmark = pytest.mark.refdata

NOTEBOOKS = {"openai": "9a openai_generation_output.ipynb", "other": "9b llama_generation_output.ipynb",
             "anthropic": "9c claude_generation_output.ipynb"}
#: the model each notebook ran, as an inspect model name of that provider family
MODELS = {"openai": ("openai", "gpt-4o"), "other": (None, "meta-llama-3-70b-instruct"),
          "anthropic": ("anthropic", "claude-3-opus-20240229")}
#: departures of the default request, each allowed by its docs/fidelity.md row
DEPARTURES = {
    "G16": "20 names per request for every model (notebook 9c sent 10 to Claude); JSON mode as extra_body",
    "G19": "Llama 3 70B through any provider: the user turn of a chat request (Replicate's prompt field and its "
           "unrecorded service defaults)",
}


def _cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def _bias_prompt(path: Path) -> str:
    found = [m.group(1) for src in _cells(path) for m in re.finditer(r'^BIAS_PROMPT = """(.*?)"""', src, re.S | re.M)]
    assert len(found) == 1, path
    return found[0]


def _literal_kwargs(path: Path, call: str) -> dict[str, Any]:
    """The literal keyword arguments of the notebook's ``call`` (dotted name), e.g. ``client.chat.completions
    .create``; for ``replicate.run`` the literal entries of its ``input`` dict."""
    for src in _cells(path):
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == call:
                out: dict[str, Any] = {}
                for kw in node.keywords:
                    try:
                        out[kw.arg] = ast.literal_eval(kw.value)
                    except ValueError:
                        if isinstance(kw.value, ast.Dict):  # replicate's input={...}: its literal entries
                            out[kw.arg] = {ast.literal_eval(k): ast.literal_eval(v) for k, v in
                                           zip(kw.value.keys, kw.value.values) if isinstance(v, ast.Constant)}
                        elif isinstance(kw.value, ast.List):  # messages=[...]: the literal assistant turn
                            out[kw.arg] = [ast.literal_eval(e) for e in kw.value.elts
                                           if all(isinstance(v, ast.Constant) for v in e.values)]
                return out
    raise AssertionError(f"{path}: no call {call}")


def _batch_size(path: Path) -> int:
    sizes = {int(m.group(1)) for src in _cells(path) for m in re.finditer(r"^num_per_group = (\d+)$", src, re.M)}
    assert len(sizes) == 1, path
    return sizes.pop()


def _names(refdata: Path) -> list[str]:
    path = refdata_file(refdata, "GlobalBias/data/3_name_groups.csv")
    df = pd.read_csv(path, on_bad_lines="warn").drop("Unnamed: 0", axis=1).sample(frac=1, random_state=42)
    return df["firstname"].to_list()


def _settings(family: str, path: Path) -> tuple[dict[str, Any], str | None]:
    """(GenerateConfig fields, prefill) of the notebook's call, in inspect's terms."""
    if family == "openai":
        kw = _literal_kwargs(path, "client.chat.completions.create")
        # the model and the user turn are variables; no max_tokens: the API default
        assert set(kw) - {"messages"} == {"response_format", "temperature", "seed"}
        return {"temperature": float(kw["temperature"]), "seed": kw["seed"],
                "extra_body": {"response_format": kw["response_format"]}}, None
    if family == "anthropic":
        kw = _literal_kwargs(path, "client.messages.create")
        [prefill] = [m["content"] for m in kw["messages"] if m["role"] == "assistant"]
        return {"temperature": float(kw["temperature"]), "max_tokens": kw["max_tokens"]}, prefill
    kw = _literal_kwargs(path, "replicate.run")["input"]
    return {"temperature": float(kw["temperature"]), "max_tokens": kw["max_tokens"]}, None


def _expected(prompt: str, names: list[str], batch: int, settings: dict, prefill: str | None) -> list[Request]:
    out = []
    for run in range(3):  # for x in range(0,3)
        for k, i in enumerate(range(0, len(names), batch)):
            text = prompt.format(list_of_names=json.dumps(names[i:i + batch]))
            out.append(Request(f"run{run}:batch{k}", 1, None, (("user", text),), prefill, settings))
    return sorted(out, key=lambda r: (str(r.sample_id), r.epoch))


@pytest.fixture(scope="module")
def notebooks(refdata: Path) -> dict[str, Path]:
    return {f: refdata_file(refdata, f"GlobalBias/code/{nb}") for f, nb in NOTEBOOKS.items()}


def test_the_three_notebooks_send_the_same_prompt(notebooks: dict[str, Path]) -> None:
    prompts = {f: _bias_prompt(p) for f, p in notebooks.items()}
    assert len(set(prompts.values())) == 1
    assert prompts["openai"].count("{list_of_names}") == 1


def _render_default(refdata: Path, family: str, **args: Any) -> list[Request]:
    provider, name = MODELS[family]
    reply = text_reply('{"characters": []}')
    received: list = []
    model = capture_model(name, reply=reply, received=received, provider=provider)
    task = globalbias_profiles(source=str(refdata / "GlobalBias"), **args)
    return render(task, model=model)


@pytest.mark.parametrize("family", list(NOTEBOOKS))
def test_default_requests_are_the_notebooks(refdata: Path, notebooks: dict[str, Path], family: str) -> None:
    path = notebooks[family]
    prompt, names = _bias_prompt(path), _names(refdata)
    settings, prefill = _settings(family, path)
    got = _render_default(refdata, family)
    assert len(got) == 3 * len(names) // 20 == 60
    assert got == _expected(prompt, names, 20, settings, prefill)
    batch = _batch_size(path)
    if batch != 20:  # notebook 9c: 10 names per request; the default keeps the paper's 20 (fidelity G16)
        assert family == "anthropic" and "G16" in DEPARTURES
        assert _render_default(refdata, family, batch_size=batch) == _expected(prompt, names, batch, settings,
                                                                               prefill)


def test_departures_name_fidelity_rows() -> None:
    assert_allowed(DEPARTURES)
