"""``run_info.json``: what a report folder holds, written by each probe's post-processing command.

``stereoprobe index DIR`` reads it to show, for each report, the probe, the models, the date and the settings.
Keys (all optional for a reader; extra keys are kept as written):

- ``probe``: ``stereotales``, ``dbb``, ``globalbias``, ``profiles``, ...
- ``created``: ISO-8601 UTC time of the run;
- ``models``: the models in the report's tables;
- ``settings``: the options of the run (command-line settings, task parameters) as a flat mapping;
- ``inputs``: the log files or folders read;
- ``stereoprobe_version``;
- ``command``: the ``stereoprobe`` command line that wrote the folder, shell-quoted (:func:`shlex.join`, so it
  can be pasted back into a shell), when it ran from the command line;
- ``runs``: one entry per run (task x model x settings) of the inspect logs among ``inputs``: ``task``,
  ``model``, ``model_args`` (``-M``), ``model_roles`` (``--model-role``) and ``generate_config`` as the logs'
  headers record them (:func:`stereoprobe.report.run_settings.log_run_settings`), so that two runs of one
  model are told apart by their settings, not their folder names.

StereoTales' older files name their settings ``config``; :func:`read_run_info` accepts both.
"""

from __future__ import annotations

import datetime as _dt
import json
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from stereoprobe.redact import redact, redact_text

RUN_INFO = "run_info.json"

_COMMAND: list[list[str]] = []  # the running command line (set by ``stereoprobe.cli.main``), at most one
_VERSION_NOTE: list[str] = []  # the accepted note on runs of different task versions (stereoprobe.cli._versions)


def set_version_note(note: str | None) -> None:
    """Record (or clear, with None) the note ``run_info.json`` keeps as ``version_note``: the running command
    compares runs of different task versions, accepted by the user (``--accept-versions``)."""
    _VERSION_NOTE.clear()
    if note:
        _VERSION_NOTE.append(note)


def version_note() -> str | None:
    """The accepted note recorded by :func:`set_version_note` (None when the runs share one version), for a
    command that writes its own ``run_info.json``."""
    return _VERSION_NOTE[0] if _VERSION_NOTE else None


def set_command_line(argv: Sequence[str] | None) -> None:
    """Record (or clear, with None) the command line of the running ``stereoprobe`` command."""
    _COMMAND.clear()
    if argv is not None:
        _COMMAND.append([str(a) for a in argv])


def command_line(command: str | None = None) -> str | None:
    """The running ``stereoprobe`` command line, shell-quoted; None outside the command line, or when
    ``command`` is given and the running one is another (e.g. ``command_line("associations")``).

    >>> set_command_line(["stereoprobe", "associations", "logs/my logs", "--note", "it's a demo"])
    >>> print(command_line("associations"))
    stereoprobe associations 'logs/my logs' --note 'it'"'"'s a demo'
    >>> command_line("dbb") is None
    True
    >>> set_command_line(None)
    """
    if not _COMMAND:
        return None
    argv = _COMMAND[0]
    words = [a for a in argv[1:] if not a.startswith("-")]
    if command is not None and (not words or words[0] != command):
        return None
    return safe_command(argv)


#: options whose next word is a setting from outside (``-M k=v``, ``-T k=v``, a role binding)
_SETTING_OPTIONS = frozenset({"-M", "-T", "--model-arg", "--model-args", "--task-arg", "--model-role", "-S",
                              "--solver-arg", "--hub-source-url", "--base-url", "--model-base-url"})


def safe_command(argv: Sequence[str] | str) -> str:
    """A command line as it may be written: each ``name=value`` word, URL and word after a setting option
    (``-M``, ``-T``, ``--model-role`` ...) through the one writer of outside input
    (:func:`stereoprobe.harmless.safe_arg`); other words (paths, option names) with credentials redacted.

    >>> safe_command(["stereoprobe", "plan", "dbb", "-M", "apitoken=x1", "-T", "mode=logprob", "--out", "a b"])
    "stereoprobe plan dbb -M 'apitoken=***' -T mode=logprob --out 'a b'"
    """
    from stereoprobe.harmless import safe_arg

    if isinstance(argv, str):
        try:
            argv = shlex.split(argv)
        except ValueError:
            return redact_text(argv)
    words = [str(a) for a in argv]
    out = [safe_arg(w) if "=" in w or "://" in w or (i and words[i - 1] in _SETTING_OPTIONS) else redact_text(w)
           for i, w in enumerate(words)]
    return shlex.join(out)


def write_run_info(
    out_dir: str | Path,
    probe: str,
    models: Iterable[str] = (),
    settings: dict[str, Any] | None = None,
    inputs: Iterable[str | Path] = (),
    runs: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> Path:
    """Write ``out_dir/run_info.json`` (merging into an existing one) and return its path. ``runs``: the run
    settings to record; None: those of the inspect logs among ``inputs`` (:func:`log_run_settings`). Every
    value passes :func:`stereoprobe.redact.redact`: no credential reaches the file."""
    from stereoprobe import __version__
    from stereoprobe.report.run_settings import log_run_settings

    inputs = [str(i) for i in inputs]

    path = Path(out_dir) / RUN_INFO
    info: dict[str, Any] = {}
    if path.is_file():
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = {}
    info.update(
        probe=probe,
        created=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        models=sorted({str(m) for m in models}),
        settings=dict(settings or {}),
        inputs=inputs,
        runs=log_run_settings(inputs) if runs is None else list(runs),
        stereoprobe_version=__version__,
    )
    info.update(extra)
    if "command" not in extra and command_line() is not None:
        info["command"] = command_line()
    if _VERSION_NOTE:
        info["version_note"] = _VERSION_NOTE[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(redact(info), indent=2, default=str) + "\n", encoding="utf-8")
    return path


def _safe_run(run: dict[str, Any]) -> dict[str, Any]:
    """A ``runs`` entry of a file (perhaps of an older version) with its settings through the one writer of
    outside input (:func:`stereoprobe.harmless.safe_settings`)."""
    from stereoprobe.harmless import safe_settings

    return {**run, **{k: safe_settings(run[k]) for k in ("model_args", "generate_config")
                      if isinstance(run.get(k), dict)}}


def read_run_info(folder: str | Path) -> dict[str, Any]:
    """The normalised ``run_info.json`` of ``folder``: ``probe``, ``created``, ``models``, ``settings``,
    ``inputs``, ``runs`` (``{}``/``None``/``[]`` where unknown); an unreadable file reads as empty. Credentials
    that a file of an older version recorded are redacted (:func:`stereoprobe.redact.redact`). A field of the
    wrong kind (``models`` a number, ``runs`` not a list) is an :class:`~stereoprobe.errors.InputError` naming
    the file and the field; JSON nested too deeply reads as unreadable."""
    from stereoprobe.errors import InputError

    path = Path(folder) / RUN_INFO
    raw: dict[str, Any] = {}
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            raw = redact(loaded) if isinstance(loaded, dict) else {}
        except (OSError, ValueError, RecursionError):
            raw = {}
    if isinstance(raw.get("command"), str):  # a file of an older version: the one writer's form
        raw["command"] = safe_command(raw["command"])
    settings = raw.get("settings", raw.get("config")) or {}
    models = raw.get("models") or []
    if isinstance(models, str):
        models = [models]
    for key, value, kinds in (("models", models, "a list of model names"), ("inputs", raw.get("inputs") or [],
                              "a list of paths"), ("runs", raw.get("runs") or [], "a list of runs")):
        if not isinstance(value, list) or any(isinstance(v, (dict, list)) for v in value if key != "runs"):
            raise InputError(f"{path}: field {key!r} is {json.dumps(value)[:60]}, expected {kinds}")
    return {
        "probe": raw.get("probe"),
        "created": raw.get("created"),
        "models": [str(m) for m in models],
        "settings": settings if isinstance(settings, dict) else {"settings": settings},
        "inputs": raw.get("inputs") or [],
        "runs": [_safe_run(r) for r in raw.get("runs") or [] if isinstance(r, dict)],
        "raw": raw,
    }
