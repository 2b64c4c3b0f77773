"""No credential given to a model reaches a file or a console line, through every command end to end.

Real logs of each probe (globalbias, profiles, stereotales, dbb) are rewritten so that their headers carry
what a user types: ``-M api_key=...``, a base URL with ``user:password@`` and ``?key=...``, and a model role
with its own ``api_key`` and base URL. Each post-processing command, then the leaderboard over their folders
and the index page, run on them; no output file (CSV, Parquet cells, JSON, HTML, YAML) and no console line
may hold any of the secrets. ``plan`` given a key on its command line, and the leaderboard reading a
``run_info.json`` of an older version that recorded a key, are checked too.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from eval_edit import edit_eval
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from stereoprobe.cli import main
from stereoprobe.redact import REDACTED, check_public_url, is_secret_name, redact, redact_text
from stereoprobe.errors import InputError
from planted_secrets import (BASIC, HEXISH, JWT_SIG, NEW_ARGS, NEW_ERROR, NEW_SECRETS, PLAIN_LOWER,
                             RANDOM_KEY_NAME, SAS_SIG)

sys.path.insert(0, str(Path(__file__).parents[1] / "stereotales"))
sys.path.insert(0, str(Path(__file__).parents[1] / "globalbias"))

KEY = "sk-e2eSECRETkey0123456789abcdef"  # shaped like an OpenAI key
ROLE_KEY = "plainRoleSecret9876"  # no known shape: only its name says it is a key
PASSWORD = "PaSsW0rdXYZ"
QUERY_KEY = "QueryKeyABC123"
TOKEN = "hubTokenValue5555"
# shapes no rule names (issue 34.2): written never, by construction (URL parts, public model names, cell filter)
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlUGxhbnRlZDQy"
RANDOM40 = "Qm7vT2xK9pLw4ZrB8nYc3HdF6sJa1GeU5oMi0XqV"  # a random 40-character token
CODE = "AzureFnCodeZ9y8x7w6v5u4"  # an Azure Functions ?code= key
HF_TOKEN = "hf_PlantedTokenAbCdEfGh1234567890"  # inside a model's folder path
DB_PASSWORD = "DbPassW0rd77"
# shapes no rule of a deny-list names (issue 41.1): tests/planted_secrets.py
SECRETS = (KEY, ROLE_KEY, PASSWORD, QUERY_KEY, TOKEN, JWT, RANDOM40, CODE, HF_TOKEN, DB_PASSWORD, *NEW_SECRETS)
BASE_URL = f"https://alice:{PASSWORD}@llm.example.org/v1?key={QUERY_KEY}&region=eu"
CODE_URL = f"https://fn.example.net/api/{RANDOM40}?code={CODE}&access={JWT}#t={JWT}"
PROVIDER_ERROR = (f"401 Unauthorized: invalid token {RANDOM40} (Bearer {JWT}) for "
                  f"https:/bob:{DB_PASSWORD}@llm.example.org/v1?code={CODE}; key {KEY}")


# ------------------------------------------------------------------------------------------- unit level


@pytest.mark.parametrize("name", ["api_key", "apiKey", "X-Api-Key", "OPENAI_API_KEY", "hf_token", "token",
                                  "access_token", "password", "client_secret", "Authorization", "auth",
                                  "credentials", "cookie", "sig"])
def test_credential_names(name: str) -> None:
    assert is_secret_name(name)
    assert redact({name: "abcdef"}) == {name: REDACTED}


def test_a_bare_key_is_a_credential_in_a_url_not_in_a_mapping() -> None:
    assert redact_text("https://h/v1?key=abcdef") == "https://h/v1?key=***"
    assert redact({"key": "gender", "repository": "org/repo"}) == {"key": "gender", "repository": "org/repo"}
    assert redact({"key": KEY}) == {"key": REDACTED}  # a key's shape is still recognised


@pytest.mark.parametrize("name", ["max_tokens", "score_first_token", "eos_token", "scenario_key", "group_key",
                                  "tokenizer", "batch_tokens", "keyword", "temperature", "model_path"])
def test_setting_names_are_kept(name: str) -> None:
    assert not is_secret_name(name)
    assert redact({name: "abcdef"}) == {name: "abcdef"}


def test_numbers_and_booleans_of_credential_names_are_settings() -> None:
    assert redact({"score_first_token": True, "token": 3}) == {"score_first_token": True, "token": 3}


@pytest.mark.parametrize("text, kept", [
    (BASE_URL, "https://***@llm.example.org/v1?key=***&region=eu"),
    (f"-M api_key={ROLE_KEY} -M temperature=0.5", "-M api_key=*** -M temperature=0.5"),
    (f'{{"api_key": "{ROLE_KEY}", "n": 1}}', '{"api_key": "***", "n": 1}'),
    (f"pretrained=gpt2,api_key={ROLE_KEY},dtype=float16", "pretrained=gpt2,api_key=***,dtype=float16"),
    (f"Authorization: Bearer {TOKEN}", "Authorization: *** ***"),
    (f"model {KEY} failed", "model *** failed"),
    (f"openai/gpt-4o (api_key=\"{ROLE_KEY}\", base_url=\"{BASE_URL}\")",
     'openai/gpt-4o (api_key="***", base_url="https://***@llm.example.org/v1?key=***&region=eu")'),
    ("score_first_token=true max_tokens=16 seed=3", "score_first_token=true max_tokens=16 seed=3"),
])
def test_redact_text(text: str, kept: str) -> None:
    assert redact_text(text) == kept


@pytest.mark.parametrize("text, kept", [
    (f"https://h.example/v1?code={CODE}", "https://h.example/v1?code=***"),
    (f"https://h.example/v1?api-version=2024-06-01&code={CODE}",
     "https://h.example/v1?api-version=2024-06-01&code=***"),
    (f"https:/bob:{DB_PASSWORD}@h.example/v1", "https:/***@h.example/v1"),  # a slash dropped by a path
    (f"bob:{DB_PASSWORD}@h.example:5432/db", "***@h.example:5432/db"),
    (f"https://h.example/x#access_token={TOKEN}", "https://h.example/x#***"),
    ("https://github.com/org/repo#readme", "https://github.com/org/repo#readme"),
    (f"/var/cache/{JWT}/x: permission denied", "/var/cache/***/x: permission denied"),
    (f"extra_body={{'session': '{JWT}'}}", "extra_body={'session': '***'}"),
    (f"invalid token {RANDOM40}.", "invalid token ***."),
    (f"hf//home/alice/{HF_TOKEN}/llama", "hf//home/alice/***/llama"),
    ("2026-11-27T23-30-00+00-00_dbb_5fGhJkLmNpQrStUvWxYz12.eval", None),  # inspect's run id is a name
    ("DeepSeek-R1-Distill-Qwen-32B-Instruct-GGUF sha 0123456789abcdef0123456789abcdef01234567", None),
])
def test_what_a_url_carries_besides_host_and_path_is_never_written(text: str, kept: str | None) -> None:
    assert redact_text(text) == (text if kept is None else kept)


@pytest.mark.parametrize("model, label", [
    (f"hf//home/alice/{HF_TOKEN}/models/llama-3-8b", "hf/llama-3-8b"),
    (f"pretrained=/home/alice/{HF_TOKEN}/Qwen2.5-7B,dtype=float16", "Qwen2.5-7B"),
    ("vllm//srv/models/models--org--name/snapshots/abc", "vllm/org/name"),
])
def test_a_model_given_as_a_folder_is_named_by_its_folder(model: str, label: str) -> None:
    from stereoprobe.model_labels import model_label

    assert model_label(model) == label


def test_a_task_error_quoting_a_path_is_redacted() -> None:
    """A task's one-line error (inspect eval shows it) quoting an unwritable cache folder holds no token."""
    from stereoprobe.params import as_prerequisite

    err = as_prerequisite(InputError(f"/var/cache/{JWT}/upstream: cannot write (permission denied)"))
    assert JWT not in str(err) and JWT not in str(getattr(err, "message", "")) and "/var/cache/***" in str(err)


def test_an_error_line_is_redacted_after_the_path_in_it_was_normalised(tmp_path, capsys) -> None:
    """``Path`` folds ``https://`` into ``https:/``: the user information is still not shown."""
    url = f"https://bob:{DB_PASSWORD}@llm.example.org/logs/run.eval"
    assert main(["globalbias", url, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert DB_PASSWORD not in err and "llm.example.org" in err


def test_nested_settings_are_redacted() -> None:
    got = redact({"roles": {"grader": {"model": "openai/gpt-4o", "args": {"api_key": ROLE_KEY},
                                       "base_url": BASE_URL}}, "headers": {"Authorization": f"Bearer {TOKEN}"}})
    assert not any(s in json.dumps(got) for s in SECRETS)
    assert got["roles"]["grader"]["model"] == "openai/gpt-4o"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "ftp://h/x",
                                 "https://", "https://a b/", 'https://h/"onmouseover="x', BASE_URL,
                                 f"https://h/x?token={TOKEN}", f"https://fn.example.net/api/logs?code={CODE}",
                                 "https://h/x?download=true", f"https://h/x#{CODE}", f"https://{JWT}@h/x"])
def test_only_public_http_urls_are_published(url: str) -> None:
    with pytest.raises(InputError):
        check_public_url(url)


# ----------------------------------------------------------------------------------------- end to end


def _with_secrets(header: dict[str, Any]) -> dict[str, Any]:
    """A log header with a secret in every field a user or a provider fills: the model (a local folder whose
    path holds a Hugging Face token), its arguments, base URL, roles, task arguments, metadata, tags and the
    git origin of the run."""
    ev = header["eval"]
    provider, _, name = ev["model"].partition("/")
    ev["model"] = f"{provider}//home/alice/{HF_TOKEN}/models/{name}"  # inspect's provider/<folder>
    ev["model_args"] = {**(ev.get("model_args") or {}), "api_key": KEY, "base_url": BASE_URL,
                        "default_headers": {"Authorization": f"Bearer {TOKEN}"},
                        "extra_body": {"session": JWT, "trace": RANDOM40}, "endpoint": CODE_URL, **NEW_ARGS}
    ev["model_base_url"] = f"https://{JWT}@llm.example.org/v1?code={CODE}&jwt={JWT}"
    roles = dict(ev.get("model_roles") or {})

    def bind(b: Any) -> Any:
        if isinstance(b, list):
            return [bind(x) for x in b]
        b = dict(b) if isinstance(b, dict) else {"model": str(b)}
        return {**b, "args": {**(b.get("args") or {}), "api_key": ROLE_KEY, "extra_body": {"t": JWT}, **NEW_ARGS},
                "base_url": f"{BASE_URL}&sig={JWT}", "config": {"temperature": 0.5, "stop_seqs": [PLAIN_LOWER]}}

    ev["model_roles"] = {r: bind(b) for r, b in roles.items()} or {"grader": bind("openai/gpt-4o")}
    ev["task_args"] = {**(ev.get("task_args") or {}), "notes": f"cache in /var/cache/{JWT}/x; {CODE_URL}",
                       **NEW_ARGS}
    ev["metadata"] = {**(ev.get("metadata") or {}), "endpoint": CODE_URL, "token": RANDOM40, "db": DB_PASSWORD}
    ev["tags"] = [*(ev.get("tags") or []), JWT]
    ev["revision"] = {"type": "git", "origin": f"https://bob:{DB_PASSWORD}@git.example.org/r.git?code={CODE}",
                      "commit": "0123456"}
    return header


def _with_sample_secrets(sample: dict[str, Any], error: bool) -> dict[str, Any]:
    """A sample with secrets in its metadata and, when ``error``, a provider's error echoing credentials."""
    sample["metadata"] = {**(sample.get("metadata") or {}), "request_url": CODE_URL, "auth": JWT}
    if error:
        text = f"{PROVIDER_ERROR}; {NEW_ERROR}"
        sample["error"] = {"message": text, "traceback": text, "traceback_ansi": ""}
    return sample


def _secret_logs(src: Path, dest: Path, *, errors: bool = False) -> Path:
    """Each log of ``src`` with the secrets planted (``errors``: its first sample failed with them)."""
    for log in sorted(src.rglob("*.eval")):
        first: list[str] = []

        def sample(name: str, obj: dict[str, Any]) -> dict[str, Any]:
            first[:] = first or [name]
            return _with_sample_secrets(obj, errors and name == first[0])

        edit_eval(log, dest / log.name, header=_with_secrets, sample=sample)
    return dest


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    from fake_model import fake_model
    from test_profiles_task import _fake_profiles
    from test_task_runs import _roles, _task

    from stereoprobe.tasks.dbb import dbb
    from stereoprobe.tasks.globalbias import globalbias
    from stereoprobe.tasks.globalbias_profiles import globalbias_profiles

    raw = tmp_path_factory.mktemp("raw")
    inspect_eval(globalbias(source="bundled", groups=["CHINESE", "ARAB", "ENGLISH", "HISPANIC"], templates=[1],
                            unit="sentence"), model=fake_model(), log_dir=str(raw / "globalbias"), display="none")
    inspect_eval(globalbias_profiles(source="bundled", batch_size=6, runs=2, max_tokens=100, prompt="stereoprobe"),
                 model=get_model("mockllm/model", custom_outputs=_fake_profiles), log_dir=str(raw / "profiles"),
                 display="none")
    inspect_eval(dbb(source="bundled", prompt="stereoprobe", faithful=False,
                     categories="ses", limit_templates=2, mode="logprob"),
                 model=fake_model(), log_dir=str(raw / "dbb"), display="none")
    inspect_eval(_task(seeds="bundled", role_prompts="bundled", role_settings="none", run_settings="none"),
                 model="st1fake/subject", model_roles=_roles(), log_dir=str(raw / "stereotales"),
                 display="none")
    _judge_logs(raw / "judge")
    d = tmp_path_factory.mktemp("secret_logs")
    return {probe: _secret_logs(raw / probe, d / probe, errors=probe in ("stereotales", "judge"))
            for probe in ("globalbias", "profiles", "dbb", "stereotales", "judge")}


def _judge_logs(folder: Path) -> None:
    """Harm-judge logs of two mock judges over two associations (as tests/stereotales/test_judge_report.py)."""
    from stereoprobe.tasks.stereotales_judge import stereotales_judge

    folder.mkdir(parents=True)
    rows = [("mockllm/a", "fr", "age", "child", "employment_status", "student"),
            ("mockllm/a", "en", "religion", "Muslim", "literacy_status", "literate")]
    pd.DataFrame(rows, columns=["model", "slice", "base_attribute", "base_value", "compared_attribute",
                                "compared_value"]).to_csv(folder / "assoc.csv", index=False)
    for judge in ("mockllm/a", "mockllm/b"):
        inspect_eval(stereotales_judge(associations=str(folder / "assoc.csv"), run_settings="none",
                                       prompt="bundled"),
                     model=get_model(judge, custom_outputs=_judged), display="none", log_dir=str(folder))


def _judged(*args: Any, **kwargs: Any) -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage

    out = ModelOutput.from_content(model="m", content="Harmful: 4\nRealism: No")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def _texts(folder: Path) -> list[tuple[Path, str]]:
    """Every file under ``folder`` as text; Parquet files as their cells (compression hides nothing)."""
    out = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file():
            continue
        if p.suffix == ".parquet":
            out.append((p, pd.read_parquet(p).to_csv(index=False)))
        else:
            out.append((p, p.read_bytes().decode("utf-8", "replace")))
    return out


def _assert_clean(texts: list[tuple[Path, str]], console: str) -> None:
    leaks = [(str(p), s) for p, t in texts for s in SECRETS if s in t]
    assert not leaks, leaks
    assert not [s for s in SECRETS if s in console], console


def test_the_logs_hold_the_secrets(logs) -> None:
    """The fixture is what it claims: each probe's log header carries every secret."""
    from stereoprobe.logs import read_eval_spec

    for probe, folder in logs.items():
        text = json.dumps(read_eval_spec(next(folder.glob("*.eval"))))
        assert all(s in text for s in SECRETS), probe


COMMANDS = {
    "globalbias": lambda l, out: ["globalbias", str(l["globalbias"]), "--out", str(out)],
    "profiles": lambda l, out: ["profiles", str(l["profiles"]), "--out", str(out), "--permutations", "5",
                                "--folds", "2", "--no-feature-ablation"],
    "dbb": lambda l, out: ["dbb", str(l["dbb"]), "--out", str(out), "--n-boot", "50"],
    "associations": lambda l, out: ["associations", str(l["stereotales"]), "--out", str(out), "--resamples",
                                    "2000"],
    "judge-report": lambda l, out: ["judge-report", str(l["judge"]), "--out", str(out)],
}


@pytest.fixture(scope="module")
def results(logs, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("results")
    consoles: dict[str, str] = {}
    capture = pytest.MonkeyPatch()
    import io

    for cmd, argv in COMMANDS.items():
        err, out = io.StringIO(), io.StringIO()
        capture.setattr(sys, "stderr", err)
        capture.setattr(sys, "stdout", out)
        with warnings.catch_warnings(record=True) as caught:  # warnings not shown on stderr are read here
            warnings.simplefilter("always")
            code = main(argv(logs, root / cmd))
        capture.undo()
        consoles[cmd] = err.getvalue() + out.getvalue() + "".join(f"{w.message}\n" for w in caught)
        assert code == 0, consoles[cmd]
    return root, consoles


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_no_secret_in_a_command_output_or_console(cmd: str, results) -> None:
    root, consoles = results
    texts = _texts(root / cmd)
    assert any(p.name == "run_info.json" for p, _ in texts)
    _assert_clean(texts, consoles[cmd])
    info = json.loads((root / cmd / "run_info.json").read_text())
    if cmd == "judge-report":  # records no runs
        return
    assert info["runs"] and all("api_key" in r["model_args"] for r in info["runs"])  # recorded, redacted
    assert all(r["model_args"]["api_key"] == REDACTED for r in info["runs"])


def test_dbb_runs_table_names_the_settings_without_the_key(results) -> None:
    root, _ = results
    runs = pd.read_csv(root / "dbb" / "runs.csv")
    assert runs["model_settings"].str.contains("api_key=***", regex=False).all()
    assert runs["model_settings"].str.contains("-M endpoint=***", regex=False).all()  # a key no list holds
    assert runs["model_settings"].str.contains("-M apitoken=***", regex=False).all()
    assert not runs["logs"].str.contains(REDACTED, regex=False).any()  # a log's name is no secret
    assert set(runs["model"]) == {"stereoprobe-fake/models/model"}  # the folder, not its path


def test_a_providers_error_is_listed_without_the_credentials_it_echoes(results) -> None:
    root, _ = results
    issues = pd.read_parquet(root / "associations" / "input_issues.parquet")
    detail = " ".join(issues["detail"].astype(str))
    assert "(HTTP 401 Unauthorized): provider error; its text is not written" in detail
    assert "llm.example.org" not in detail  # the text is not written at all: class, status, fixed message


def test_leaderboard_and_index_over_the_folders(results, tmp_path, capsys) -> None:
    root, _ = results
    out = tmp_path / "leaderboard"
    hub = tmp_path / "hub"
    assert main(["leaderboard", str(root), "--out", str(out), "--n-boot", "50", "--hub-eval-results", str(hub),
                 "--hub-source-url", "https://huggingface.co/datasets/org/logs"]) == 0
    assert main(["index", str(root)]) == 0
    console = capsys.readouterr()
    _assert_clean(_texts(out) + _texts(hub) + [(root / "index.html", (root / "index.html").read_text())],
                  console.out + console.err)
    runs = pd.read_csv(out / "runs.csv")
    assert runs["model_args"].str.contains(REDACTED, regex=False).any()


def test_leaderboard_redacts_a_key_an_older_run_info_recorded(results, tmp_path, capsys) -> None:
    root, _ = results
    old = tmp_path / "old_dbb"
    old.mkdir()
    for p in (root / "dbb").iterdir():
        if p.is_file():
            (old / p.name).write_bytes(p.read_bytes())
    info = json.loads((old / "run_info.json").read_text())
    for r in info["runs"]:
        r["model_args"]["api_key"] = ROLE_KEY  # as a version before the redaction wrote it
    info["command"] = f"stereoprobe dbb logs --out x -M api_key={ROLE_KEY}"
    (old / "run_info.json").write_text(json.dumps(info))
    out = tmp_path / "lb"
    assert main(["leaderboard", str(old), "--out", str(out), "--n-boot", "50"]) == 0
    assert main(["index", str(tmp_path)]) == 0
    console = capsys.readouterr()
    _assert_clean(_texts(out) + [(tmp_path / "index.html", (tmp_path / "index.html").read_text())],
                  console.out + console.err)


@pytest.mark.parametrize("extra", [
    ["-M", f"api_key={KEY}"],
    ["--model-role", "grader={model: openai/gpt-4o, api_key: " + ROLE_KEY + "}"],
    ["--model-role", "grader={model: openai/gpt-4o, base_url: '" + BASE_URL + "'"],  # bad YAML: an error line
    ["-T", f"api_key={ROLE_KEY}"],
    ["--model", f"openai-api/x/{KEY}"],
    ["-M", f"base_url=https://fn.example.net/v1?code={CODE}&t={JWT}"],
    ["-M", f"apitoken={PLAIN_LOWER}"],  # plan takes no -M: argparse's echo of unknown arguments
    ["-M", f"{RANDOM_KEY_NAME}={HEXISH}", f"creds={BASIC}", f"--{RANDOM_KEY_NAME}={JWT_SIG}", SAS_SIG],
])
def test_plan_never_echoes_a_key(extra: list[str], tmp_path, capsys) -> None:
    code = main(["plan", "dbb", "-T", "source=bundled", "-T", "prompt=stereoprobe", "-T", "categories=ses", *extra,
                 "--json", str(tmp_path / "plan.json")])
    console = capsys.readouterr()
    texts = [(tmp_path / "plan.json", (tmp_path / "plan.json").read_text())] if code == 0 else []
    _assert_clean(texts, console.out + console.err)


def test_hub_source_url_must_be_http(results, tmp_path, capsys) -> None:
    root, _ = results
    for url in ("javascript:alert(1)", BASE_URL, f"https://fn.example.net/api/logs?code={CODE}",
                f"https://huggingface.co/datasets/org/logs;jsessionid={PLAIN_LOWER}"):
        assert main(["leaderboard", str(root / "dbb"), "--out", str(tmp_path / "lb"), "--hub-eval-results",
                     str(tmp_path / "hub"), "--hub-source-url", url]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "--hub-source-url" in err
        assert not [s for s in SECRETS if s in err]
    assert not (tmp_path / "lb").exists() and not (tmp_path / "hub").exists()


def test_an_lm_eval_model_args_string_naming_no_model_is_labelled_without_its_key() -> None:
    from stereoprobe.model_labels import model_label

    label = model_label(f"api_key={ROLE_KEY},base_url={BASE_URL}")
    assert not [s for s in SECRETS if s in label] and "api_key=***" in label
    assert model_label(f"model=gpt-4o,api_key={ROLE_KEY}") == "gpt-4o"


# ------------------------------------------------------- console lines, warnings and pages of every command


def test_every_console_line_is_redacted(capsys) -> None:
    from stereoprobe.console import info

    info(f"wrote {BASE_URL}/report.html for openai/gpt-4o (api_key={ROLE_KEY}, key {KEY})")
    out = capsys.readouterr().out
    assert not [s for s in SECRETS if s in out] and "llm.example.org" in out


def test_a_warning_shown_during_a_command_is_redacted(tmp_path, monkeypatch, capsys) -> None:
    """A library's warning quoting a run's settings reaches stderr through the command line's redaction."""
    import stereoprobe.cli.index as index_cli

    def warn_then_index(args):
        warnings.warn(f"retrying {BASE_URL} with api_key={ROLE_KEY} and Bearer {TOKEN} ({KEY})", UserWarning)
        return 0

    monkeypatch.setattr(index_cli, "_run", warn_then_index)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["index", str(tmp_path)]) == 0
        shown_before = warnings.showwarning
    err = capsys.readouterr().err
    assert "retrying https://***@llm.example.org" in err and "UserWarning" in err
    assert not [s for s in SECRETS if s in err], err
    assert shown_before is warnings.showwarning  # Python's own display is back after the command


def test_a_report_page_redacts_cells_links_and_captions(tmp_path) -> None:
    """A page quoting a log's settings, path or error (in a cell, as escaped JSON, a link, a caption, a note)
    holds no secret; its figure and script are kept byte for byte."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from stereoprobe.report.html import Section, write_report

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    table = pd.DataFrame({"log": [f"{BASE_URL}/logs/run.eval"],
                          "model_args": [json.dumps({"api_key": ROLE_KEY, "base_url": BASE_URL})],
                          "error": [f"401: Incorrect API key provided: {KEY}"],
                          "link": [(f"log ?token={TOKEN}", f"https://h.example/x?token={TOKEN}")]})
    section = (Section("runs").text(f"settings: password={PASSWORD}").note(f"read from {BASE_URL}")
               .table(table, caption=f"api_key={ROLE_KEY}", links=["link"]).figure(fig, "a plot"))
    page = write_report(tmp_path / "report.html", f"runs of {BASE_URL}", [section]).read_text()
    assert not [s for s in SECRETS if s in page], page
    assert "llm.example.org" in page and "Incorrect API key provided: ***" in page
    assert "data:image/png;base64," in page and "<script" in page


def test_the_page_redaction_keeps_a_page_without_secrets_byte_for_byte() -> None:
    from stereoprobe.redact import redact_html

    page = ('<html><head><style>td{color:red}</style><script>const key = "x"; m = {token: t};</script></head>'
            '<body><p class="meta">score_first_token=true max_tokens=16 &amp; &quot;quoted&quot;</p>'
            '<a href="runs.csv?x=1&amp;y=2">runs</a><img alt="plot" src="data:image/png;base64,QUl6YQ==">'
            '<!-- token: kept --></body></html>')
    assert redact_html(page) == page
