"""GlobalBias sentence templates: upstream's wording, read at run time, or stereoprobe's own.

``wording="upstream"`` (the default of every source but ``bundled``): the three templates of upstream's
``create_template`` in ``code/0_build_globalbias.py`` at the pinned commit (Siddique et al., EMNLP 2024;
groovychoons/GlobalBias), obtained like the data files by :func:`stereoprobe.upstream.fetch` (a local copy of
the repository given as ``source``, ``$STEREOPROBE_UPSTREAM_DIR``, the cache, or a checksummed download) and
read with ``ast``: the script is never imported or executed. Each branch ``template_number == t`` assigns the
template literal and fills it with ``template.format(name=row['firstname'], descriptor=row['partial_t'])``;
the column each field takes is read from that call, so the sentence is filled as upstream does.

``wording="stereoprobe"`` (the default of ``source="bundled"``, the project's own demo set): the project's own
sentences, ``datasets/globalbias/templates.yaml``; no download.

The encoder input of encoder-decoder scoring (fidelity row G5) is the sentence up to the descriptor, which is
upstream's ``create_input`` for template 1 and the same split for templates 2 and 3.
"""

from __future__ import annotations

import ast
import os
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from stereoprobe.paths import dataset_file
from stereoprobe.upstream import UpstreamDataError, fetch

UPSTREAM_KEY = "GlobalBias"
TEMPLATE_SCRIPT = "code/0_build_globalbias.py"
TEMPLATE_FUNCTION = "create_template"
WORDINGS = ("upstream", "stereoprobe")
OPTION = "-T template_wording=stereoprobe"
#: upstream's data columns -> the fields of a template here
COLUMN_FIELDS = {"firstname": "name", "partial_1": "partial_1", "partial_2": "partial_2", "partial_3": "partial_3"}
DESCRIPTOR_FIELDS = ("partial_1", "partial_2", "partial_3")


@dataclass(frozen=True)
class Template:
    sentence: str  # fields {name} and one of {partial_1}..{partial_3}
    encoder_input: str  # the sentence up to the descriptor


def resolve_wording(wording: str | None, source: str | os.PathLike[str]) -> str:
    """The template wording: ``wording``, or by default upstream's unless ``source`` is ``bundled``."""
    if wording is None:
        return "stereoprobe" if str(source) == "bundled" else "upstream"
    if wording not in WORDINGS:
        raise ValueError(f"unknown template_wording {wording!r}; use {' or '.join(WORDINGS)}")
    return wording


def _template(sentence: str) -> Template:
    fields = [f for _, f, _, _ in string.Formatter().parse(sentence) if f is not None]
    descriptor = [f for f in fields if f in DESCRIPTOR_FIELDS]
    if "name" not in fields or len(descriptor) != 1 or set(fields) - {"name", *DESCRIPTOR_FIELDS}:
        raise UpstreamDataError(f"template {sentence!r}: needs {{name}} and one descriptor field")
    return Template(sentence, sentence.split("{" + descriptor[0] + "}")[0])


@cache
def own_templates() -> dict[int, Template]:
    """stereoprobe's own wording (``datasets/globalbias/templates.yaml``)."""
    raw = yaml.safe_load(dataset_file("globalbias", "templates.yaml").read_text(encoding="utf-8"))
    return {int(k): _template(v["sentence"]) for k, v in raw["templates"].items()}


def _branch(node: ast.If) -> tuple[int, str] | None:
    """(t, sentence) of one ``if template_number == t:`` branch of ``create_template``, else None."""
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, int)):
        return None
    literal: str | None = None
    columns: dict[str, str] = {}
    for stmt in node.body:
        if (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)):
            literal = stmt.value.value
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
            for kw in stmt.value.keywords:
                if isinstance(kw.value, ast.Subscript) and isinstance(kw.value.slice, ast.Constant):
                    columns[str(kw.arg)] = str(kw.value.slice.value)
    if literal is None:
        return None
    out = []
    for text, field, _, _ in string.Formatter().parse(literal):
        out.append(text.replace("{", "{{").replace("}", "}}"))
        if field is not None:
            column = columns.get(field)
            if column not in COLUMN_FIELDS:
                raise UpstreamDataError(f"{TEMPLATE_FUNCTION}: field {{{field}}} takes no known column ({column!r})")
            out.append("{" + COLUMN_FIELDS[column] + "}")
    return test.comparators[0].value, "".join(out)


@cache
def parse_upstream_templates(path: Path) -> dict[int, Template]:
    """The templates of ``create_template`` in upstream's builder script ``path`` (parsed, never run)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as e:
        raise UpstreamDataError(f"{path}: not a readable Python file ({e})") from None
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == TEMPLATE_FUNCTION]
    found: dict[int, Template] = {}
    for node in ast.walk(funcs[0]) if funcs else ():
        branch = _branch(node) if isinstance(node, ast.If) else None
        if branch is not None:
            found[branch[0]] = _template(branch[1])
    if sorted(found) != [1, 2, 3]:
        raise UpstreamDataError(f"{path}: {TEMPLATE_FUNCTION} does not define templates 1, 2 and 3 "
                                f"(found {sorted(found)})")
    return found


def _script_path(source: str | os.PathLike[str], verify: bool) -> Path:
    """The pinned script: from ``source`` when it is a local copy holding it, else fetched (env, cache, download)."""
    local = None
    if str(source) not in ("upstream", "bundled"):
        root = Path(source)
        if (root / TEMPLATE_SCRIPT).is_file() or (root / UPSTREAM_KEY / TEMPLATE_SCRIPT).is_file():
            local = root
    return fetch(UPSTREAM_KEY, TEMPLATE_SCRIPT, local=local, verify=verify)


def template_set(wording: str | None = None, source: str | os.PathLike[str] = "bundled",
                 verify: bool = True) -> dict[int, Template]:
    """The three templates of ``wording`` (see the module docstring). Upstream's script unavailable offline:
    one line naming the option that uses stereoprobe's own wording."""
    if resolve_wording(wording, source) == "stereoprobe":
        return own_templates()
    try:
        return parse_upstream_templates(_script_path(source, verify))
    except UpstreamDataError as e:
        raise UpstreamDataError(f"{e} (the default sentence templates are upstream's {TEMPLATE_FUNCTION}; "
                                f"{OPTION} uses stereoprobe's own wording instead)") from None
