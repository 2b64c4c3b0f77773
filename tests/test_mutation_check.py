"""The mutation check's own parts (``bench/mutation_check.py``): one flip is one byte, its table names every
default request path and only conformance tests that exist. The check itself runs the conformance tests
(minutes): ``python bench/mutation_check.py``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_mutation_check", ROOT / "bench" / "mutation_check.py")
assert _spec and _spec.loader
M = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = M  # dataclasses look their module up
_spec.loader.exec_module(M)

#: the default request paths of issue 39 (story ... builder), each must have a row
PATHS = {"story", "refusal", "extraction", "extraction format", "refusal format", "judge", "dbb sampled",
         "dbb logprob", "dbb-sg", "globalbias sentences", "globalbias profiles", "baselines", "builder"}


def _one_byte(a: str, b: str) -> bool:
    x, y = a.encode("utf-8"), b.encode("utf-8")
    return len(x) == len(y) and sum(p != q for p, q in zip(x, y)) == 1


def test_a_flip_changes_one_byte_where_asked() -> None:
    text = "Context: Zoë sat.\na) He left."
    assert M.flip_at(text, 0) == "Bontext: Zoë sat.\na) He left."
    assert _one_byte(text, M.flip_at(text, "mid")) and _one_byte(text, M.flip_at(text, -1))
    assert M.flip_at(text, ["a) ", 0]) == text.replace("a) He", "a) Ie")
    assert M.flip_at(text, ["Zo", 0]) == text.replace("Zoë sat", "Zoë!sat")  # ë is skipped: one byte only
    assert M.flip_at(text, ["absent", 0]) is None and M.flip_at("", "mid") is None


def test_a_schema_flip_changes_the_named_string() -> None:
    data = {"name": "refusal_detection", "properties": {"label": {"enum": ["refusal", "complied"]}}}
    assert M._flip_path(data, ["properties", "label", "enum", "-1"])
    assert data["properties"]["label"]["enum"] == ["refusal", "compmied"]
    assert not M._flip_path(data, ["properties", "nothing", "enum", "0"])


def test_the_table_covers_every_default_path_with_existing_conformance_tests() -> None:
    names = {r.name for r in M.ROWS}
    assert PATHS <= names, PATHS - names
    for row in M.ROWS:
        assert row.tests and (row.positions or row.schema_paths), row.name
        for node in row.tests:
            path, _, test = node.partition("::")
            assert path.startswith("tests/conformance/") and (ROOT / path).is_file(), node
            assert not test or f"def {test}(" in (ROOT / path).read_text(encoding="utf-8"), node
