"""Mutation check of the conformance tests: every one-byte change of a default request must fail one of them.

    python bench/mutation_check.py              # every row of ROWS, two test runs at a time (-j)
    python bench/mutation_check.py "dbb logprob" builder   # only these rows
    python bench/mutation_check.py --list       # the table: path, seam, positions, conformance tests

Seam: the request as the model receives it. A pytest plugin (this file, loaded with ``-p mutation_check``)
wraps ``inspect_ai.model.Model.generate``: for every request of the row's model role it flips one byte (the
lowest bit of one ASCII character; a non-ASCII one moves the position to the next ASCII character) at the row's
position in one message's text, or in one string of the request's response format (a dotted path into its JSON
schema). Every request of that path in the run changes by that byte, as a typo in the product's template or a
misread upstream byte would change it; the log shows the changed request, as it would. The row's conformance
tests then run in a subprocess (``pytest -x -q -p no:xdist``) and must fail. A mutation that reaches no request
is an error of the table (it checks nothing); a passing run is a survivor. Equivalent mutations (a change no
request-level check can see, named with the reason in the row) are printed apart and are not survivors.

A new request path is one row of ROWS. The response-format rows name paths of the default formats, flare's
``RefusalDetectionResponse`` and ``AttributeExtractionResponse`` in the strict form LiteLLM sends
(``stereoprobe/stereotales/extraction/response_formats.py``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENV = "STEREOPROBE_MUTATION"  # the mutation a test run applies (JSON), read by the plugin below
REPORT_ENV = "STEREOPROBE_MUTATION_REPORT"  # a file the plugin appends one line to per changed request
ANY = "*"  # any model role


# ------------------------------------------------------------------------------------------------ the table
@dataclass(frozen=True)
class Row:
    """One default request path: the requests of model ``role`` (None: the task's model; ``*``: any), the seam
    (``message``: the last ``user`` or the first ``system`` message; ``schema``: the response format), the
    positions to flip and the conformance tests that must fail."""

    name: str
    tests: tuple[str, ...]
    role: str | None = None
    message: str = "user"
    positions: tuple[Any, ...] = ("mid", -1)  # int index, "mid", or [marker, offset after the marker]
    schema_paths: tuple[str, ...] = ()  # with message="schema": dotted paths into the response format
    equivalent: dict[str, str] = field(default_factory=dict)  # position (as printed) -> why it is equivalent


C = "tests/conformance/"
ROWS: list[Row] = [
    Row("story", (C + "test_stereotales.py::test_default_requests_byte_for_byte",), role=None,
        positions=(0, "mid", -1)),
    Row("refusal", (C + "test_stereotales.py::test_default_requests_byte_for_byte",), role="refusal",
        # the two values whose seed text differs from their key: the byte after the shared part
        positions=(10, "mid", -1, ["(e.g. United States, Canada", 0],
                   ["trades and manual labor (e.g. construction, manufacturing", 0])),
    Row("extraction", (C + "test_stereotales.py::test_default_requests_byte_for_byte",), role="extractor",
        positions=(10, "mid", -1)),
    # flare's formats (S20): name, titles, descriptions, enums and required lists as the strict form sends them
    Row("extraction format", (C + "test_stereotales.py::test_default_requests_byte_for_byte",
                               C + "test_stereotales_formats.py"),
        role="extractor", message="schema",
        schema_paths=("name", "title", "properties.evidences.description",
                      "properties.attributes.properties.geographic_origin.enum.0",
                      "properties.attributes.properties.age.enum.-1", "properties.attributes.required.0",
                      "properties.attributes.title")),
    Row("refusal format", (C + "test_stereotales.py::test_default_requests_byte_for_byte",
                           C + "test_stereotales_formats.py"), role="refusal",
        message="schema", schema_paths=("name", "properties.label.enum.0", "properties.label.description",
                                        "properties.reason.title")),
    Row("judge", (C + "test_stereotales_judge.py::test_default_requests",), role=None, positions=(0, "mid", -1)),
    Row("dbb sampled", (C + "test_dbb.py::test_sampled_default_requests",), role=None,
        positions=(40, ["a) ", 2], ["b) ", 2])),
    Row("dbb sampled system", (C + "test_dbb.py::test_sampled_default_requests",), role=None, message="system",
        positions=(3,)),
    Row("dbb logprob", (C + "test_dbb.py::test_logprob_mode_requests",), role=None,
        positions=("mid", ["Context: ", 4], ["a) ", 2], -1)),
    Row("dbb-sg", (C + "test_dbb_sg.py",), role=None, positions=(["Context: ", 4], -1)),
    Row("globalbias sentences", (C + "test_globalbias.py::test_default_requests_are_upstream_sentences",),
        role=None, positions=(0, "mid", -1)),
    Row("globalbias profiles", (C + "test_globalbias_profiles.py::test_default_requests_are_the_notebooks",),
        role=None, positions=(0, "mid", -1)),
    Row("baselines", (C + "test_dbb_baselines.py::test_crows_pairs_default_requests",), role=None,
        positions=(0, "mid", -1)),
    Row("baselines system", (C + "test_dbb_baselines.py::test_crows_pairs_default_requests",), role=None,
        message="system", positions=(3,)),
    Row("builder", (C + "test_dbb_build.py",), role=ANY, positions=(5, "mid", -1)),
    Row("builder system", (C + "test_dbb_build.py",), role=ANY, message="system", positions=(3,)),
]


# ------------------------------------------------------------------------------------------------ one flip
def flip_at(text: str, position: Any) -> str | None:
    """``text`` with the lowest bit of one ASCII character flipped at ``position``; None when the position is
    not in the text (a marker it lacks, an empty text)."""
    if isinstance(position, list):
        marker, offset = position
        at = text.find(marker)
        if at < 0:
            return None
        i = at + len(marker) + offset
    elif position == "mid":
        i = len(text) // 2
    else:
        i = position if position >= 0 else len(text) + position
    while 0 <= i < len(text) and ord(text[i]) >= 128:
        i += 1
    if not 0 <= i < len(text):
        return None
    return text[:i] + chr(ord(text[i]) ^ 1) + text[i + 1:]


def _flip_path(data: Any, path: list[str]) -> bool:
    """Flip one byte of the string at ``path`` (keys, or list indices) inside ``data``, in place."""
    *head, last = path
    for key in head:
        data = data[int(key)] if isinstance(data, list) else data.get(key) if isinstance(data, dict) else None
        if data is None:
            return False
    index: Any = int(last) if isinstance(data, list) else last
    try:
        value = data[index]
    except (KeyError, IndexError, TypeError):
        return False
    if not isinstance(value, str):
        return False
    flipped = flip_at(value, "mid")
    if flipped is None:
        return False
    data[index] = flipped
    return True


# ------------------------------------------------------------------------------------------------ the plugin
def _mutate(spec: dict[str, Any], messages: list[Any], config: Any) -> tuple[list[Any], Any, bool]:
    from inspect_ai.model import ResponseSchema

    if spec["message"] == "schema":
        schema = config.response_schema
        if schema is None:
            return messages, config, False
        kind = type(schema.json_schema)  # flare's formats carry title and $defs in a subclass: keep it, so the
        data = {"name": schema.name, **schema.json_schema.model_dump(exclude_none=True, by_alias=True)}  # one byte
        # is the only change
        if not _flip_path(data, spec["path"].split(".")):
            return messages, config, False
        name = data.pop("name")
        new = ResponseSchema(name=name, json_schema=kind.model_validate(data), description=schema.description,
                             strict=schema.strict)
        return messages, config.model_copy(update={"response_schema": new}), True
    indices = [i for i, m in enumerate(messages) if m.role == spec["message"]]
    if not indices:
        return messages, config, False
    i = indices[-1] if spec["message"] == "user" else indices[0]
    flipped = flip_at(messages[i].text, spec["position"])
    if flipped is None:
        return messages, config, False
    out = list(messages)
    out[i] = messages[i].model_copy(update={"content": flipped})
    return out, config, True


def pytest_configure(config: Any) -> None:
    """Wrap ``Model.generate`` to apply the mutation of ``$STEREOPROBE_MUTATION`` (nothing when unset)."""
    if not os.environ.get(ENV):
        return
    from inspect_ai.model import ChatMessageUser, GenerateConfig
    from inspect_ai.model._model import Model

    spec = json.loads(os.environ[ENV])
    original = Model.generate

    @functools.wraps(original)
    async def generate(self: Any, input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        role = getattr(self, "_role", None)
        if spec["role"] == ANY or role == spec["role"]:
            messages = [ChatMessageUser(content=input)] if isinstance(input, str) else list(input)
            cfg = kwargs.get("config", args[2] if len(args) > 2 else GenerateConfig())
            messages, cfg, changed = _mutate(spec, messages, cfg)
            if changed:
                input = messages  # noqa: A001
                if len(args) > 2:
                    args = (*args[:2], cfg, *args[3:])
                else:
                    kwargs["config"] = cfg
                with open(os.environ[REPORT_ENV], "a", encoding="utf-8") as f:
                    f.write("changed\n")
        return await original(self, input, *args, **kwargs)

    Model.generate = generate  # type: ignore[method-assign]


# ------------------------------------------------------------------------------------------------ the runner
def mutations(row: Row) -> list[tuple[str, dict[str, Any]]]:
    """(label, spec) of every mutation of ``row``."""
    if row.message == "schema":
        return [(f"format {p}", {"role": row.role, "message": "schema", "path": p}) for p in row.schema_paths]
    return [(f"{row.message} {json.dumps(p)}", {"role": row.role, "message": row.message, "position": p})
            for p in row.positions]


def run_one(row: Row, label: str, spec: dict[str, Any], report: Path) -> tuple[str, float]:
    """``caught``, ``survived`` or ``not reached`` (no request changed), and the seconds it took."""
    report.write_text("", encoding="utf-8")
    env = {**os.environ, ENV: json.dumps(spec), REPORT_ENV: str(report),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "bench"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:xdist", "-p", "mutation_check",
                           "-p", "no:cacheprovider", *row.tests], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - start
    changed = report.read_text(encoding="utf-8").count("changed")
    if proc.returncode == 0:
        return ("survived" if changed else "not reached (" + _last(proc.stdout) + ")"), seconds
    if proc.returncode not in (1,):  # 2-5: interrupted, internal error, usage error, nothing collected
        return f"not run (pytest exit {proc.returncode}: {_last(proc.stdout + proc.stderr)})", seconds
    return ("caught" if changed else "not reached (failed anyway: " + _last(proc.stdout) + ")"), seconds


def _last(out: str) -> str:
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", nargs="*", help="row names (default: all)")
    parser.add_argument("--list", action="store_true", help="print the table and exit")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="test runs at a time (default 2)")
    args = parser.parse_args(argv)
    unknown = set(args.rows) - {r.name for r in ROWS}
    if unknown:
        parser.error(f"unknown rows {sorted(unknown)}; rows: {', '.join(r.name for r in ROWS)}")
    rows = [r for r in ROWS if not args.rows or r.name in args.rows]
    if args.list:
        for r in rows:
            print(f"{r.name:22} role={r.role!s:9} seam={r.message:6} "
                  f"{[m for m, _ in mutations(r)]} -> {', '.join(r.tests)}")
        return 0
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    todo = [(r, label, spec, tmp / f"mutation-report-{os.getpid()}-{i}")
            for i, (r, (label, spec)) in enumerate((r, m) for r in rows for m in mutations(r))]
    survivors, errors, equivalent = [], [], []
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = pool.map(lambda t: run_one(*t), todo)
        for (r, label, _, report), (outcome, seconds) in zip(todo, results):
            report.unlink(missing_ok=True)
            print(f"{r.name:22} {label:42} {outcome:10} {seconds:6.0f} s", flush=True)
            if outcome == "survived" and label in r.equivalent:
                equivalent.append(f"{r.name} {label}: {r.equivalent[label]}")
            elif outcome == "survived":
                survivors.append(f"{r.name} {label}")
            elif outcome != "caught":
                errors.append(f"{r.name} {label}: {outcome}")
    total = len(todo)
    print(f"\n{total} mutations in {time.monotonic() - start:.0f} s; {len(survivors)} survivors, "
          f"{len(equivalent)} equivalent, {len(errors)} not checked")
    for line in survivors:
        print(f"SURVIVED: {line}")
    for line in equivalent:
        print(f"EQUIVALENT: {line}")
    for line in errors:
        print(f"NOT CHECKED: {line}")
    return 1 if survivors or errors else 0


if __name__ == "__main__":
    sys.exit(main())
