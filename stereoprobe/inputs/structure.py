"""The structure of a sample the readers rely on, checked once at the input layer: a malformed sample is one
:class:`~stereoprobe.errors.InputError` naming the file, the sample and the field (never a traceback in a
probe's reader). The shape is inspect's ``EvalSample`` (``src/inspect_ai/log/_log.py`` of
github.com/UKGovernmentBEIS/inspect_ai): ``id`` an int or a string, ``epoch`` a positive int, ``metadata`` an
object, ``scores`` an object of ``Score`` objects whose ``value`` is never null, ``output`` an object."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError


def _type(v: Any) -> str:
    return "null" if v is None else {dict: "an object", list: "a list", str: "text", bool: "a boolean"}.get(
        type(v), f"a {type(v).__name__}")


def check_sample(path: Path, s: Any, *, string_ids: bool = False) -> None:
    """:class:`InputError` (one line: file, sample, field) when a sample dict lacks the structure the readers
    rely on. ``string_ids``: the task writes string ids (every stereoprobe task), so an integer id is an error."""
    if not isinstance(s, Mapping):
        raise InputError(f"{path}: a sample is {_type(s)}, not an object")
    sid = s.get("id")
    if isinstance(sid, bool) or not isinstance(sid, (str, int)) or (string_ids and not isinstance(sid, str)):
        need = "text" if string_ids else "text or an integer"
        raise InputError(f"{path}: sample id {sid!r} is {_type(sid)}, expected {need} (field 'id')")
    where = f"{path}: sample {sid!r}"
    epoch = s.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise InputError(f"{where}: field 'epoch' is {epoch!r} ({_type(epoch)}), expected a positive integer")
    for name in ("metadata", "output", "attachments"):
        if name in s and not isinstance(s[name], Mapping) and not (name != "metadata" and s[name] is None):
            raise InputError(f"{where} epoch {epoch}: field '{name}' is {_type(s[name])}, expected an object")
    scores = s.get("scores")
    if scores is None:
        return
    if not isinstance(scores, Mapping):
        raise InputError(f"{where} epoch {epoch}: field 'scores' is {_type(scores)}, expected an object")
    for name, score in scores.items():
        if not isinstance(score, Mapping):
            raise InputError(f"{where} epoch {epoch}: score {name!r} is {_type(score)}, expected an object")
        if score.get("value") is None:
            raise InputError(f"{where} epoch {epoch}: score {name!r} has no value (field 'value' is null)")
        meta = score.get("metadata")
        if meta is not None and not isinstance(meta, Mapping):
            raise InputError(f"{where} epoch {epoch}: score {name!r} field 'metadata' is {_type(meta)}, "
                             "expected an object")
