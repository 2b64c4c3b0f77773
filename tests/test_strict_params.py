"""A misspelt task parameter is refused in one line with the nearest name, through inspect and through
``stereoprobe plan``; a misspelt command option is reported before a missing required one; an offline
upstream file names its one repository."""

from __future__ import annotations

import inspect as pyinspect

import pytest

from stereoprobe.params import TaskParameterError
from stereoprobe.strict_params import parameters, unknown_message


def test_every_task_refuses_an_unknown_parameter_naming_the_closest():
    import stereoprobe._registry  # noqa: F401 - registers the tasks
    from inspect_ai._eval.registry import task_create
    from inspect_ai._util.registry import registry_find, registry_info

    tasks = [registry_info(t).name for t in registry_find(lambda i: i.type == "task")
             if registry_info(t).name.startswith("stereoprobe/")]
    assert len(tasks) >= 10
    for name in tasks:
        fn = registry_find(lambda i, n=name: i.type == "task" and i.name == n)[0]
        if not parameters(fn).parameters:  # a test's toy probe registered in the same worker (tests/test_probes.py)
            continue
        meant = next(iter(parameters(fn).parameters))
        typo = meant[:-2] + meant[-1] + meant[-2]  # the last two letters swapped
        with pytest.raises(TaskParameterError, match=rf"has no parameter '{typo}' \(did you mean {meant}\?\)"):
            task_create(name, **{typo: "x"})


def test_the_message_is_one_line_with_the_task_parameters():
    assert unknown_message("globalbias", "sorce", ["source", "faithful"]) == (
        "task globalbias has no parameter 'sorce' (did you mean source?); its parameters: source, faithful")
    assert "did you mean" not in unknown_message("globalbias", "zzz", ["source", "faithful"])


def test_the_task_signature_is_unchanged_for_readers():
    from stereoprobe.tasks.globalbias import globalbias

    sig = parameters(globalbias)
    assert "source" in sig.parameters
    assert all(p.kind is not pyinspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())


def test_plan_refuses_the_typo_before_building_anything(capsys):
    from stereoprobe.cli import main

    assert main(["plan", "globalbias", "-T", "sorce=bundled", "--model", "transformers/default"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no parameter 'sorce' (did you mean source?" in err[0]


def test_a_misspelt_option_is_reported_before_the_missing_out(capsys, tmp_path):
    from stereoprobe.cli import main

    # an INPUT that exists (a missing one is refused first, when the input is read)
    assert main(["dbb", str(tmp_path), "--treshold", "1"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --treshold" in err and "did you mean --threshold?" in err
    assert "required" not in err


def test_offline_error_names_one_repository(tmp_path, monkeypatch):
    from stereoprobe import upstream

    monkeypatch.setenv("STEREOPROBE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("STEREOPROBE_UPSTREAM_DIR", raising=False)
    monkeypatch.delenv("STEREOPROBE_ALLOW_DOWNLOAD", raising=False)
    src = upstream.sources()["Hidden-Bias-Benchmark"]
    with pytest.raises(upstream.UpstreamDataError) as e:
        upstream.fetch("Hidden-Bias-Benchmark", next(iter(src.files)))
    text = str(e.value)
    assert "Hidden-Bias-Benchmark" not in text and text.count(src.repository) == 2  # the file's, then the copy's
    assert "source=/path/to/Description-based-Bias-Benchmark" in text


def test_a_parameter_of_another_task_is_left_out_with_a_warning(caplog, capsys, monkeypatch):
    """One ``inspect eval`` of two tasks hands both every -T (the demo's ``stereoprobe/dbb stereoprobe/dbb_sg -T
    mode=logprob``): dbb_sg, which has no ``mode``, leaves it out and says so, once (issue 42.8: the check
    before the run and inspect's own build each built the task, and ``make demo`` showed the warning as a plain
    line and again as inspect's log record); a name no task takes is refused."""
    import logging

    import stereoprobe._registry  # noqa: F401 - registers the tasks
    from inspect_ai._eval.registry import task_create

    from stereoprobe import console

    monkeypatch.setattr(console, "_WARNED", set(), raising=False)
    assert "mode" not in parameters(__import__("stereoprobe.tasks.dbb", fromlist=["dbb_sg"]).dbb_sg).parameters
    with caplog.at_level(logging.WARNING):
        for _ in range(2):  # built twice, as by the check before the run and by inspect
            task = task_create("stereoprobe/dbb_sg", source="bundled", prompt="stereoprobe", limit_templates=1,
                               mode="logprob")
            assert task is not None
    err = capsys.readouterr().err
    assert err.count("dbb_sg does not take -T mode (a parameter of dbb") == 1, err
    assert not [r for r in caplog.records if "does not take" in r.getMessage()]  # no second path (a log record)
    with pytest.raises(TaskParameterError, match="has no parameter 'sorce' \\(did you mean source"):
        task_create("stereoprobe/dbb_sg", source="bundled", prompt="stereoprobe", limit_templates=1, sorce="x")
