"""Every setting is checked (issue 28.3): the transformers provider refuses a generation setting or model argument
outside its range in one line naming it and its range, before any work; DBB refuses epochs its questions cannot
be complete with; task-construction errors reach ``inspect eval`` as one line (a ``PrerequisiteError``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from stereoprobe import params as P
from stereoprobe.errors import InputError
from stereoprobe.providers.validation import GenerationSettingError, ModelArgError, check_device

TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


def _one_line(ex: BaseException) -> str:
    text = str(ex)
    assert "\n" not in text and isinstance(ex, PrerequisiteError) and isinstance(ex, InputError)
    return text


@pytest.mark.parametrize("config, named", [
    (GenerateConfig(top_p=2.0), "top_p must be a finite number in [0, 1]"),
    (GenerateConfig(top_k=-2), "top_k must be an integer >= 0 (0: no top-k)"),
    (GenerateConfig(max_tokens=0), "max_tokens must be an integer >= 1"),
    (GenerateConfig(seed=-5), "seed must be an integer >= 0 and <= 18446744073709551615"),
    (GenerateConfig(num_choices=0), "num_choices must be an integer >= 1"),
    (GenerateConfig(temperature=-1.0), "temperature must be a finite number >= 0"),
    (GenerateConfig(temperature=float("nan")), "temperature must be a finite number >= 0"),
    (GenerateConfig(top_logprobs=-1, logprobs=True), "top_logprobs must be an integer >= 0"),
    (GenerateConfig(frequency_penalty=float("inf")), "frequency_penalty must be a finite number"),
    (GenerateConfig(logit_bias={5: 200.0}), "logit_bias[5] must be a finite number in [-100, 100]"),
])
def test_generation_settings_refused_in_one_line(tiny_models, config, named):
    # as a request's settings (task config) ...
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu", chat_template=TEMPLATE)
    with pytest.raises(GenerationSettingError) as request:
        asyncio.run(model.generate([ChatMessageUser(content="alice is")], config=config))
    assert named in _one_line(request.value) and _one_line(request.value).startswith("transformers provider:")
    # ... and as the command line's (--top-p 2 reaches the provider as its GenerateConfig), before loading
    with pytest.raises(GenerationSettingError, match=named.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        get_model(f"transformers/{tiny_models['llama']}", device="cpu", config=config, memoize=False)


@pytest.mark.parametrize("args, named", [
    ({"batch_tokens": 1}, "batch_tokens must be an integer >= 256 or auto, got batch_tokens=1"),
    ({"max_connections": 0}, "max_connections must be an integer >= 1, got max_connections=0"),
    ({"mlm_max_length": -3}, "mlm_max_length must be an integer >= 2, got mlm_max_length=-3"),
    ({"score_first_token": "ture"}, "score_first_token must be true or false, got score_first_token='ture'"),
    ({"prefix_sharing": "yes"}, "prefix_sharing must be true or false"),
    ({"batch_size": "many"}, "batch_size must be an integer >= 1 or auto"),
    ({"gen_batch_size": 0}, "gen_batch_size must be an integer >= 1 or auto"),
    ({"repetition_penalty": 0}, "repetition_penalty must be a finite number > 0"),
    ({"top_k": -1}, "top_k must be an integer >= 0 or none"),
    ({"kind": "decoder"}, "kind must be one of 'causal', 'masked', 'seq2seq'"),
    ({"dtype": "float8"}, "dtype must be one of auto, float32, bfloat16, float16"),
    ({"device": "gpu"}, "device must be one of auto, cpu, cuda, cuda:N, mps"),
    ({"trust_remote_code": "1"}, "trust_remote_code must be true or false"),
])
def test_model_args_refused_in_one_line(tiny_models, args, named):
    with pytest.raises(ModelArgError) as refused:
        get_model(f"transformers/{tiny_models['llama']}", device=args.pop("device", "cpu"), memoize=False, **args)
    assert named in _one_line(refused.value)
    assert _one_line(refused.value).startswith("transformers provider: model argument")


def test_booleans_and_auto_accepted(tiny_models):
    model = get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False, score_first_token="TRUE",
                      prefix_sharing=False, batch_size="auto", batch_tokens=256, mlm_max_length=22, top_k="none")
    api = model.api
    assert (api.score_first_token, api.prefix_sharing, api.batch_size, api.batch_tokens) == (True, False, None, 256)
    assert (api.mlm_max_length, api.default_top_k, api.max_connections()) == (22, None, 128)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda:7", "cuda", "cpu:1"])
def test_missing_device_is_one_line(device):
    with pytest.raises(ModelArgError, match="transformers provider: model argument device must be"):
        check_device(device)
    assert check_device("cpu") == "cpu" and check_device("auto") is None and check_device(None) is None


def test_cuda_device_without_cuda_through_inspect_eval(tmp_path):
    """``inspect eval ... -M device=cuda:7`` on this machine: one line, exit code non-zero, no traceback."""
    if torch.cuda.is_available():
        pytest.skip("checks a machine without CUDA")
    inspect = Path(sys.executable).with_name("inspect")
    run = subprocess.run([str(inspect), "eval", "stereoprobe/dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe",
                          "--model", "transformers/default", "-M", "device=cuda:7", "--log-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "400"})
    output = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0
    assert "model argument device must be a device this machine has (no CUDA device here" in output
    assert "Traceback" not in output and "AssertionError" not in output


# ---- DBB epochs and task-construction errors --------------------------------------------------------------

def dbb(**kwargs):
    """The DBB task on the bundled templates, with our own prompt wording where the task offers the choice (the
    default reads upstream's prompt file, which these offline tests do not need)."""
    import inspect as pyinspect

    from stereoprobe.tasks.dbb import dbb as task

    if "prompt" in pyinspect.signature(task).parameters:
        kwargs.setdefault("prompt", "stereoprobe")
    return task(**kwargs)


def dbb_sg(**kwargs):
    import inspect as pyinspect

    from stereoprobe.tasks.dbb import dbb_sg as task

    if "prompt" in pyinspect.signature(task).parameters:
        kwargs.setdefault("prompt", "stereoprobe")
    return task(**kwargs)


def test_dbb_epochs_below_what_questions_need_are_refused():
    sampled = dbb(source="bundled", faithful=False, categories="ses", limit_templates=1)
    assert sampled.epochs == 10
    for epochs in (0, 2, 9):  # inspect eval --epochs N assigns the task's epochs
        with pytest.raises(PrerequisiteError, match=rf"must be at least 10 for this task .*got epochs={epochs}"):
            sampled.epochs = epochs
    sampled.epochs = 12
    assert sampled.epochs == 12
    logprob = dbb(source="bundled", faithful=False, categories="ses", limit_templates=1, mode="logprob",
                  unit="question")
    with pytest.raises(PrerequisiteError, match="at least 2"):
        logprob.epochs = 1
    grouped = dbb(source="bundled", faithful=False, categories="ses", limit_templates=1, mode="logprob")
    with pytest.raises(PrerequisiteError, match="exactly 1 .*unit=template"):
        grouped.epochs = 2
    sg = dbb_sg(source="bundled", faithful=False, categories="ses", limit_templates=1)
    if sg.metadata["unit"] == "template":
        with pytest.raises(PrerequisiteError, match="exactly 1"):
            sg.epochs = 3


def test_dbb_epochs_refused_before_any_sample(tmp_path):
    from inspect_ai import eval as inspect_eval

    from fake_model import fake_model
    task = dbb(source="bundled", faithful=False, categories="ses", limit_templates=1)
    with pytest.raises(PrerequisiteError, match="got epochs=2"):
        inspect_eval(task, model=fake_model(), epochs=2, display="none", log_dir=str(tmp_path))
    assert not list(tmp_path.glob("*.eval"))  # nothing run, nothing logged


@pytest.mark.parametrize("top_k, expected", [(0, None), ("none", None), (None, None), (50, 50)])
def test_dbb_top_k_none_is_allowed(top_k, expected):
    task = dbb(source="bundled", faithful=False, categories="ses", limit_templates=1, top_k=top_k)
    assert task.config.top_k == expected


def test_task_construction_errors_are_prerequisite_errors():
    from stereoprobe.dbb.descriptors import DBBDataError
    with pytest.raises(DBBDataError) as raised:  # still its own type for callers
        dbb(source="bundled", faithful=False, mode="sampled", epochs=3)
    assert "at least 10" in _one_line(raised.value)
    with pytest.raises(PrerequisiteError):
        dbb(source="bundled", faithful=False, top_k=-3)
    assert raised.value.message == str(raised.value)


def test_one_line_errors_keeps_type_message_and_attributes():
    class Custom(InputError):
        pass

    @P.one_line_errors
    def build(fail: bool) -> str:
        if fail:
            error = Custom("line one\nline two")
            error.row = 3
            raise error
        return "built"

    assert build(False) == "built" and build.__name__ == "build"
    with pytest.raises(Custom) as raised:
        build(True)
    assert isinstance(raised.value, PrerequisiteError) and raised.value.row == 3
    assert raised.value.message == "line one line two" and str(raised.value) == "line one\nline two"
    assert type(raised.value).__name__ == "Custom"


def test_every_task_converts_construction_errors():
    """Every registered stereoprobe task function is wrapped (a new task without it fails here)."""
    import inspect as pyinspect

    import stereoprobe._registry  # noqa: F401
    from inspect_ai._util.registry import registry_find, registry_info

    tasks = registry_find(lambda info: info.type == "task" and info.name.startswith("stereoprobe/"))
    assert len(tasks) >= 8
    for t in tasks:
        chain, fn = [], t
        while fn is not None:
            chain.append(fn)
            fn = getattr(fn, "__wrapped__", None)
        assert any(getattr(f, "__one_line_errors__", False) for f in chain), registry_info(t).name
        assert pyinspect.signature(t).parameters  # the task's own parameters are still visible


def test_chat_template_path_that_does_not_exist_is_refused(tiny_models, tmp_path):
    """A mistyped template file would otherwise become the template's literal text (every prompt rendered as
    the file name), silently."""
    folder = tiny_models["llama"]
    with pytest.raises(ModelArgError, match="chat_template must be a Jinja template .* or an existing file"):
        get_model(f"transformers/{folder}", device="cpu", memoize=False, chat_template=str(tmp_path / "chat.jinja"))
    plain = tmp_path / "plain.txt"
    plain.write_text("no template here")
    with pytest.raises(ModelArgError, match="a file holding a Jinja template"):
        get_model(f"transformers/{folder}", device="cpu", memoize=False, chat_template=str(plain))
    good = tmp_path / "good.jinja"
    good.write_text(TEMPLATE)
    from_file = get_model(f"transformers/{folder}", device="cpu", memoize=False, chat_template=str(good))
    inline = get_model(f"transformers/{folder}", device="cpu", memoize=False, chat_template=TEMPLATE)
    assert from_file.api.tokenizer.chat_template == inline.api.tokenizer.chat_template == TEMPLATE


def test_unknown_model_and_tokenizer_are_one_line(tiny_models, tmp_path):
    with pytest.raises(ModelArgError) as model:
        get_model(f"transformers/{tmp_path / 'no-such-model'}", device="cpu", memoize=False)
    assert "cannot load model" in _one_line(model.value)
    with pytest.raises(ModelArgError) as tokenizer:
        get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False,
                  tokenizer=str(tmp_path / "no-such-tokenizer"))
    assert "cannot load the tokenizer" in _one_line(tokenizer.value) and "(-M tokenizer)" in str(tokenizer.value)


@pytest.mark.parametrize("args", [{"batch_invariant": "maybe"}, {"continuous_batching": "ture"},
                                  {"microbatch_tokens": "lots", "batch_invariant": "true"}])
def test_every_model_argument_error_is_one_line(tiny_models, args):
    """Model arguments checked by other modules of the provider (fixed shapes, generation batching) are one line
    in inspect eval too (a PrerequisiteError naming the setting)."""
    with pytest.raises(ModelArgError) as refused:
        get_model(f"transformers/{tiny_models['llama']}", device="cpu", memoize=False, **args)
    assert list(args)[0] in _one_line(refused.value)
