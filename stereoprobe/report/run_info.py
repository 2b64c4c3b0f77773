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


def set_command_line(argv: Sequence[str] | None) -> None:
    """Record (or clear, with None) the command line of the running ``stereoprobe`` command."""
    _COMMAND.clear()
    if argv is not None:
        _COMMAND.append([str(a) for a in argv])


def command_line(command: str | None = None) -> str | None:
    """The running ``stereoprobe`` command line, shell-quoted; None outside the command line, or when
    ``command`` is given and the running one is another (e.g. ``command_line("associations")``).

    >>> set_command_line(["stereoprobe", "associations", "logs/my logs", "--note", "it's a demo"])
    >>> command_line("associations")
    "stereoprobe associations 'logs/my logs' --note 'it'\"'\"'s a demo'"
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
    return redact_text(shlex.join(argv))


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
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(redact(info), indent=2, default=str) + "\n", encoding="utf-8")
    return path


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
        "runs": [r for r in raw.get("runs") or [] if isinstance(r, dict)],
        "raw": raw,
    }
