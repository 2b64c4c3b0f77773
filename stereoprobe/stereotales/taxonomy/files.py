"""Reading the taxonomy's data files: YAML without duplicate keys, prompt templates checked, errors naming
the file and field (:class:`TaxonomyError`)."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from stereoprobe.errors import InputError

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


class TaxonomyError(InputError):
    """A taxonomy (or a request against it) is invalid; the message names the file and the field."""


def bundled_dir() -> Path:
    """The folder of stereoprobe's own taxonomy data (``datasets/stereotales``)."""
    from stereoprobe.paths import dataset_file

    return dataset_file("stereotales")


_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available (several times faster)


class _UniqueKeyLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """SafeLoader that rejects duplicate mapping keys instead of silently keeping the last one."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            line = key_node.start_mark.line + 1
            raise TaxonomyError(f"{loader.name}: line {line}: duplicate key {key!r}")
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: str | Path) -> Any:
    """Read a YAML file, rejecting duplicate keys; errors name the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise TaxonomyError(f"{path}: cannot read ({e})") from e
    except UnicodeDecodeError as e:
        raise TaxonomyError(f"{path}: not UTF-8 text (byte {e.object[e.start:e.start + 1]!r} at position {e.start})") from e
    loader = _UniqueKeyLoader(text)
    loader.name = str(path)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as e:
        raise TaxonomyError(f"{path}: invalid YAML: {e}") from e
    finally:
        loader.dispose()

def _format_fields(template: str, where: str) -> set[str]:
    """Field names of a ``str.format`` template; positional, indexed or formatted fields are errors."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as e:
        raise TaxonomyError(f"{where}: not a valid template ({e}); write literal braces as {{{{ and }}}}") from e
    names: set[str] = set()
    for _, name, spec, conv in parsed:
        if name is None:
            continue
        if not name.isidentifier():
            raise TaxonomyError(f"{where}: placeholder {{{name}}} is not allowed (use named placeholders)")
        if spec or conv:
            raise TaxonomyError(f"{where}: placeholder {{{name}}} must not carry a format spec or conversion")
        names.add(name)
    return names


def check_format_template(template: Any, required: set[str], where: str) -> str:
    """Check a ``str.format`` template uses exactly the ``required`` placeholders."""
    if not isinstance(template, str) or not template.strip():
        raise TaxonomyError(f"{where}: must be a non-empty string")
    names = _format_fields(template, where)
    missing, unknown = required - names, names - required
    problems = []
    if missing:
        problems.append(f"missing placeholder(s) {', '.join('{' + n + '}' for n in sorted(missing))}")
    if unknown:
        problems.append(f"unknown placeholder(s) {', '.join('{' + n + '}' for n in sorted(unknown))}")
    if problems:
        raise TaxonomyError(
            f"{where}: {'; '.join(problems)} (expected exactly {', '.join('{' + n + '}' for n in sorted(required))})"
        )
    return template


def check_fill_template(template: Any, required: set[str], allowed: set[str], where: str) -> str:
    """Check a ``{{name}}`` template (plain substitution) has the required and only allowed placeholders."""
    if not isinstance(template, str) or not template.strip():
        raise TaxonomyError(f"{where}: must be a non-empty string")
    names = set(_PLACEHOLDER.findall(template))
    if required - names:
        raise TaxonomyError(f"{where}: missing placeholder(s) {', '.join('{{' + n + '}}' for n in sorted(required - names))}")
    if names - allowed:
        raise TaxonomyError(
            f"{where}: unknown placeholder(s) {', '.join('{{' + n + '}}' for n in sorted(names - allowed))}; "
            f"allowed: {', '.join('{{' + n + '}}' for n in sorted(allowed))}"
        )
    return template


def fill(template: str, values: Mapping[str, str]) -> str:
    """Single-pass substitution of ``{{name}}``: text inserted (a story) is never re-scanned."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template)

