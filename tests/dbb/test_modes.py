"""Each DBB mode is one record (stereoprobe.dbb.contract): no module compares or keys a raw mode name."""

from __future__ import annotations

import ast

from stereoprobe.dbb import contract as C
from test_layers import module_sources


def raw_mode_uses(source: str) -> list[str]:
    """Comparisons with a mode name (``mode == "logprob"``, ``in ("sampled", ...)``) and dicts keyed by one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            consts = [c for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
            consts += [e for c in node.comparators if isinstance(c, (ast.Tuple, ast.List, ast.Set)) for e in c.elts
                       if isinstance(e, ast.Constant)]
            found += [f"line {node.lineno}: compares {c.value!r}" for c in consts if c.value in C.MODES]
        elif isinstance(node, ast.Dict):
            found += [f"line {node.lineno}: key {k.value!r}" for k in node.keys
                      if isinstance(k, ast.Constant) and k.value in C.MODES]
    return found


def test_the_check_finds_raw_mode_names() -> None:
    source = 'if mode == "logprob":\n    pass\nx = {"sampled": 10}\ny = m in ("a", "logprob")\nz = mode == C.LOGPROB.name\n'
    assert raw_mode_uses(source) == ["line 1: compares 'logprob'", "line 3: key 'sampled'",
                                     "line 4: compares 'logprob'"]


def test_no_raw_mode_name_outside_the_contract() -> None:
    found = {m: raw_mode_uses(src) for m, (src, _) in module_sources().items() if m != "stereoprobe.dbb.contract"}
    assert {m: f for m, f in found.items() if f} == {}


def test_the_records_hold_the_papers_protocol_and_the_one_logprob_request() -> None:
    assert C.mode(None) is C.SAMPLED and C.MODES == ("sampled", "logprob")
    # the paper (§5, Appendix A; §3.3): sampled answers per question, option A shown first, at least 10 answers
    assert (C.SAMPLED.unit, C.SAMPLED.option_order, C.SAMPLED.epochs, C.SAMPLED.min_epochs) == ("question", "fixed",
                                                                                                 10, 10)
    assert not C.SAMPLED.logprob and (C.LOGPROB.unit, C.LOGPROB.option_order, C.LOGPROB.epochs) == (
        "template", "balanced", 2)
    req = C.LOGPROB.request()
    assert (req.max_tokens, req.temperature, req.logprobs, req.top_logprobs) == (1, 0.0, True, 20)
    assert req is not C.LOGPROB.request()  # a fresh config each call: a caller's change reaches no other
