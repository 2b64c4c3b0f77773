"""Edit a real inspect ``.eval`` log into a damaged copy for the bad-input tests: members dropped (an
interrupted run), the header or a sample's JSON changed (a malformed log). The copy keeps every other member
byte for byte; what is changed is what the test names."""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401  (inspect's zstd members)

HEADER = "header.json"
START = "_journal/start.json"


def sample_members(log: Path) -> list[str]:
    with zipfile.ZipFile(log) as z:
        return [n for n in z.namelist() if n.startswith("samples/")]


def read_member(log: Path, name: str) -> Any:
    with zipfile.ZipFile(log) as z:
        return json.loads(z.read(name))


def edit_eval(src: Path, dest: Path, *, drop: Callable[[str], bool] = lambda name: False,
              header: Callable[[Any], Any] | None = None, sample: Callable[[str, Any], Any] | None = None,
              interrupted: bool = False) -> Path:
    """Copy ``src`` to ``dest`` with the members ``drop(name)`` selects left out, ``header(obj)`` applied to
    the header (``header.json`` and ``_journal/start.json``; it returns the new JSON value) and
    ``sample(name, obj)`` to every sample member. ``interrupted``: no ``header.json`` (a run cut before its
    end: the spec is read from the journal, status "started")."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            name = info.filename
            if drop(name) or (interrupted and name == HEADER):
                continue
            data = zin.read(name)
            if header is not None and name in (HEADER, START):
                data = json.dumps(header(json.loads(data))).encode()
            elif sample is not None and name.startswith("samples/"):
                data = json.dumps(sample(name, json.loads(data))).encode()
            zout.writestr(name, data)
    return dest


def set_path(obj: Any, path: str, value: Any) -> Any:
    """``obj`` with the dotted ``path`` set to ``value`` (``"eval.task_args"``; ``""`` replaces the whole)."""
    if not path:
        return value
    *parents, last = path.split(".")
    cur = obj
    for key in parents:
        cur = cur[int(key)] if isinstance(cur, list) else cur[key]
    if isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value
    return obj
