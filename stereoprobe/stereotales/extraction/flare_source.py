"""flare's refusal and extraction prompts, read from its own source files with ``ast`` (never imported or run).

Giskard-AI/flare keeps both prompts in ``src/flare/scorer/attribute_extraction/prompts.py``:
``REFUSAL_JUDGE_PROMPT_TEMPLATE`` is a string literal; ``ATTR_EXTRACTION_PROMPT_TEMPLATE`` is an f-string whose
attribute lines are built at import time from ``DemographicAttributes.model_json_schema()["properties"]``
(a pydantic model in ``src/flare/scorer/bias/schema.py``, named by the module's import).

This module evaluates the few top-level assignments of ``prompts.py`` with a small interpreter that knows only
literals, names, f-strings, ``+`` on strings, ``str.join`` over a generator, ``dict.items()``/``.keys()``,
subscripts and ``Model.model_json_schema()``; the schema is read from the model's ``Literal[...]`` field
annotations in definition order (pydantic's order for ``properties``; each field's ``enum`` in the Literal's
order, duplicates dropped as ``typing.Literal`` does). Anything else in the expressions read is one error line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from stereoprobe.upstream import UpstreamDataError

PROMPTS_PATH = "src/flare/scorer/attribute_extraction/prompts.py"
REFUSAL_NAME = "REFUSAL_JUDGE_PROMPT_TEMPLATE"
EXTRACTION_NAME = "ATTR_EXTRACTION_PROMPT_TEMPLATE"


class _Unsupported(Exception):
    """An expression outside the small language this reader evaluates."""


def parse(path: Path) -> ast.Module:
    """The parsed module at ``path``; one line when it cannot be read or parsed."""
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as e:
        raise UpstreamDataError(f"{path}: not a readable Python file ({e})") from None


def model_imports(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Names imported with ``from flare.x.y import Name [as Alias]`` -> (the file holding them,
    ``src/flare/x/y.py``, and the name there)."""
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "flare":
            for alias in node.names:
                out[alias.asname or alias.name] = ("src/" + node.module.replace(".", "/") + ".py", alias.name)
    return out


def literal_values(annotation: ast.expr) -> list[Any] | None:
    """The values of ``Literal[...]`` (one value or a tuple of constants), else None."""
    if not (isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name)
            and annotation.value.id == "Literal"):
        return None
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if not all(isinstance(i, ast.Constant) for i in items):
        return None
    return list(dict.fromkeys(i.value for i in items))  # type: ignore[attr-defined]


def json_schema_properties(path: Path, model: str) -> dict[str, dict[str, Any]]:
    """``model.model_json_schema()["properties"]`` as far as a model of ``Literal`` fields defines it: per field
    in definition order, ``{"enum": [...], "type": "string"}``. One line for any other kind of model body."""
    tree = parse(path)
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == model] or [None]
    if cls is None:
        raise UpstreamDataError(f"{path}: no class {model}")
    if [getattr(b, "id", None) for b in cls.bases] != ["BaseModel"]:
        raise UpstreamDataError(f"{path}: {model} does not derive from BaseModel alone; cannot read its schema")
    props: dict[str, dict[str, Any]] = {}
    for node in cls.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        values = literal_values(node.annotation) if isinstance(node, ast.AnnAssign) else None
        if values is None or not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name) \
                or node.value is not None:
            raise UpstreamDataError(f"{path}: {model} line {node.lineno}: not a plain Literal field; "
                                    "cannot read its schema")
        entry: dict[str, Any] = {"enum": values}
        if all(isinstance(v, str) for v in values):
            entry["type"] = "string"
        props[node.target.id] = entry
    return props


class _Evaluator:
    """Evaluates the top-level expressions of flare's prompts module (see the module's docstring)."""

    def __init__(self, env: Mapping[str, Any], schema: Callable[[str], dict[str, Any]]) -> None:
        self.env = dict(env)
        self.schema = schema

    def eval(self, node: ast.expr, local: Mapping[str, Any] | None = None) -> Any:
        scope = {**self.env, **(local or {})}
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in scope:
                raise _Unsupported(f"name {node.id!r} has no value this reader knows")
            value = scope[node.id]
            if isinstance(value, _Unsupported):
                raise value
            return value
        if isinstance(node, ast.JoinedStr):
            return "".join(self._part(v, scope) for v in node.values)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.eval(node.left, local), self.eval(node.right, local)
            if not (isinstance(left, str) and isinstance(right, str)):
                raise _Unsupported(f"line {node.lineno}: '+' on something other than two strings")
            return left + right
        if isinstance(node, ast.Subscript):
            return self._subscript(node, local)
        if isinstance(node, ast.Call):
            return self._call(node, local)
        raise _Unsupported(f"line {node.lineno}: {type(node).__name__} expression")

    def _part(self, node: ast.expr, scope: Mapping[str, Any]) -> str:
        if isinstance(node, ast.Constant):
            return str(node.value)
        if isinstance(node, ast.FormattedValue) and node.conversion == -1 and node.format_spec is None:
            value = self.eval(node.value, scope)
            if not isinstance(value, str):
                raise _Unsupported(f"line {node.lineno}: f-string field is not a string")
            return value
        raise _Unsupported(f"line {node.lineno}: f-string field with a conversion or format")

    def _subscript(self, node: ast.Subscript, local: Mapping[str, Any] | None) -> Any:
        container, key = self.eval(node.value, local), self.eval(node.slice, local)
        try:
            return container[key]
        except (KeyError, IndexError, TypeError) as e:
            raise _Unsupported(f"line {node.lineno}: subscript [{key!r}] fails ({e!r})") from None

    def _call(self, node: ast.Call, local: Mapping[str, Any] | None) -> Any:
        func = node.func
        if node.keywords or not isinstance(func, ast.Attribute):
            raise _Unsupported(f"line {node.lineno}: call other than a known method")
        if func.attr == "model_json_schema" and isinstance(func.value, ast.Name) and not node.args:
            return {"properties": self.schema(func.value.id)}
        if func.attr == "join" and len(node.args) == 1:
            sep = self.eval(func.value, local)
            parts = list(self._iterate(node.args[0], local))
            if not isinstance(sep, str) or not all(isinstance(p, str) for p in parts):
                raise _Unsupported(f"line {node.lineno}: join of something other than strings")
            return sep.join(parts)
        if func.attr in ("items", "keys") and not node.args:
            target = self.eval(func.value, local)
            if not isinstance(target, dict):
                raise _Unsupported(f"line {node.lineno}: .{func.attr}() of a non-dict")
            return list(target.items() if func.attr == "items" else target.keys())
        raise _Unsupported(f"line {node.lineno}: call of .{func.attr}()")

    def _iterate(self, node: ast.expr, local: Mapping[str, Any] | None) -> Iterable[Any]:
        if not isinstance(node, ast.GeneratorExp):
            return self.eval(node, local)
        [gen] = node.generators if len(node.generators) == 1 else [None]
        if gen is None or gen.ifs or gen.is_async:
            raise _Unsupported(f"line {node.lineno}: generator with several loops or a filter")
        out = []
        for item in self.eval(gen.iter, local):
            out.append(self.eval(node.elt, {**(local or {}), **_bind(gen.target, item, node.lineno)}))
        return out


def _bind(target: ast.expr, item: Any, lineno: int) -> dict[str, Any]:
    if isinstance(target, ast.Name):
        return {target.id: item}
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) \
            and isinstance(item, tuple) and len(item) == len(target.elts):
        return {e.id: v for e, v in zip(target.elts, item)}  # type: ignore[attr-defined]
    raise _Unsupported(f"line {lineno}: loop target this reader does not unpack")


def prompt_constants(prompts: Path, schema_file: Callable[[str], Path]) -> dict[str, str]:
    """The refusal and extraction templates of flare's ``prompts.py``, evaluated as Python would at import
    time; ``schema_file`` maps a module path (``src/flare/scorer/bias/schema.py``) to its local copy."""
    tree = parse(prompts)
    imports = model_imports(tree)

    def schema(model: str) -> dict[str, Any]:
        if model not in imports:
            raise _Unsupported(f"{model} is not imported from a flare module")
        module, name = imports[model]
        return json_schema_properties(schema_file(module), name)

    ev = _Evaluator({}, schema)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                ev.env[node.targets[0].id] = ev.eval(node.value)
            except _Unsupported as e:
                ev.env[node.targets[0].id] = e  # an error only once the name is read
    out: dict[str, str] = {}
    for name in (REFUSAL_NAME, EXTRACTION_NAME):
        value = ev.env.get(name)
        if isinstance(value, _Unsupported):
            raise UpstreamDataError(f"{prompts}: cannot read {name}: {value}")
        if not isinstance(value, str):
            raise UpstreamDataError(f"{prompts}: no top-level string assigned to {name}")
        out[name] = value
    return out


def evaluate(node: ast.expr, env: Mapping[str, Any], where: str) -> Any:
    """``node`` (an f-string, a name, ``+`` on strings...) evaluated by the same small interpreter with the
    names of ``env``; one line naming ``where`` for anything outside its language (the DBB builder reads
    upstream's f-strings with it: :mod:`stereoprobe.dbb.builder_upstream`)."""
    def no_schema(model: str) -> dict[str, Any]:
        raise _Unsupported(f"{model}.model_json_schema() outside flare's prompts module")

    try:
        return _Evaluator(env, no_schema).eval(node)
    except _Unsupported as e:
        raise UpstreamDataError(f"{where}: cannot read the expression: {e}") from None
