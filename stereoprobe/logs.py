"""The one reader of inspect eval logs for the post-processing steps (fast, streaming, plain dicts).

Why not inspect's ``read_eval_log_samples``: it reopens the ``.eval`` archive and validates the full
pydantic ``EvalSample`` for every sample (~20-40 ms a sample: hours for the 876,000 GlobalBias sentences
or 650,000 StereoTales stories). Here an ``.eval`` log is opened once and each sample member is parsed with
plain ``json`` (~100x faster); samples are handed out as dicts, one at a time, so any corpus fits in memory.

Format assumption: inspect's ``.eval`` zip layout of ``LOG_SCHEMA_VERSION`` 2 (inspect-ai 0.3.x; written by
``src/inspect_ai/log/_recorders/eval.py`` of github.com/UKGovernmentBEIS/inspect_ai):
``header.json`` (an ``EvalLog`` without samples; absent while a run is still writing or was interrupted, the
eval spec is then in ``_journal/start.json``) and one ``samples/<id>_epoch_<epoch>.json`` member per sample
(the JSON of an ``EvalSample``; a re-logged sample appends a second member of the same name and the LAST
one counts, as in inspect). Members are zstd- or deflate-compressed (``zipfile_zstd`` adds zstd to the
standard ``zipfile`` before Python 3.14). ``.json`` logs go through inspect's own reader. ``tests/test_logs.py``
checks the result against ``read_eval_log_samples`` on a log written by the installed inspect.

Sample dicts are the JSON of inspect's ``EvalSample`` without ``events``: e.g. ``s["id"]``, ``s["epoch"]``,
``s["metadata"]``, ``s["error"]`` (``None`` or ``{"message": ..., "traceback": ...}``),
``s["scores"][name]["value" | "metadata" | "explanation"]``, ``s["output"]["choices"][0]["message"]["content"]``
(a string or a list of content blocks; :func:`output_text` returns the text). Keys that inspect leaves at
their default may be absent: read them with ``.get``. Long strings may be ``attachment://<hash>``
references into ``s["attachments"]`` (the completion is not, in practice; :func:`output_text` resolves it).

Discovery of logs in folders and de-duplication across logs live in :mod:`stereoprobe.inputs` (the input layer
of every command); this module reads one log.
"""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError, reason
from stereoprobe.model_labels import model_label

HEADER_JSON = "header.json"
START_JSON = "_journal/start.json"
SAMPLES_DIR = "samples/"


class LogReadError(InputError):
    """An eval log that cannot be read (truncated or invalid archive, corrupt member, invalid JSON); the message
    names the file and the member."""


@dataclass(frozen=True)
class LogInfo:
    path: Path
    task: str
    task_version: Any
    model: str
    task_args: dict[str, Any]
    model_roles: dict[str, Any]  # role -> model name, or list of model names
    created: str
    status: str  # "started" for an .eval log still being written (or interrupted): no header.json yet
    model_args: dict[str, Any] = field(default_factory=dict)  # -M arguments
    generate_config: dict[str, Any] = field(default_factory=dict)  # inspect's GenerateConfig of the model
    dataset: dict[str, Any] = field(default_factory=dict)  # name, location, samples, sample_ids
    epochs: int = 1  # epochs the run asked for (``config.epochs``)


def _open_eval(path: Path) -> zipfile.ZipFile:
    if sys.version_info < (3, 14):
        import zipfile_zstd  # noqa: F401  (inspect's dependency: registers zstd, the .eval member compression)
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if isinstance(exc, OSError) and exc.errno is not None:  # EACCES, EIO ...: the file, not the archive
            raise LogReadError(f"{path}: cannot be read ({(exc.strerror or str(exc)).lower()})") from exc
        raise LogReadError(f"{path}: not a complete .eval archive ({exc}); is a run still writing it?") from exc


def _parse_json(data: bytes) -> Any:
    """``json.loads(data)``: the same objects, parsed by pydantic-core's JSON parser (inspect's dependency, about
    2x faster on a sample's 170 kB) where it accepts the text; what it refuses (a byte-order mark, a lone
    surrogate escape, nesting deeper than its limit, invalid JSON) goes to ``json``, which parses it or raises
    as before. Both parse numbers to the nearest double and keep the last of repeated keys."""
    if _from_json is not None:
        try:
            return _from_json(data)
        except ValueError:
            pass
    return json.loads(data)


try:
    from pydantic_core import from_json as _from_json
except ImportError:  # pragma: no cover - pydantic-core comes with inspect-ai
    _from_json = None


def _member_json(z: zipfile.ZipFile, path: Path, name: str) -> Any:
    try:
        with z.open(name) as f:
            data = f.read()
        return _parse_json(data)
    except ValueError as exc:  # json.JSONDecodeError, UnicodeDecodeError
        raise LogReadError(f"{path}: member {name} is not valid JSON ({exc})") from exc
    except RecursionError:
        raise LogReadError(f"{path}: member {name} is JSON nested too deeply to read (not an inspect sample)") from None
    except (zipfile.BadZipFile, EOFError, OSError) as exc:  # bad CRC, cut member
        raise LogReadError(f"{path}: member {name} cannot be read ({exc}); is the archive complete?") from exc
    except Exception as exc:  # zstandard.ZstdError (corrupt zstd frame) and other decompressor errors
        if type(exc).__module__.split(".")[0] not in ("zstandard", "zipfile_zstd", "zlib", "_zstd", "compression"):
            raise
        raise LogReadError(f"{path}: member {name} is corrupt ({reason(exc)})") from exc


def _roles(model_roles: Mapping[str, Any] | None) -> dict[str, Any]:
    def name(m: Any) -> Any:
        return m.get("model") if isinstance(m, Mapping) else getattr(m, "model", m)

    def public(m: Any) -> Any:  # a role's model in its public form, as the subject's (issue 34.2)
        return model_label(m) if isinstance(m, str) else m

    return {k: [public(name(m)) for m in v] if isinstance(v, list) else public(name(v))
            for k, v in (model_roles or {}).items()}


def _kind(v: Any) -> str:
    return "null" if v is None else {dict: "an object", list: "a list", str: "text", bool: "a boolean"}.get(
        type(v), f"a {type(v).__name__}")


def _field(path: Path, spec: Mapping[str, Any], name: str, types: tuple[type, ...], need: str,
           optional: bool = True) -> Any:
    """``spec[name]`` when it is of ``types`` (absent or null: ``None`` when ``optional``), else a
    :class:`LogReadError` naming the file and the field."""
    v = spec.get(name)
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, types):
        raise LogReadError(f"{path}: eval spec field '{name}' is {_kind(v)}, expected {need}")
    return v


def _info(path: Path, spec: Mapping[str, Any], status: str) -> LogInfo:
    """A :class:`LogInfo` from an eval spec, each field the readers rely on checked (one line per bad field)."""
    task = _field(path, spec, "task", (str,), "the task name", optional=False)
    model = _field(path, spec, "model", (str,), "the model name", optional=False)
    created = _field(path, spec, "created", (str,), "a time stamp", optional=False)
    task_args = _field(path, spec, "task_args", (Mapping,), "an object of task arguments") or {}
    roles = _field(path, spec, "model_roles", (Mapping,), "an object of role -> model") or {}
    for role, m in roles.items():
        if not isinstance(m, (Mapping, str, list)):
            raise LogReadError(f"{path}: eval spec field 'model_roles.{role}' is {_kind(m)}, expected a model")
    model_args = _field(path, spec, "model_args", (Mapping,), "an object of model arguments") or {}
    gen = _field(path, spec, "model_generate_config", (Mapping,), "an object of generation settings") or {}
    dataset = _field(path, spec, "dataset", (Mapping,), "an object (name, location, sample_ids)") or {}
    ids = dataset.get("sample_ids")
    if ids is not None and not isinstance(ids, list):
        raise LogReadError(f"{path}: eval spec field 'dataset.sample_ids' is {_kind(ids)}, expected a list")
    config = _field(path, spec, "config", (Mapping,), "an object (epochs, limit, ...)") or {}
    epochs = config.get("epochs")
    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
        raise LogReadError(f"{path}: eval spec field 'config.epochs' is {epochs!r} ({_kind(epochs)}), "
                           "expected a positive integer")
    version = spec.get("task_version", 0)
    if not isinstance(version, (str, int)) or isinstance(version, bool):
        raise LogReadError(f"{path}: eval spec field 'task_version' is {_kind(version)}, expected a version")
    return LogInfo(
        # the model's public form (a folder's name, never its path; no credential) before any table is built
        path=path, task=task.split("/")[-1], task_version=version, model=model_label(model), task_args=dict(task_args),
        model_roles=_roles(roles), created=created, status=status, model_args=dict(model_args),
        generate_config=dict(gen), dataset=dict(dataset), epochs=int(epochs or 1),
    )


def _eval_header(z: zipfile.ZipFile, path: Path) -> tuple[dict[str, Any], str]:
    """(eval spec as JSON, status) of an open .eval archive."""
    names = set(z.namelist())
    if HEADER_JSON in names:
        member = HEADER_JSON
    elif START_JSON in names:
        member = START_JSON
    else:
        raise LogReadError(f"{path}: not an inspect .eval log (neither {HEADER_JSON} nor {START_JSON})")
    head = _member_json(z, path, member)
    if not isinstance(head, Mapping):
        raise LogReadError(f"{path}: {member} is {_kind(head)}, not an object (not an inspect log?)")
    status = head.get("status", "started") if member == HEADER_JSON else "started"
    if not isinstance(head.get("eval"), Mapping):
        raise LogReadError(f"{path}: {member} has no 'eval' spec (not an inspect log?)")
    if not isinstance(status, str):
        raise LogReadError(f"{path}: {member} field 'status' is {_kind(status)}, expected text")
    return dict(head["eval"]), str(status)


def read_header(path: str | Path) -> LogInfo:
    """Task, model, task args, creation time and status of one log, without reading its samples.

    ``.eval``: ``header.json`` straight from the zip, or ``_journal/start.json`` for a log still being written
    or interrupted (status ``"started"``). ``.json``: inspect's ``read_eval_log(header_only=True)``.
    """
    p = Path(path)
    if p.suffix == ".eval":
        with _open_eval(p) as z:
            spec, status = _eval_header(z, p)
        return _info(p, spec, status)
    h = _read_json_log(p, header_only=True)
    return _info(p, h.eval.model_dump(mode="json"), h.status)


def read_eval_spec(path: str | Path) -> dict[str, Any]:
    """The eval spec of one log as plain JSON (inspect's ``EvalSpec``), without reading its samples: e.g.
    ``spec["config"]["epochs"]``, ``spec["dataset"]["sample_ids"]``, ``spec["metadata"]`` (the task's
    metadata), ``spec["task_args"]``. Keys that inspect leaves at their default may be absent: read them with
    ``.get``.

    ``.eval``: the ``eval`` object of ``header.json``, or of ``_journal/start.json`` for a log still being
    written or interrupted (the spec is written when the run starts, so it is the same). ``.json``: inspect's
    ``read_eval_log(header_only=True).eval``. A file that is no inspect log: :class:`LogReadError`.
    """
    p = Path(path)
    if p.suffix == ".eval":
        with _open_eval(p) as z:
            spec, status = _eval_header(z, p)
        _info(p, spec, status)
        return spec
    return _read_json_log(p, header_only=True).eval.model_dump(mode="json")


#: deepest JSON nesting a log may have: inspect's logs nest a few dozen levels; a 400 kB file of 80,000 nested
#: objects makes inspect's streaming header reader (ijson) exhaust memory, so deeper files are refused first
MAX_JSON_DEPTH = 512
_CHUNK = 1 << 24


def json_depth_exceeds(path: Path, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The byte offset where the nesting of the JSON text in ``path`` first exceeds ``limit`` levels, or None.
    One pass in 16 MB chunks (numpy): escaped characters are masked, quotes toggle the in-string state, and
    brackets outside strings give the depth."""
    import numpy as np

    depth, in_string, escaped, offset = 0, False, False, 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            b = np.frombuffer(chunk, dtype=np.uint8)
            live = np.ones(len(b), dtype=bool)  # characters not escaped by a backslash
            if escaped and len(b):
                live[0] = False
            bs = np.flatnonzero(b == 0x5C)
            escaped = False
            if bs.size:  # in a run of backslashes every other one escapes the next character
                starts = np.ones(bs.size, dtype=bool)
                starts[1:] = bs[1:] != bs[:-1] + 1
                run = np.cumsum(starts) - 1
                pos = np.arange(bs.size) - np.flatnonzero(starts)[run]
                if not live[0] and bs[0] == 0:
                    pos[run == 0] += 1  # the run began in the previous chunk's escape
                escaping = bs[pos % 2 == 0]
                escaped = bool(escaping.size and escaping[-1] == len(b) - 1)
                live[escaping[escaping + 1 < len(b)] + 1] = False
            opening, closing = (b == 0x5B) | (b == 0x7B), (b == 0x5D) | (b == 0x7D)
            sel = np.flatnonzero(((b == 0x22) | opening | closing) & live)  # structural characters only
            quote = b[sel] == 0x22
            inside = (np.cumsum(quote) - quote + int(in_string)) % 2 == 1  # within a string before this one
            step = np.where(inside | quote, 0, np.where(opening[sel], 1, -1))
            levels = depth + np.cumsum(step, dtype=np.int64)
            over = np.flatnonzero(levels > limit)
            if over.size:
                return offset + int(sel[over[0]])
            if sel.size:
                depth = int(levels[-1])
                in_string = bool(inside[-1]) != bool(quote[-1])
            offset += len(b)
    return None


def _read_json_log(p: Path, header_only: bool) -> Any:
    """inspect's reader for a ``.json`` log; anything but a valid log is a :class:`LogReadError` naming it."""
    from inspect_ai.log import read_eval_log

    if not p.is_file():
        raise LogReadError(f"{p}: no such log file")
    deep = json_depth_exceeds(p)
    if deep is not None:
        raise LogReadError(f"{p}: JSON nested deeper than {MAX_JSON_DEPTH} levels at byte {deep:,} (an inspect log "
                           "nests a few dozen); not a log this reader accepts")
    try:
        return read_eval_log(str(p), header_only=header_only)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:  # pydantic's ValidationError, bad JSON
        raise LogReadError(f"{p}: not a readable inspect log ({reason(exc, 160, fold=True)})") from exc


def _ordered(keys: Iterable[tuple[Any, int]], spec: Mapping[str, Any]) -> list[tuple[Any, int]]:
    """Sample keys in inspect's reading order (dataset ``sample_ids``, epochs inner), then any others."""
    keys = list(dict.fromkeys(keys))
    present = set(keys)
    ids = ((spec.get("dataset") or {}).get("sample_ids")) or []
    epochs = int((spec.get("config") or {}).get("epochs") or 1)
    first = [(i, e) for i in ids for e in range(1, epochs + 1) if (i, e) in present]
    listed = set(first)
    return first + [k for k in keys if k not in listed]


def _member_key(name: str) -> tuple[str, int] | None:
    stem = name[len(SAMPLES_DIR):-len(".json")]
    sid, sep, epoch = stem.rpartition("_epoch_")
    return (sid, int(epoch)) if sep and epoch.isdigit() else None


def iter_raw_samples(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the samples of one log as plain dicts (the JSON of inspect's ``EvalSample``, no ``events``).

    ``.eval``: one open of the zip and ``json.load`` of each ``samples/<id>_epoch_<n>.json`` member (a
    re-logged member resolves to its last copy, as in inspect), one sample in memory at a time. ``.json``:
    inspect's reader (the whole file is one JSON document, read once) + ``model_dump(mode="json")``.
    Order: as ``read_eval_log_samples`` (dataset sample ids, epochs inner), then samples the header does not
    list. Raises :class:`LogReadError` (naming the file) for a truncated or invalid archive or member.
    """
    p = Path(path)
    if p.suffix == ".eval":
        with _open_eval(p) as z:
            spec, status = _eval_header(z, p)
            _info(p, spec, status)  # the fields read below are checked
            members: dict[str, str] = {}  # "<id>_epoch_<n>" key -> member name
            keyed: list[tuple[str, int]] = []
            for name in dict.fromkeys(z.namelist()):
                if name.startswith(SAMPLES_DIR) and name.endswith(".json"):
                    k = _member_key(name)
                    k = k if k is not None else (name, 0)
                    members.setdefault(f"{k[0]}_epoch_{k[1]}", name)
                    keyed.append(k)
            ids = [str(i) for i in ((spec.get("dataset") or {}).get("sample_ids") or [])]  # as in member names
            for sid, epoch in _ordered(keyed, {**spec, "dataset": {"sample_ids": ids}}):
                raw = _member_json(z, p, members[f"{sid}_epoch_{epoch}"])
                if not isinstance(raw, dict):
                    raise LogReadError(f"{p}: member {members[f'{sid}_epoch_{epoch}']} is not a sample object")
                raw.pop("events", None)
                yield raw
        return
    log = _read_json_log(p, header_only=False)
    by_key = {(s.id, s.epoch): s for s in (log.samples or [])}
    spec = log.eval.model_dump(mode="json")
    for key in _ordered(by_key, spec):
        yield by_key[key].model_dump(mode="json", exclude={"events"})


def output_text(sample: Mapping[str, Any]) -> str | None:
    """The completion of a sample dict (``EvalSample.output.completion``; else the text of the first choice),
    ``attachment://`` references resolved; ``None`` when the sample has no output."""
    out = sample.get("output") or {}
    text = out.get("completion")
    if text is None:
        choices = out.get("choices") or []
        if not choices:
            return None
        content = (choices[0].get("message") or {}).get("content")
        if isinstance(content, list):
            content = "".join(c.get("text", "") for c in content if isinstance(c, Mapping) and c.get("type") == "text")
        text = "" if content is None else content
    text = str(text)
    if text.startswith("attachment://"):
        text = (sample.get("attachments") or {}).get(text[len("attachment://"):], text)
    return text


def error_message(sample: Mapping[str, Any]) -> str | None:
    """``None`` for a sample without error, else its message (``EvalSample.error.message``) as the one writer of
    outside input writes it (:func:`stereoprobe.harmless.safe_error`: class, HTTP status, fixed text)."""
    err = sample.get("error")
    if err is None:
        return None
    from stereoprobe.harmless import safe_error  # a provider's text may echo a key: class and status only

    return safe_error(str(err.get("message", err) if isinstance(err, Mapping) else err))
