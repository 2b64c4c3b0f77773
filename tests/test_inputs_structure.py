"""The input layer checks the structure of every log it reads, once: a malformed header or sample is one
:class:`InputError` line naming the file and the field (never a traceback in a probe's reader).

Cases by class (issue: malformed headers and samples): a header that is not an object, each eval-spec field
the readers rely on of the wrong type (task arguments, model roles and arguments, generation settings,
dataset, epochs, identity fields), and each sample field of the wrong type (the sample itself, id, epoch,
metadata, output, scores, a score, its value, its metadata). Every case edits one field of a real log
written by the installed inspect; the same edits on an interrupted log (no ``header.json``) hit the journal.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_edit import edit_eval, set_path

from stereoprobe.errors import InputError
from stereoprobe.inputs import ReadStats, iter_samples, read_headers
from stereoprobe.logs import read_eval_spec


def _log(folder: Path) -> Path:
    """A real log of a 3-sample task ("tiny") with ``mockllm`` (usage set: no tiktoken download)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, mean, scorer
    from inspect_ai.solver import generate

    def fn(input, tools, tool_choice, config) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content="an answer")
        out.usage = ModelUsage(input_tokens=3, output_tokens=2, total_tokens=5)
        return out

    @scorer(metrics=[mean()])
    def sc():
        async def score(state, target):
            return Score(value=1, metadata={"kind": "plain"})

        return score

    task = Task(dataset=[Sample(id=f"s{i}", input=f"q{i}", metadata={"k": i}) for i in range(3)],
                solver=generate(), scorer=sc(), name="tiny")
    [log] = inspect_eval(task, model=get_model("mockllm/m", custom_outputs=fn), log_dir=str(folder),
                         display="none")
    return Path(log.location)


@pytest.fixture(scope="module")
def real_log(tmp_path_factory) -> Path:
    return _log(tmp_path_factory.mktemp("real"))


def _read(path: Path, **kw) -> int:
    return sum(1 for _ in iter_samples([path], "tiny", stats=ReadStats(), **kw))


def test_the_real_log_reads(real_log: Path) -> None:
    assert _read(real_log) == 3 and _read(real_log, string_ids=True) == 3


# (case id, dotted path in header.json, new value, fragment of the one error line)
HEADER_CASES = [
    ("header-a-list", "", [1, 2], "not an object"),
    ("header-null", "", None, "not an object"),
    ("header-a-string", "", "header", "not an object"),
    ("eval-spec-a-list", "eval", [], "'eval' spec"),
    ("status-a-number", "status", 3, "'status'"),
    ("task-a-number", "eval.task", 7, "'task'"),
    ("model-null", "eval.model", None, "'model'"),
    ("created-a-list", "eval.created", ["2024"], "'created'"),
    ("task_args-a-list", "eval.task_args", ["seed", 1], "'task_args'"),
    ("task_args-a-string", "eval.task_args", "seed=1", "'task_args'"),
    ("model_roles-a-string", "eval.model_roles", "grader", "'model_roles'"),
    ("model_role-a-number", "eval.model_roles", {"grader": 3}, "'model_roles.grader'"),
    ("model_args-a-list", "eval.model_args", ["device=cpu"], "'model_args'"),
    ("generate_config-a-string", "eval.model_generate_config", "temperature=0", "'model_generate_config'"),
    ("dataset-a-list", "eval.dataset", ["s0"], "'dataset'"),
    ("sample_ids-a-string", "eval.dataset.sample_ids", "s0,s1", "'dataset.sample_ids'"),
    ("config-a-list", "eval.config", [1], "'config'"),
    ("epochs-as-text", "eval.config.epochs", "ten", "'config.epochs'"),
    ("epochs-zero", "eval.config.epochs", 0, "'config.epochs'"),
    ("epochs-a-boolean", "eval.config.epochs", True, "'config.epochs'"),
    ("task_version-a-list", "eval.task_version", [1], "'task_version'"),
]


@pytest.mark.parametrize("interrupted", [False, True], ids=["finished", "interrupted"])
@pytest.mark.parametrize("case,path,value,fragment", HEADER_CASES, ids=[c[0] for c in HEADER_CASES])
def test_malformed_header_is_one_line_naming_file_and_field(real_log, tmp_path, case, path, value, fragment,
                                                            interrupted) -> None:
    if interrupted and path == "status":
        pytest.skip("an interrupted log has no header.json, so no status")
    bad = edit_eval(real_log, tmp_path / f"{case}.eval", header=lambda h: set_path(h, path, value),
                    interrupted=interrupted)
    for read in (lambda: read_headers([bad]), lambda: _read(bad), lambda: read_eval_spec(bad)):
        with pytest.raises(InputError) as err:
            read()
        msg = str(err.value)
        assert "\n" not in msg and f"{case}.eval" in msg and fragment in msg, msg


def _sample_edit(path: str, value):
    def edit(name: str, s):
        return set_path(s, path, value) if name.startswith("samples/s1_") else s

    return edit


# (case id, dotted path in the sample JSON, new value, fragment of the one error line)
SAMPLE_CASES = [
    ("sample-a-list", "", ["s1"], "samples/s1_epoch_1.json is not a sample object"),
    ("sample-null", "", None, "samples/s1_epoch_1.json is not a sample object"),
    ("id-a-list", "id", ["s1"], "sample id"),
    ("id-null", "id", None, "sample id"),
    ("id-a-boolean", "id", True, "sample id"),
    ("epoch-as-text", "epoch", "1", "'epoch'"),
    ("epoch-zero", "epoch", 0, "'epoch'"),
    ("epoch-a-float", "epoch", 1.5, "'epoch'"),
    ("metadata-null", "metadata", None, "'metadata'"),
    ("metadata-a-list", "metadata", ["k"], "'metadata'"),
    ("output-a-string", "output", "an answer", "'output'"),
    ("scores-a-list", "scores", [1], "'scores'"),
    ("score-a-string", "scores.sc", "1", "score 'sc'"),
    ("score-value-null", "scores.sc.value", None, "'value'"),
    ("score-metadata-a-list", "scores.sc.metadata", ["plain"], "'metadata'"),
    ("attachments-a-list", "attachments", [], "'attachments'"),
]


@pytest.mark.parametrize("case,path,value,fragment", SAMPLE_CASES, ids=[c[0] for c in SAMPLE_CASES])
def test_malformed_sample_is_one_line_naming_file_and_field(real_log, tmp_path, case, path, value,
                                                            fragment) -> None:
    bad = edit_eval(real_log, tmp_path / f"{case}.eval", sample=_sample_edit(path, value))
    with pytest.raises(InputError) as err:
        _read(bad)
    msg = str(err.value)
    assert "\n" not in msg and f"{case}.eval" in msg and fragment in msg, msg


def test_integer_ids_are_an_error_only_where_the_task_writes_text(real_log, tmp_path) -> None:
    """inspect allows integer ids; every stereoprobe task writes text ids, so its readers ask for them."""
    bad = edit_eval(real_log, tmp_path / "int_id.eval", sample=_sample_edit("id", 1))
    assert _read(bad) == 3
    with pytest.raises(InputError, match=r"int_id\.eval: sample id 1 is a int, expected text"):
        _read(bad, string_ids=True)
