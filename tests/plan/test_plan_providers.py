"""``stereoprobe plan`` refuses a model whose provider does not exist, in one line, before the task is built
(issues 35.12 and 34.6: ``opnai/gpt-4o`` was priced as "USD unknown" with exit 0)."""

from __future__ import annotations

import pytest

from stereoprobe.cli import main
from stereoprobe.errors import InputError
from stereoprobe.plan.prices import load_prices
from stereoprobe.plan.providers import builtin_providers, check_provider


def test_inspects_providers_are_read_from_its_source() -> None:
    assert {"openai", "anthropic", "google", "hf", "vllm", "mockllm"} <= builtin_providers()


@pytest.mark.parametrize("model", ["openai/gpt-4o", "transformers/default", "vllm-completions/m/x",
                                   "openai-api/svc/m", "anthropic/claude-sonnet-4-5"])
def test_known_providers_pass(model: str) -> None:
    check_provider(model, "--model", load_prices())


@pytest.mark.parametrize("model, hint", [("opnai/gpt-4o", "did you mean openai/gpt-4o"),
                                         ("antropic/claude", "did you mean anthropic/claude?"),
                                         ("Transformers/default", "did you mean transformers/default?")])
def test_a_misspelt_provider_names_the_closest(model: str, hint: str) -> None:
    with pytest.raises(InputError, match=hint.replace("?", r"\?")):
        check_provider(model, "--model", load_prices())


def test_a_provider_no_package_registers_is_refused() -> None:
    with pytest.raises(InputError, match="no inspect provider 'zzqx'"):
        check_provider("zzqx/model", "--model-role extractor", load_prices())


@pytest.mark.parametrize("argv, fragment", [
    (["--model", "opnai/gpt-4o"], "--model: unknown provider 'opnai' in 'opnai/gpt-4o' (did you mean openai/gpt-4o"),
    (["--model", "openai/gpt-4o", "--model-role", "extractor=googel/gemini"], "--model-role extractor: unknown"),
])
def test_plan_exits_2_in_one_line(argv: list[str], fragment: str, capsys) -> None:
    assert main(["plan", "globalbias", "-T", "source=bundled", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv, fragment", [
    (["--model", "openai/gpt-4o-mimi"], "'openai/gpt-4o-mimi' is not in the price table"),
    (["--model", "openai/gpt-4o", "--model-role", "grader=openai/gpt-4o-mimi"], "(did you mean openai/gpt-4o-mini"),
    ([], "--model is needed"),
    (["--model", "openai/gpt-4o", "-T", "groups=ARAB", "-T", "groups=ARAB_F"], "-T groups is given twice"),
])
def test_plan_refuses_an_unpriced_near_name_and_no_model(argv: list[str], fragment: str, capsys) -> None:
    """Issue 42.2: a misspelt priced model was priced as "USD unknown" with exit 0, and no --model priced a model
    called '?'."""
    assert main(["plan", "globalbias", "-T", "source=bundled", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1, err
    if argv[:2] == ["--model", "openai/gpt-4o-mimi"]:
        assert "(did you mean openai/gpt-4o-mini" in err
