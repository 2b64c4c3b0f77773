"""The one writer of outside input (:mod:`stereoprobe.harmless`, issue 41.1): a value is written only where its
key and its shape are known harmless, whatever shape a secret has (secrets of :mod:`planted_secrets`)."""

from __future__ import annotations

import json

import pytest
from planted_secrets import (BASIC, HEXISH, JWT_SIG, NEW_ARGS, NEW_ERROR, NEW_SECRETS, PLAIN_LOWER, RANDOM_KEY_NAME,
                             SAS_URL_ENCODED, SLASH_PASSWORD)

from stereoprobe.errors import InputError
from stereoprobe.redact import REDACTED, check_public_url, redact_text

SECRETS = NEW_SECRETS


def _unseen_leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_a_setting_is_written_only_where_its_key_and_shape_are_known_harmless() -> None:
    from stereoprobe.harmless import safe_settings

    got = safe_settings({**NEW_ARGS, "dtype": "float16", "temperature": 0.7, "score_first_token": True,
                         "device": "cuda:0", "seed": 3, "tokenizer": "org/tok-name", "top_k": None,
                         "dtype_x": "float16", "kind": PLAIN_LOWER + "Z9", "revision": HEXISH[:12],
                         "categories": ["age", JWT_SIG + "Q1"], "stop_seqs": [PLAIN_LOWER], f"k{HEXISH}": 1})
    assert not _unseen_leaks(json.dumps(got)), got
    assert all(got[k] == REDACTED for k in NEW_ARGS)
    assert got["dtype_x"] == REDACTED  # a harmless shape under a key no list holds
    assert {k: got[k] for k in ("dtype", "temperature", "score_first_token", "device", "seed", "tokenizer",
                                "top_k")} == {"dtype": "float16", "temperature": 0.7, "score_first_token": True,
                                              "device": "cuda:0", "seed": 3, "tokenizer": "org/tok-name",
                                              "top_k": None}
    assert got["kind"] == REDACTED and got["categories"] == ["age", REDACTED] and got[REDACTED] == REDACTED
    assert got["stop_seqs"] == REDACTED  # free text a user chose: not a setting of known shape


def test_every_task_parameter_is_a_known_key() -> None:
    """The writer's list of task parameters holds every parameter of every registered task (else a ``-T``
    setting would be written as ``***``)."""
    import importlib
    import inspect
    import pkgutil

    import stereoprobe.tasks as tasks
    from stereoprobe.harmless import HARMLESS_KEYS

    params: set[str] = set()
    for mod in pkgutil.iter_modules(tasks.__path__):
        module = importlib.import_module(f"stereoprobe.tasks.{mod.name}")
        for obj in vars(module).values():
            if callable(obj) and getattr(getattr(obj, "__registry_info__", None), "type", None) == "task":
                params |= {n for n, p in inspect.signature(obj).parameters.items()
                           if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    assert params and not params - HARMLESS_KEYS, sorted(params - HARMLESS_KEYS)


@pytest.mark.parametrize("url, kept", [
    (f"http://mirror:{SLASH_PASSWORD}@h.example:8080/raw", "http://***@h.example:8080/raw"),
    (f"https://h.example/logs;jsessionid={PLAIN_LOWER}/x", "https://h.example/logs;***/x"),
    (f"https://h.example/get?path={SAS_URL_ENCODED}&region=eu", "https://h.example/get?path=***&region=eu"),
    (f"https://h.example/api/{HEXISH}/v1", "https://h.example/api/***/v1"),
    ("https://raw.example/o/r/a43f17fdc6917188d62b458803a604af5a4a5eee/data/x.csv",  # a pinned commit: public
     "https://raw.example/o/r/a43f17fdc6917188d62b458803a604af5a4a5eee/data/x.csv"),
    ("https://huggingface.co/datasets/org/logs?revision=main#readme",
     "https://huggingface.co/datasets/org/logs?revision=main#readme"),
])
def test_a_url_keeps_only_what_is_known_harmless(url: str, kept: str) -> None:
    from stereoprobe.harmless import safe_url

    assert safe_url(url) == kept
    assert redact_text(f"see {url} now") == f"see {kept} now"  # the console's net writes URLs the same way


def test_a_providers_error_text_is_reduced_to_class_and_status() -> None:
    from stereoprobe.harmless import ERROR_MESSAGE, safe_error

    got = safe_error(NEW_ERROR)
    assert got == f"AuthenticationError (HTTP 401 Unauthorized): {ERROR_MESSAGE}"
    assert safe_error("TimeoutError") == "TimeoutError"  # a rule names the whole text harmless
    assert safe_error(f"{PLAIN_LOWER} {HEXISH}") == f"error: {ERROR_MESSAGE}"


def test_the_capability_probe_does_not_echo_a_key_a_server_quotes() -> None:
    """A server answering 401 with the key in its text: the probe's refusal line holds class and status."""
    from stereoprobe.solvers.capability import _error_text

    class APIStatusError(Exception):
        status_code = 401

    line = _error_text(APIStatusError(f"Incorrect API key provided: {PLAIN_LOWER}{HEXISH}. {NEW_ERROR}"), 5.0)
    assert not _unseen_leaks(line) and PLAIN_LOWER not in line and "HTTP 401" in line, line


@pytest.mark.parametrize("password, query", [(SLASH_PASSWORD, "?x=1"), (f"pa#{PLAIN_LOWER}", "?x=1"),
                                             (f"pa?{PLAIN_LOWER}", ""), (f"p/{HEXISH}", ""), (f"12/{PLAIN_LOWER}", "")])
def test_a_raw_base_url_password_is_not_printed_in_the_refusal(password: str, query: str, monkeypatch) -> None:
    """A password holding / # or ? (not percent-encoded) is refused, and the line shows none of it; ``12/...``
    would otherwise read as port 12 and a path."""
    from stereoprobe import upstream

    monkeypatch.setenv(upstream.RAW_BASE_ENV, f"http://mirror:{password}@h.example/raw{query}")
    with pytest.raises(Exception) as err:
        upstream.raw_base()
    text = str(err.value)
    assert upstream.RAW_BASE_ENV in text and "h.example" in text
    assert password not in text and password.split("/")[-1][3:] not in text, text


def test_a_path_parameter_never_reaches_the_hub_files() -> None:
    with pytest.raises(InputError, match="path parameter"):
        check_public_url(f"https://huggingface.co/datasets/org/logs;jsessionid={PLAIN_LOWER}")


def test_the_recorded_command_line_keeps_only_harmless_settings() -> None:
    from stereoprobe.report.run_info import safe_command

    line = safe_command(["stereoprobe", "plan", "dbb", "-M", f"apitoken={PLAIN_LOWER}", "-T", "mode=logprob",
                         "--model-role", f"grader={{model: x, creds: {BASIC}}}", f"{RANDOM_KEY_NAME}={HEXISH}"])
    assert not _unseen_leaks(line) and "-T mode=logprob" in line and "apitoken=***" in line, line
