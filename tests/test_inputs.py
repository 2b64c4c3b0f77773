"""``stereoprobe.inputs``: discovery, de-duplication across logs, error samples, corrupt members, lm-eval
samples and tables — on logs written by the installed inspect (``mockllm`` with ``usage`` set: no tiktoken)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from stereoprobe.errors import InputError
from stereoprobe.inputs import (ReadStats, find_lm_eval_samples, find_logs, iter_lm_eval_samples, iter_samples,
                                read_table, require_columns, require_finite)
from stereoprobe.logs import LogReadError

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401


def _task(name: str = "tiny", n: int = 4, fail_first: frozenset[str] = frozenset(), fail: frozenset[str] = frozenset(),
          epochs: int = 1):
    """A tiny task; samples in ``fail_first`` raise on their first attempt only, samples in ``fail`` always."""
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import generate, solver

    attempts: dict[tuple[str, int], int] = {}

    @solver
    def flaky():
        async def solve(state, generate_fn):
            key = (str(state.sample_id), state.epoch)
            attempts[key] = attempts.get(key, 0) + 1
            if str(state.sample_id) in fail or (str(state.sample_id) in fail_first and attempts[key] == 1):
                raise RuntimeError(f"simulated failure of {state.sample_id}")
            return state

        return solve

    @scorer(metrics=[mean()])
    def sc():
        async def score(state, target):
            return Score(value=len(state.output.completion))

        return score

    samples = [Sample(id=f"s{i}", input=f"q{i}") for i in range(n)]
    return Task(dataset=samples, solver=[flaky(), generate()], scorer=sc(), name=name, epochs=epochs)


def _model(name: str = "mockllm/m"):
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def fn(input, tools, tool_choice, config) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content=f"answer to {input[-1].text}")
        out.usage = ModelUsage(input_tokens=3, output_tokens=3, total_tokens=6)  # no tiktoken download
        return out

    return get_model(name, custom_outputs=fn, memoize=False)


def _eval(task, log_dir: Path, model: str = "mockllm/m", **kw) -> Path:
    from inspect_ai import eval as inspect_eval

    [log] = inspect_eval(task, model=_model(model), log_dir=str(log_dir), display="none", fail_on_error=False, **kw)
    return Path(log.location)


def _collect(inputs, task=None) -> tuple[dict, ReadStats]:
    stats = ReadStats()
    got = {(i.model, s["id"], s["epoch"]): i.path for i, s in iter_samples(inputs, task, stats=stats)}
    return got, stats


# ------------------------------------------------------------------------------------------------ eval-set


def test_eval_set_folder_with_retry(tmp_path):
    """A real ``inspect eval-set`` folder: the failed first attempt is kept beside its retry (retry_cleanup off)."""
    from inspect_ai import eval_set

    folder = tmp_path / "es"
    ok, logs = eval_set([_task(fail_first=frozenset({"s2"}))], log_dir=str(folder), model=_model(),
                        retry_attempts=2, retry_wait=0.1, retry_cleanup=False, display="none")
    assert ok
    names = sorted(p.name for p in folder.iterdir())
    assert "eval-set.json" in names and "logs.json" in names
    evals = sorted(folder.glob("*.eval"))
    assert len(evals) == 2  # the errored attempt and its retry

    found = find_logs([folder])
    assert found == evals  # index files and the .eval-set-id dot file are not logs
    got, stats = _collect([folder], task="tiny")
    assert sorted(k[1] for k in got) == ["s0", "s1", "s2", "s3"]
    retry = Path(logs[0].location)
    assert set(got.values()) == {retry}  # the newest complete copy wins
    assert stats.samples == 4 and stats.errors == 0 and stats.error_ids == []
    assert stats.duplicates >= 1  # the first attempt's complete samples are superseded
    assert len(stats.files) == 2 and "2 logs, 4 samples" in stats.summary()


def test_eval_set_folder_with_several_models_and_tasks(tmp_path):
    from inspect_ai import eval_set

    folder = tmp_path / "es"
    ok, logs = eval_set([_task(name="task_a", n=3), _task(name="task_b", n=2)], log_dir=str(folder),
                        model=[_model("mockllm/a"), _model("mockllm/b")], display="none")
    assert ok and len(logs) == 4
    got, stats = _collect([folder], task="task_a")
    assert sorted(got) == [(m, f"s{i}", 1) for m in ("mockllm/a", "mockllm/b") for i in range(3)]
    assert set(stats.by_run) == {("task_a", "mockllm/a"), ("task_a", "mockllm/b")}
    assert sorted(stats.other_tasks) == ["task_b"] and len(stats.other_tasks["task_b"]) == 2
    _, stats = _collect([folder])
    assert stats.samples == 2 * (3 + 2) and stats.duplicates == 0 and len(stats.files) == 4


def test_eval_set_index_file_named_explicitly_is_an_error(tmp_path):
    (tmp_path / "eval-set.json").write_text("{}")
    with pytest.raises(InputError, match=r"eval-set.json: an 'inspect eval-set' index file, not a log"):
        find_logs([tmp_path / "eval-set.json"])
    with pytest.raises(InputError, match="no such file or folder"):
        find_logs([tmp_path / "absent"])
    with pytest.raises(InputError, match=r"no inspect logs"):
        list(iter_samples([tmp_path]))


def test_folder_skips_non_log_json_and_dot_folders(tmp_path):
    log = _eval(_task(n=2), tmp_path / "a")
    (tmp_path / "a" / "results_2024-01-01T00-00-00.json").write_text(json.dumps({"results": {}}))
    hidden = tmp_path / "a" / ".cache"
    hidden.mkdir()
    shutil.copy(log, hidden / log.name)
    assert find_logs([tmp_path]) == [log]


# ------------------------------------------------------------------------------------ interrupted + retry


def _interrupted_copy(log: Path, dest: Path, keep: int) -> Path:
    """What a killed run leaves: the journal start record and the first ``keep`` sample members, no header."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(log) as src, zipfile.ZipFile(dest, "w") as out:
        samples = [n for n in src.namelist() if n.startswith("samples/")]
        for name in src.namelist():
            if name == "_journal/start.json" or name in samples[:keep]:
                out.writestr(name, src.read(name))
    st = log.stat()
    os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))  # written when the original run stopped
    return dest


def test_interrupted_log_and_its_retry_give_the_uninterrupted_records(tmp_path):
    # the interrupted run is older than the retry: the journal start record of an earlier run of the task
    early = _eval(_task(n=5, epochs=2), tmp_path / "early")
    complete = _eval(_task(n=5, epochs=2), tmp_path / "full")
    reference, _ = _collect([complete])
    interrupted = _interrupted_copy(early, tmp_path / "mixed" / "interrupted.eval", keep=4)
    shutil.copy(complete, tmp_path / "mixed" / complete.name)

    got, stats = _collect([tmp_path / "mixed"])
    assert got == {k: tmp_path / "mixed" / complete.name for k in reference}  # every sample x epoch once, from the retry
    assert stats.samples == 10 and stats.duplicates == 4
    assert stats.incomplete_logs == [interrupted]
    assert "1 interrupted log" in stats.summary()
    # alone, the interrupted log yields only what it holds (callers decide whether a unit is complete)
    part, pstats = _collect([interrupted])
    assert len(part) == 4 and pstats.incomplete_logs == [interrupted]


def test_the_same_log_given_twice_counts_once(tmp_path):
    log = _eval(_task(n=3), tmp_path)
    got, stats = _collect([log, tmp_path])
    assert len(got) == 3 and stats.samples == 3 and stats.duplicates == 0 and len(stats.files) == 1


# ------------------------------------------------------------------------------------------ error samples


def test_error_samples_are_counted_not_yielded(tmp_path):
    first = _eval(_task(fail=frozenset({"s1", "s2"})), tmp_path / "logs")
    got, stats = _collect([first])
    assert sorted(k[1] for k in got) == ["s0", "s3"]
    assert stats.errors == 2 and stats.error_ids == ["tiny/mockllm/m/s1#1", "tiny/mockllm/m/s2#1"]
    assert set(stats.error_messages) == set(stats.error_ids)
    # each error's message as the one writer of outside input writes it: its class, never the text
    assert all(stats.error_messages[i].startswith("RuntimeError") and "simulated" not in stats.error_messages[i]
               for i in stats.error_ids)
    assert stats.by_run[("tiny", "mockllm/m")] == {"samples": 2, "errors": 2}
    assert "2 error samples not scored" in stats.summary()
    # a later run where s1 succeeds: s1 comes from it, s2 still failed everywhere
    _eval(_task(fail=frozenset({"s2"})), tmp_path / "logs")
    got, stats = _collect([tmp_path / "logs"])
    assert sorted(k[1] for k in got) == ["s0", "s1", "s3"]
    assert stats.errors == 1 and stats.error_ids == ["tiny/mockllm/m/s2#1"]


def test_older_complete_copy_beats_newer_error(tmp_path):
    old = _eval(_task(), tmp_path / "logs")
    _eval(_task(fail=frozenset({"s0"})), tmp_path / "logs")
    got, stats = _collect([tmp_path / "logs"])
    assert got[("mockllm/m", "s0", 1)] == old
    assert stats.errors == 0 and stats.retried == 1


def test_models_and_task_args_are_separate_runs(tmp_path):
    _eval(_task(n=2), tmp_path, model="mockllm/a")
    _eval(_task(n=2), tmp_path, model="mockllm/b")
    got, stats = _collect([tmp_path])
    assert len(got) == 4 and stats.duplicates == 0
    assert set(stats.by_run) == {("tiny", "mockllm/a"), ("tiny", "mockllm/b")}


# ----------------------------------------------------------------------------------- wrong task, corrupt


def test_wrong_task_is_a_clear_error(tmp_path):
    _eval(_task(name="other"), tmp_path)
    with pytest.raises(InputError, match=r"no log of task 'tiny' .*found 'other' \(1 log\)"):
        list(iter_samples([tmp_path], task="tiny"))
    got, _ = _collect([tmp_path], task=("tiny", "other"))
    assert len(got) == 4


def _corrupt_member(log: Path, dest: Path, member_prefix: str = "samples/") -> str:
    """Copy ``log`` to ``dest`` with bytes in the middle of the first matching member's compressed data flipped."""
    data = bytearray(log.read_bytes())
    with zipfile.ZipFile(log) as z:
        info = next(i for i in z.infolist() if i.filename.startswith(member_prefix))
    # local header: 30 bytes + name + extra, then the compressed data
    start = info.header_offset + 30 + len(info.filename.encode()) + int.from_bytes(
        data[info.header_offset + 28:info.header_offset + 30], "little")
    for k in range(start + 4, start + min(info.compress_size - 1, 40)):
        data[k] ^= 0x5A
    dest.write_bytes(bytes(data))
    return info.filename


def test_corrupt_zstd_member_names_file_and_member(tmp_path):
    log = _eval(_task(), tmp_path / "ok")
    with zipfile.ZipFile(log) as z:
        assert {i.compress_type for i in z.infolist() if i.filename.startswith("samples/")} == {93}  # zstd
    bad = tmp_path / "bad.eval"
    member = _corrupt_member(log, bad)
    with pytest.raises(LogReadError, match=rf"bad\.eval: member {member}") as err:
        list(iter_samples([bad]))
    assert isinstance(err.value, InputError) and "\n" not in str(err.value)


def test_truncated_archive_and_non_log_json(tmp_path):
    log = _eval(_task(), tmp_path / "ok")
    cut = tmp_path / "cut.eval"
    cut.write_bytes(log.read_bytes()[:200])
    with pytest.raises(InputError, match=r"cut\.eval: not a complete \.eval archive"):
        list(iter_samples([cut]))
    other = tmp_path / "x.json"
    other.write_text('{"eval": 1, "version": 2}')
    with pytest.raises(InputError, match=r"x\.json: not a readable inspect log"):
        list(iter_samples([other]))


# ----------------------------------------------------------------------------------------- lm-eval samples


def _lm_eval_run(folder: Path, time: str, model: str, lls: dict[int, float], task: str = "globalbias") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"results_{time}.json").write_text(json.dumps({"model_name": model, "results": {task: {}}}))
    with open(folder / f"samples_{task}_{time}.jsonl", "w", encoding="utf-8") as f:
        for doc_id, ll in lls.items():
            rec = {"doc_id": doc_id, "doc": {"text": f"doc {doc_id}"}, "target": "", "filter": "none",
                   "arguments": {"gen_args_0": {"arg_0": f"doc {doc_id}"}},
                   "resps": [[str(ll), "False"]], "filtered_resps": [[str(ll), "False"]],
                   "metrics": ["ll"], "ll": ll}
            f.write(json.dumps(rec) + "\n")


def test_lm_eval_samples_reader(tmp_path):
    out = tmp_path / "lm"
    _lm_eval_run(out / "org__m", "2024-05-01T10-00-00.000001", "org/m", {0: -1.5, 1: -2.25})
    _lm_eval_run(out / "org__m", "2024-05-02T10-00-00.000001", "org/m", {1: -3.0, 2: -0.5})  # a newer run
    _lm_eval_run(out / "org__m", "2024-05-02T10-00-00.000001", "org/m", {0: -9.0}, task="dbb_mc")
    assert len(find_lm_eval_samples([out], task="globalbias")) == 2
    stats = ReadStats()
    recs = {r.doc_id: r for r in iter_lm_eval_samples([out], task="globalbias", stats=stats)}
    assert sorted(recs) == [0, 1, 2]
    assert recs[1].loglikelihoods == [-3.0]  # the newer file wins
    assert recs[0].loglikelihoods == [-1.5] and recs[0].resps == [[-1.5, False]]
    assert recs[2].model == "org/m" and recs[2].task == "globalbias" and recs[2].metrics == {"ll": -0.5}
    assert stats.samples == 3 and stats.duplicates == 1
    with pytest.raises(InputError, match=r"no lm-eval samples files .*of task 'crows'"):
        list(iter_lm_eval_samples([out], task="crows"))
    bad = out / "org__m" / "samples_globalbias_2024-05-03T10-00-00.000001.jsonl"
    bad.write_text('{"doc_id": 0}\n')
    with pytest.raises(InputError, match=r"samples_globalbias_2024-05-03T10-00-00\.000001\.jsonl: line 1"):
        list(iter_lm_eval_samples([out], task="globalbias"))
    bad.write_bytes(b'{"doc_id": 0, "resps": [["\xff"]]}\n')
    with pytest.raises(InputError, match=r"not UTF-8"):
        list(iter_lm_eval_samples([out], task="globalbias"))


def test_lm_eval_generation_records_keep_text(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "samples_gen_2024-05-01T10-00-00.1.jsonl").write_text(
        json.dumps({"doc_id": 3, "doc": {}, "resps": [["a story"]], "filtered_resps": ["a story"]}) + "\n")
    [rec] = iter_lm_eval_samples([folder])
    assert rec.loglikelihoods is None and rec.resps == [["a story"]] and rec.model == "m"


# ------------------------------------------------------------------------------------------------- tables


def test_read_table_errors(tmp_path):
    with pytest.raises(InputError, match=r"absent\.csv: no such human ratings file"):
        read_table(tmp_path / "absent.csv", what="human ratings")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match=r"empty\.csv: empty file"):
        read_table(empty)
    header = tmp_path / "header.csv"
    header.write_text("a,b\n")
    with pytest.raises(InputError, match=r"header\.csv: the table has no rows"):
        read_table(header)
    assert read_table(header, allow_empty=True).empty
    latin = tmp_path / "latin.csv"
    latin.write_bytes("name,x\nJos\xe9,1\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin\.csv: not UTF-8 text \(byte b'\\xe9'"):
        read_table(latin)
    ok = tmp_path / "ok.csv"
    ok.write_text("group,descriptor\nA,x\n")
    with pytest.raises(InputError, match=r"ok\.csv: missing columns 'template', 'ppl' \(found: group, descriptor\)"):
        read_table(ok, required=["group", "template", "descriptor", "ppl"])
    assert list(read_table(ok, required=["group"]).columns) == ["group", "descriptor"]
    pq = tmp_path / "t.parquet"
    pd.DataFrame({"a": [1, 2]}).to_parquet(pq)
    assert read_table(pq, required=["a"])["a"].tolist() == [1, 2]
    # the CSV options of a text read (dtype=str, keep_default_na=False) work on Parquet too
    pd.DataFrame({"a": [1, None], "b": ["x", None]}).to_parquet(pq)
    as_text = read_table(pq, required=["a", "b"], dtype=str, keep_default_na=False)
    assert as_text.to_dict("list") == {"a": ["1.0", ""], "b": ["x", ""]}
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match=r"broken\.parquet: not a readable Parquet"):
        read_table(broken)
    with pytest.raises(InputError, match=r"x\.xlsx: unsupported"):
        (tmp_path / "x.xlsx").write_text("x")
        read_table(tmp_path / "x.xlsx")


def test_require_columns_and_finite():
    df = pd.DataFrame({"ppl": [1.0, float("nan"), 3.0, -1.0], "g": list("abcd")})
    require_columns(df, ["ppl", "g"], "t.csv")
    with pytest.raises(InputError, match=r"t\.csv: missing column 'apx'"):
        require_columns(df, ["apx"], "t.csv")
    with pytest.raises(InputError, match=r"t\.csv: column 'ppl' is not a finite number in row 2$"):
        require_finite(df, ["ppl"], "t.csv")
    with pytest.raises(InputError, match=r"column 'ppl' is not a finite number >= 0 in rows 2, 4"):
        require_finite(df, ["ppl"], "t.csv", minimum=0)
