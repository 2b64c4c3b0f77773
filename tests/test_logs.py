"""``stereoprobe.logs``: the fast eval-log reader agrees with inspect's on real logs written by a mockllm task."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from stereoprobe.harmless import safe_error
from stereoprobe.logs import LogReadError, error_message, iter_raw_samples, output_text, read_eval_spec, read_header

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401


def _run(log_dir: Path, *, fail: frozenset[str] = frozenset(), fmt: str = "eval", model: str = "mockllm/m", n: int = 4):
    """One run of a tiny task (2 epochs, metadata, a dict-valued scorer with metadata); samples in ``fail`` raise."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import generate, solver

    def fn(input, tools, tool_choice, config) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content=f"answer to {input[-1].text}")
        out.usage = ModelUsage(input_tokens=3, output_tokens=3, total_tokens=6)  # no tiktoken (offline)
        return out

    @solver
    def maybe_fail():
        async def solve(state, generate_fn):
            if str(state.sample_id) in fail:
                raise RuntimeError(f"simulated failure of {state.sample_id}")
            return state

        return solve

    @scorer(metrics={"n": [mean()], "ok": [mean()]})
    def sc():
        async def score(state, target):
            return Score(value={"n": len(state.output.completion), "ok": 1}, answer=state.output.completion[:5],
                         explanation="why", metadata={"profile": {"a": "x"}, "sid": str(state.sample_id)})

        return score

    samples = [Sample(id=f"s{i}", input=f"q{i}", metadata={"i": i, "tags": ["a", "b"]}) for i in range(n)]
    samples.append(Sample(id=7, input="int id", metadata={"i": 7}))
    task = Task(dataset=samples, solver=[maybe_fail(), generate()], scorer=sc(), epochs=2, name="tiny")
    [log] = inspect_eval(task, model=get_model(model, custom_outputs=fn, memoize=False), log_dir=str(log_dir),
                         log_format=fmt, display="none", fail_on_error=False, model_roles={"judge": get_model("mockllm/j")})
    return Path(log.location)


def _reference(path: Path) -> list[tuple]:
    from inspect_ai.log import read_eval_log_samples

    return [
        (s.id, s.epoch, {k: v.model_dump(mode="json") for k, v in (s.scores or {}).items()}, s.metadata,
         None if s.error is None else safe_error(s.error.message), None if s.output is None else s.output.completion)
        for s in read_eval_log_samples(str(path), all_samples_required=False)
    ]


def _fast(path: Path) -> list[tuple]:
    out = []
    for s in iter_raw_samples(path):
        assert "events" not in s
        out.append((s["id"], s["epoch"], s.get("scores") or {}, s.get("metadata") or {}, error_message(s),
                    output_text(s)))
    return out


def _same(fast: list[tuple], ref: list[tuple]) -> None:
    assert [f[:2] for f in fast] == [r[:2] for r in ref]  # same samples, same order
    for f, r in zip(fast, ref):
        assert f[3:] == r[3:]
        assert f[2].keys() == r[2].keys()
        for name, score in f[2].items():  # every key the JSON holds is as inspect reads it
            assert {k: score[k] for k in ("value", "answer", "explanation", "metadata")} == {
                k: r[2][name][k] for k in ("value", "answer", "explanation", "metadata")}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    return {"eval": _run(d / "e", fail=frozenset({"s2"})), "json": _run(d / "j", fail=frozenset({"s2"}), fmt="json")}


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_fast_path_matches_inspect(logs, fmt):
    path = logs[fmt]
    fast, ref = _fast(path), _reference(path)
    assert len(fast) == 10 and sum(f[4] is not None for f in fast) == 2
    _same(fast, ref)
    s = next(iter_raw_samples(path))
    assert s["scores"]["sc"]["value"] == {"n": len("answer to q0"), "ok": 1}
    assert s["output"]["choices"][0]["message"]["content"] == "answer to q0"
    assert {7, "s0"} <= {f[0] for f in fast}  # int ids stay ints


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_read_header(logs, fmt):
    from inspect_ai.log import read_eval_log

    info, h = read_header(logs[fmt]), read_eval_log(str(logs[fmt]), header_only=True)
    assert (info.task, info.model, info.created, info.status, info.task_version) == (
        "tiny", "mockllm/m", h.eval.created, "success", h.eval.task_version)
    assert info.model_roles == {"judge": "mockllm/j"} and info.path == logs[fmt]


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_read_eval_spec(logs, fmt, tmp_path):
    from inspect_ai.log import read_eval_log

    spec = read_eval_spec(logs[fmt])
    assert spec["config"]["epochs"] == 2  # the task's epochs=2
    assert spec["dataset"]["sample_ids"] == ["s0", "s1", "s2", "s3", 7]  # the five samples of _run, int id kept
    ref = read_eval_log(str(logs[fmt]), header_only=True).eval.model_dump(mode="json")
    keys = ("task", "task_id", "model", "created", "task_args", "metadata")  # .eval leaves defaults out
    assert {k: spec.get(k) for k in keys} == {k: ref.get(k) for k in keys}
    if fmt == "eval":  # interrupted: no header.json, the spec comes from the journal's start record
        cut = _rewrite(logs[fmt], tmp_path / "cut.eval", drop={"header.json"})
        got = read_eval_spec(cut)
        assert (got["config"]["epochs"], got["dataset"]["sample_ids"], got["task"], got["model"]) == (
            2, ["s0", "s1", "s2", "s3", 7], spec["task"], "mockllm/m")
    bad = tmp_path / f"bad.{fmt}"
    bad.write_text("not a log")
    with pytest.raises(LogReadError, match="bad"):
        read_eval_spec(bad)


def _rewrite(src: Path, dst: Path, *, drop=(), extra=()) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename not in drop:
                zout.writestr(item.filename, zin.read(item.filename))
        for name, data in extra:
            zout.writestr(name, data)
    return dst


def test_interrupted_log_and_relogged_member(logs, tmp_path):
    import warnings

    src = logs["eval"]
    with zipfile.ZipFile(src) as z:
        first = json.loads(z.read("samples/s0_epoch_1.json"))
    first["metadata"]["relogged"] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        path = _rewrite(src, tmp_path / "cut.eval", drop={"header.json"},
                        extra=[("samples/s0_epoch_1.json", json.dumps(first))])
    info = read_header(path)
    assert (info.task, info.status, info.created) == ("tiny", "started", read_header(src).created)
    got = list(iter_raw_samples(path))
    assert len(got) == 10 and [s["metadata"].get("relogged") for s in got if (s["id"], s["epoch"]) == ("s0", 1)] == [True]


def test_truncated_and_invalid_logs_are_clear_errors(logs, tmp_path):
    data = logs["eval"].read_bytes()
    (tmp_path / "cut.eval").write_bytes(data[: len(data) // 2])
    with pytest.raises(LogReadError, match=r"cut\.eval: not a complete \.eval archive"):
        list(iter_raw_samples(tmp_path / "cut.eval"))
    with pytest.raises(LogReadError, match=r"cut\.eval"):
        read_header(tmp_path / "cut.eval")
    bad = _rewrite(logs["eval"], tmp_path / "bad.eval", drop={"samples/s1_epoch_1.json"},
                   extra=[("samples/s1_epoch_1.json", "{not json")])
    with pytest.raises(LogReadError, match=r"bad\.eval: member samples/s1_epoch_1\.json is not valid JSON"):
        list(iter_raw_samples(bad))


JSON_EDGES = [
    '{"a": NaN, "b": Infinity, "c": -Infinity, "d": -0.0, "e": 1e-320, "f": 123456789012345678901234567890,'
    ' "g": 0.1000000000000000055511151231257827, "h": 1E5, "i": "\\ud83d\\ude00", "j": "\\u00e9\\n", "a": 2,'
    ' "k": [true, false, null, 1, 1.0, -7, 2.2250738585072014e-308, 1.7976931348623157e308, 4.9e-324]}',
    '{"lone": "\\ud800"}', '\ufeff{"bom": 1}', '{"x": 1e400, "y": -1e-400}', '"\u00e9\u4e2d"', '[' * 3000 + ']' * 3000,
]


@pytest.mark.parametrize("text", JSON_EDGES)
def test_member_parser_is_json_loads(text):
    """The sample parser (pydantic-core, falling back to ``json``) gives ``json.loads``' objects: the same
    types, doubles (signed zero, subnormals, infinities, NaN), big integers, strings and last repeated key;
    what pydantic-core refuses (BOM, lone surrogate, deep nesting) is ``json``'s result or error."""
    from stereoprobe.logs import _parse_json

    data = text.encode("utf-8", "surrogatepass")
    try:
        want: object = json.loads(data)
    except RecursionError:
        with pytest.raises(RecursionError):
            _parse_json(data)
        return
    got = _parse_json(data)
    assert repr(got) == repr(want) and _types(got) == _types(want)


def _types(v):
    if isinstance(v, dict):
        return {k: _types(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_types(x) for x in v]
    return type(v).__name__


def test_member_parser_on_a_real_log(logs):
    from stereoprobe.logs import _parse_json

    with zipfile.ZipFile(logs["eval"]) as z:
        members = [n for n in z.namelist() if n.endswith(".json")]
        assert len(members) > 5
        for name in members:
            data = z.read(name)
            assert repr(_parse_json(data)) == repr(json.loads(data)), name


def test_iter_samples_dedup(tmp_path):
    """Newest log wins; a successful copy beats a newer errored one; an error everywhere is counted once
    (the de-duplication lives in :func:`stereoprobe.inputs.iter_samples`; more cases in tests/test_inputs.py)."""
    import time

    from stereoprobe.errors import InputError
    from stereoprobe.inputs import ReadStats, iter_samples

    old = _run(tmp_path / "a", fail=frozenset({"s3"}), n=4)
    time.sleep(1.1)  # ``created`` has a resolution of one second
    new = _run(tmp_path / "a", fail=frozenset({"s1", "s3"}), n=4)
    other = _run(tmp_path / "a", model="mockllm/other", n=1)
    stats = ReadStats()
    got = {(i.model, s["id"], s["epoch"]): (i.path, error_message(s))
           for i, s in iter_samples([tmp_path / "a"], stats=stats)}
    assert len(got) == 2 * 4 + 2 * 2  # s3 (2 epochs) failed in every log: counted, not yielded
    assert got[("mockllm/m", "s0", 1)] == (new, None)
    assert got[("mockllm/m", "s1", 2)] == (old, None)
    assert ("mockllm/m", "s3", 1) not in got and stats.error_ids == ["tiny/mockllm/m/s3#1", "tiny/mockllm/m/s3#2"]
    assert got[("mockllm/other", 7, 2)] == (other, None)
    with pytest.raises(InputError, match="no log of task 'nope'"):
        list(iter_samples([tmp_path / "a"], task="nope"))
    shutil.rmtree(tmp_path / "a")
